/**
 * `cordage init [DIR]`: what it writes, where, and that it never overwrites. The scaffold's own test runs
 * here from the templates folder (in the repository, `cordage` is this package), so a change to the
 * kernel that breaks the scaffold fails here, without packing; test/package-init.test.ts runs it from an
 * installed tarball.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { Commands, parse } from '../core/cli/args.ts'
import { nextSteps, packageName, scaffold, TemplateFiles, TemplatesDir, writeAll } from '../core/cli/init.ts'
import { CordageError } from '../core/contracts/errors.ts'
import { tempDir } from './temp.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')

function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

function listed(dir: string, from = ''): string[] {
  return readdirSync(join(dir, from), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listed(dir, join(from, e.name)) : [join(from, e.name)]))
    .sort()
}

const Expected = [
  '.gitignore',
  'README.md',
  'package.json',
  'plugins/bookings/README.md',
  'plugins/bookings/index.ts',
  'plugins/bookings/manifest.ts',
  'plugins/bookings/tools.ts',
  'plugins/bookings/verifier.ts',
  'presets/default.yml',
  'test/bookings.test.ts',
]

describe('cordage init', () => {
  it('writes the project into DIR, created if missing, named after it', () => {
    const cwd = tempDir('cordage-init-')
    const result = cordage(['init', 'Room Desk'], cwd)
    assert.equal(result.code, 0, result.stderr)
    assert.deepEqual(listed(join(cwd, 'Room Desk')), Expected)
    assert.match(result.stdout, /created 10 files in Room Desk/)
    // cordage is not on the npm registry: a bare `npm install` would fail, the tarball is named instead.
    assert.match(result.stdout, /cd Room Desk\n {2}npm install \/path\/to\/cordage-0\.1\.0\.tgz +# cordage is not on the npm registry yet/)
    assert.doesNotMatch(result.stdout, /^ {2}npm install *$/m)
    const pkg = JSON.parse(readFileSync(join(cwd, 'Room Desk/package.json'), 'utf8'))
    const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    assert.equal(pkg.name, 'room-desk')
    assert.equal(pkg.dependencies.cordage, `^${own.version}`)
    assert.equal(pkg.dependencies.zod, own.dependencies.zod)
    assert.equal(pkg.scripts.test, 'node --import tsx --test test/*.test.ts')
    assert.deepEqual(pkg.allowScripts, { 'better-sqlite3': true, esbuild: true })
    assert.equal(
      readFileSync(join(cwd, 'Room Desk/presets/default.yml'), 'utf8'),
      readFileSync(join(TemplatesDir, 'presets/default.yml'), 'utf8'),
    )
  })

  it('writes into the working directory without DIR, and into an empty existing folder', () => {
    const cwd = tempDir('cordage-init-')
    const here = cordage(['init'], cwd)
    assert.equal(here.code, 0, here.stderr)
    assert.deepEqual(listed(cwd), Expected)
    assert.doesNotMatch(here.stdout, /\bcd /)
    const empty = join(cwd, 'empty')
    mkdirSync(empty)
    assert.equal(cordage(['init', empty], cwd).code, 0)
    assert.deepEqual(listed(empty), Expected)
  })

  it('refuses to overwrite: lists every file in the way, exits 2, and writes nothing', () => {
    const cwd = tempDir('cordage-init-')
    mkdirSync(join(cwd, 'presets'))
    writeFileSync(join(cwd, 'presets/default.yml'), 'mine\n')
    writeFileSync(join(cwd, 'package.json'), '{"name":"mine"}\n')
    const result = cordage(['init', '.'], cwd)
    assert.equal(result.code, 2)
    assert.match(result.stderr, /2 file\(s\) exist and would be overwritten: package\.json, presets\/default\.yml; nothing was written/)
    assert.deepEqual(listed(cwd), ['package.json', 'presets/default.yml'])
    assert.equal(readFileSync(join(cwd, 'presets/default.yml'), 'utf8'), 'mine\n')
    // A project made once is not made again over itself.
    const twice = tempDir('cordage-init-')
    assert.equal(cordage(['init', 'app'], twice).code, 0)
    rmSync(join(twice, 'app/README.md'))
    const again = cordage(['init', 'app'], twice)
    assert.equal(again.code, 2)
    assert.match(again.stderr, /9 file\(s\) exist/)
    assert.equal(existsSync(join(twice, 'app/README.md')), false)
  })

  it('refuses a DIR that is a file, and more than one DIR', () => {
    const cwd = tempDir('cordage-init-')
    writeFileSync(join(cwd, 'taken'), '')
    const file = cordage(['init', 'taken'], cwd)
    assert.equal(file.code, 2)
    assert.match(file.stderr, /taken is a file, not a folder/)
    const two = cordage(['init', 'a', 'b'], cwd)
    assert.equal(two.code, 2)
    assert.match(two.stderr, /"init" takes \[DIR\], got "a" "b"/)
    assert.deepEqual(readdirSync(cwd), ['taken'])
  })

  it('refuses a symbolic link among the paths inside DIR, even a dangling one, and writes nothing', () => {
    const cwd = tempDir('cordage-init-')
    const elsewhere = join(cwd, 'elsewhere')
    mkdirSync(elsewhere)
    mkdirSync(join(cwd, 'app'))
    symlinkSync(elsewhere, join(cwd, 'app/plugins'))
    const through = cordage(['init', 'app'], cwd)
    assert.equal(through.code, 2, through.stderr)
    assert.match(through.stderr, /^error \[invalid_input\]: cordage init app: plugins is a symbolic link; .*nothing was written/m)
    assert.deepEqual(readdirSync(elsewhere), [])
    assert.deepEqual(readdirSync(join(cwd, 'app')), ['plugins'])

    mkdirSync(join(cwd, 'dangling'))
    symlinkSync(join(cwd, 'missing.md'), join(cwd, 'dangling/README.md'))
    const dangling = cordage(['init', 'dangling'], cwd)
    assert.equal(dangling.code, 2, dangling.stderr)
    assert.match(dangling.stderr, /README\.md is a symbolic link/)
    assert.doesNotMatch(dangling.stderr, /internal error|EEXIST/)
    assert.deepEqual(readdirSync(join(cwd, 'dangling')), ['README.md'])
    assert.equal(existsSync(join(cwd, 'missing.md')), false)
  })

  it('takes back what it wrote when a write fails, and says what failed', () => {
    const target = join(tempDir('cordage-init-'), 'app')
    mkdirSync(target)
    const files = scaffold(target)
    let calls = 0
    const failOnFourth = (file: string, text: string) => {
      if (++calls === 4) throw Object.assign(new Error(`ENOSPC: no space left on device, open '${file}'`), { code: 'ENOSPC', path: file })
      writeFileSync(file, text, { flag: 'wx' })
    }
    assert.throws(
      () => writeAll(target, files, 'app', failOnFourth),
      (error: unknown) =>
        CordageError.is(error) &&
        error.code === 'invalid_input' &&
        /could not write plugins\/bookings\/manifest\.ts \(ENOSPC.*the 3 file\(s\) written before it were removed/.test(error.message),
    )
    assert.equal(calls, 4)
    // DIR was there before: it stays, empty; the folders init made are gone.
    assert.deepEqual(readdirSync(target), [])
  })

  it('copies only its fixed list of templates: a stray database, .env or node_modules never ships', () => {
    const copy = join(tempDir('cordage-templates-'), 'init')
    cpSync(TemplatesDir, copy, { recursive: true })
    mkdirSync(join(copy, '.cordage'))
    writeFileSync(join(copy, '.cordage/cordage.db'), 'runs')
    writeFileSync(join(copy, '.env'), 'OPENAI_API_KEY=sk-secret')
    mkdirSync(join(copy, 'node_modules/x'), { recursive: true })
    writeFileSync(join(copy, 'node_modules/x/index.js'), '')
    writeFileSync(join(copy, 'plugins/bookings/notes.txt'), 'draft')
    const files = scaffold(join(tempDir(), 'app'), copy)
    assert.deepEqual([...files.keys()].sort(), Expected)
    assert.deepEqual([...TemplateFiles, 'package.json', '.gitignore'].sort(), Expected)
    // A template missing from the installation is an error, not a project without it.
    rmSync(join(copy, 'presets/default.yml'))
    assert.throws(() => scaffold(join(tempDir(), 'app'), copy), /the template presets\/default\.yml is missing/)
  })

  it('takes --json: the result as one object, errors as JSON lines; says what it takes for others', () => {
    const cwd = tempDir('cordage-init-')
    const ok = cordage(['init', 'app', '--json'], cwd)
    assert.equal(ok.code, 0, ok.stderr)
    const result = JSON.parse(ok.stdout)
    assert.equal(result.dir, join(cwd, 'app'))
    assert.deepEqual([...result.files].sort(), Expected)
    assert.equal(result.next[0], 'cd app')
    const again = cordage(['init', 'app', '--json'], cwd)
    assert.equal(again.code, 2)
    assert.equal(JSON.parse(again.stderr.trim()).error.code, 'invalid_input')
    const force = cordage(['init', 'app', '--force'], cwd)
    assert.equal(force.code, 2)
    assert.match(force.stderr, /Unknown option '--force'; "init" takes: --json$/m)
    // A command without flags says so, rather than an empty list.
    Commands.push({ name: 'bare', usage: 'cordage bare', summary: 'x', positionals: [], flags: {} })
    try {
      assert.throws(() => parse(['bare', '--json']), /Unknown option '--json'; "bare" takes no options$/)
    } finally {
      Commands.pop()
    }
  })

  it('names the tarball an installed cordage came from, and the parent folder node resolves it from', () => {
    const home = tempDir('cordage-home-')
    writeFileSync(join(home, 'package.json'), JSON.stringify({ dependencies: { cordage: 'file:cordage-0.1.0.tgz' } }))
    writeFileSync(join(home, 'cordage-0.1.0.tgz'), '')
    const root = join(home, 'node_modules/cordage')
    mkdirSync(root, { recursive: true })
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'cordage', version: '0.1.0' }))
    const inside = nextSteps(join(home, 'agents'), 'agents', root)
    assert.deepEqual(
      inside.steps.map(([command]) => command),
      ['cd agents', 'npm install ../cordage-0.1.0.tgz', 'npm test', 'npx cordage run --preset presets/default.yml'],
    )
    assert.match(inside.note ?? '', new RegExp(`node also resolves cordage from ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    // Relative to the new project, where npm install runs.
    const elsewhere = join(tempDir(), 'agents')
    const outside = nextSteps(elsewhere, '.', root)
    const [, path] = outside.steps[0][0].split(' install ')
    assert.equal(resolve(elsewhere, path), join(home, 'cordage-0.1.0.tgz'))
    assert.equal(outside.note, undefined)
    // Installed without a tarball it can find: the placeholder, no invented registry.
    rmSync(join(home, 'cordage-0.1.0.tgz'))
    assert.deepEqual(nextSteps(join(home, 'agents'), '.', root).steps[0], [
      'npm install /path/to/cordage-0.1.0.tgz',
      'cordage is not on the npm registry yet: its tarball',
    ])
  })

  it('names the package after the folder, as npm accepts names', () => {
    assert.equal(packageName('My Agents!'), 'my-agents')
    assert.equal(packageName('.hidden'), 'hidden')
    assert.equal(packageName('...'), 'my-agents')
  })

  it("the scaffold's tests pass, run from the templates on this repository's cordage", () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', 'test/bookings.test.ts'], {
      cwd: TemplatesDir,
      encoding: 'utf8',
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, NODE_OPTIONS: '' },
    })
    assert.equal(result.status, 0, result.stdout + result.stderr)
    assert.match(result.stdout, /^# pass 4$/m)
    assert.match(result.stdout, /^# fail 0$/m)
  })
})
