/**
 * `cordage init [DIR]`: what it writes, where, and that it never overwrites. The scaffold's own test runs
 * here from the templates folder (in the repository, `cordage` is this package), so a change to the
 * kernel that breaks the scaffold fails here, without packing; test/package-init.test.ts runs it from an
 * installed tarball.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { packageName, TemplatesDir } from '../core/cli/init.ts'
import { tempDir } from './helpers.ts'

const root = resolve(import.meta.dirname, '..')
const bin = join(root, 'core/cli/bin.js')

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
    assert.match(result.stdout, /cd Room Desk\n {2}npm install/)
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
    assert.match(result.stdout, /^# pass 3$/m)
    assert.match(result.stdout, /^# fail 0$/m)
  })
})
