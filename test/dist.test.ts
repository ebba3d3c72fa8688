/**
 * The compiled package (`npm run build` → dist/): the executable and the exports are JavaScript that
 * runs without tsx. Proved in a copy of dist/ whose node_modules holds every dependency except tsx, so
 * nothing there can load TypeScript; a plugin written in TypeScript then fails with a message that says
 * how to fix it, and loads in dist/ inside the repository, where tsx is installed.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { copyAssets, packageFiles } from '../build/assets.ts'
import { KernelVersion } from '../core/kernel/version.ts'
import { buildPackage, suiteDist } from './bin.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')
/** Inside the repository (its node_modules has tsx): the suite's build (.test-dist/), else dist/, built below. */
const dist = suiteDist ?? join(root, 'dist')

function cordage(bin: string, args: string[], cwd: string) {
  const env = { ...process.env, NO_COLOR: '1', NODE_OPTIONS: '' }
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** A copy of dist/ beside a node_modules that links every installed package but tsx. */
function withoutTsx(): string {
  const pkg = join(tempDir('cordage-dist-'), 'cordage')
  cpSync(dist, pkg, { recursive: true })
  mkdirSync(join(pkg, 'node_modules'))
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name === 'tsx' || name.startsWith('.')) continue
    symlinkSync(join(root, 'node_modules', name), join(pkg, 'node_modules', name))
  }
  cpSync(join(root, 'docs/examples/returns-desk'), join(pkg, 'examples/returns-desk'), { recursive: true })
  cpSync(join(root, 'docs/examples/returns-desk.yml'), join(pkg, 'examples/returns-desk.yml'))
  return pkg
}

describe('the compiled package (dist/)', () => {
  let pkg: string
  before(() => {
    // test/run.ts built this checkout with the same script already (test/bin.ts); run alone, the file builds it.
    if (!suiteDist) buildPackage(dist)
    pkg = withoutTsx()
  })

  it('points bin and every export at JavaScript that the build wrote, with type declarations', () => {
    const manifest = JSON.parse(readFileSync(join(dist, 'package.json'), 'utf8'))
    assert.equal(manifest.type, 'module')
    for (const [key, target] of Object.entries(manifest.exports as Record<string, unknown>)) {
      if (key === './package.json') continue
      const { types, default: file } = target as { types: string; default: string }
      assert.match(file, /\.js$/, `export ${key}`)
      assert.ok(existsSync(join(dist, file)), `export ${key}: ${file} exists`)
      assert.ok(existsSync(join(dist, types)), `export ${key}: ${types} exists`)
    }
    assert.doesNotMatch(readFileSync(join(dist, 'README.md'), 'utf8'), /npm install && npm start/, "the package's own README")
    const bin = readFileSync(join(dist, manifest.bin.cordage), 'utf8')
    assert.doesNotMatch(bin, /tsx|\.ts'/, 'the compiled executable neither registers tsx nor imports TypeScript')
  })

  it('has no tsx to load in the copy the next tests use', () => {
    const probe = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('tsx/esm/api')"], { cwd: pkg, encoding: 'utf8' })
    assert.notEqual(probe.status, 0)
    assert.match(probe.stderr, /ERR_MODULE_NOT_FOUND|Cannot find package 'tsx'/)
  })

  it('prints its version and help without tsx', () => {
    const version = cordage('core/cli/bin.js', ['--version'], pkg)
    assert.equal(version.code, 0, version.stderr)
    assert.equal(version.stdout.trim(), `cordage ${KernelVersion}`)
    const help = cordage('core/cli/bin.js', ['--help'], pkg)
    assert.equal(help.code, 0, help.stderr)
    assert.match(help.stdout, /usage: cordage <command>/)
  })

  it('runs a preset of built-in plugins to COMPLETED without tsx', () => {
    const run = cordage('core/cli/bin.js', ['run', '--preset', 'presets/minimal.yml'], pkg)
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /run\/end .*COMPLETED/)
    assert.match(run.stdout, /model-scripted@\d+\.\d+\.\d+/)
  })

  it('refuses a TypeScript plugin without tsx, saying how to fix it', () => {
    const run = cordage('core/cli/bin.js', ['run', '--preset', 'examples/returns-desk.yml'], pkg)
    assert.notEqual(run.code, 0)
    assert.match(run.stderr, /no TypeScript loader is available: install tsx/)
  })

  it('loads a TypeScript plugin through tsx, registered on demand, where tsx is installed', () => {
    const run = cordage(join(dist, 'core/cli/bin.js'), ['run', '--preset', 'docs/examples/returns-desk.yml'], root)
    assert.match(run.stdout, /tool\/proposed .*check_order/)
    assert.match(run.stdout, /WAITING_APPROVAL/)
  })
})

/**
 * A source tree like the repository's, with what a developer leaves lying around planted in it: a
 * secret, a run's database, a log, an untracked note, a dependency folder. Written as files, then (for a
 * checkout) committed but for the planted ones, with `.gitignore` ignoring some of them as the
 * repository's does.
 */
function plantedTree(git: boolean): string {
  const src = tempDir('cordage-assets-')
  const write = (path: string, text = 'x\n') => {
    mkdirSync(dirname(join(src, path)), { recursive: true })
    writeFileSync(join(src, path), text)
  }
  const shipped = [
    'plugins/model-openai/README.md',
    'plugins/model-openai/index.ts',
    'plugins/model-openai/test/request.test.ts',
    'presets/default.yml',
    'templates/init/plugins/bookings/index.ts',
    'playground/public/index.html',
    'core/host/shared-modules-hook.mjs',
    'docs/guides/tutorial.md',
    'docs/examples/returns-desk.yml',
  ]
  for (const path of shipped) write(path)
  if (git) {
    write('.gitignore', '.cordage/\n*.log\nnode_modules\n')
    execFileSync('git', ['init', '-q'], { cwd: src })
    execFileSync('git', ['add', '.'], { cwd: src })
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'sources'], { cwd: src })
  }
  write('plugins/model-openai/.env', 'OPENAI_API_KEY=sk-planted\n')
  write('presets/debug.log')
  write('templates/init/.cordage/cordage.db')
  write('templates/init/node_modules/x/index.js')
  write('plugins/model-openai/NOTES.md')
  write('docs/scratch.sqlite')
  return src
}

/** What `npm pack --dry-run` of a package folder holding these assets would put in the tarball. */
function packList(src: string): string[] {
  const out = tempDir('cordage-assets-out-')
  copyAssets(src, out)
  writeFileSync(join(out, 'package.json'), JSON.stringify({ name: 'probe', version: '0.0.0', files: packageFiles }))
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: out, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
  )
  return packed.files.map((f: { path: string }) => f.path).sort()
}

describe('what the build copies besides compiled code', () => {
  const expected = [
    'core/host/shared-modules-hook.mjs',
    'docs/guides/tutorial.md',
    'package.json',
    'playground/public/index.html',
    'plugins/model-openai/README.md',
    'presets/default.yml',
    'templates/init/plugins/bookings/index.ts',
  ]

  it('packs only tracked files from a git checkout: no secret, database, log or untracked file', () => {
    assert.deepEqual(packList(plantedTree(true)), expected)
  })

  it('refuses secrets, local state and dependencies from a tree that is not a checkout', () => {
    // Without git, untracked files cannot be told apart: the stray note ships, nothing refused does.
    assert.deepEqual(packList(plantedTree(false)), [...expected, 'plugins/model-openai/NOTES.md'].sort())
  })
})
