/**
 * What a new user does, end to end (issue 13's "done when"): the package is built and packed, the
 * tarball installed into an empty temporary folder, `cordage init` run there, and in the new project its
 * tests and its default preset run, offline (the scripted model).
 *
 * Slow by nature: the build (tsc) and `npm install`, from npm's cache (`--prefer-offline`; CI's cache is
 * warm after `npm ci`). better-sqlite3's binary comes from a loopback mirror (prebuildMirror) rather than
 * a node-gyp compile. Each phase's time is printed, not asserted.
 *
 * Its time (2 to 4.5 min on a loaded 2-core machine) is near the runner's per-file limit, which a
 * `timeout` here cannot raise: `--test-timeout` bounds each file as a whole, so package.json's test
 * scripts give files 600 s.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { homedir } from 'node:os'
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { refused } from '../build/assets.ts'
import { buildPackage } from './bin.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')

/** The environment of a user's shell: none of this test runner's, c8's or an enclosing `npm test`'s variables. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) => !key.startsWith('npm_') && !['NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'NODE_V8_COVERAGE', 'INIT_CWD'].includes(key),
  ),
)
// When node-gyp compiles better-sqlite3 after all (see prebuildMirror), its two sources side by side.
env.JOBS = 'max'
env.NO_COLOR = '1'

/** A command as a user's shell runs it; asynchronous, so the loopback mirror below answers meanwhile. */
async function sh(command: string, args: string[], cwd: string, extra: Record<string, string> = {}) {
  const started = Date.now()
  const child = spawn(command, args, { cwd, env: { ...env, ...extra } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => {
    stdout += chunk
  })
  child.stderr.on('data', (chunk) => {
    stderr += chunk
  })
  const [code] = (await once(child, 'close')) as [number | null]
  process.stderr.write(`# ${command} ${args.join(' ')}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  return { code, stdout, stderr, all: `${stdout}\n${stderr}` }
}

/**
 * better-sqlite3's installer downloads a prebuilt binary from GitHub and compiles one with node-gyp when
 * it cannot (minutes of CPU on a small machine, most of this test's time). This loopback server stands
 * in for GitHub as the download mirror its installer supports (npm_config_better_sqlite3_binary_host),
 * serving the binary the repository's own install built, for that version and this Node only: any other
 * request gets 404, and the installer compiles as it would anyway.
 */
async function prebuildMirror(work: string) {
  const pkg = join(root, 'node_modules/better-sqlite3')
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'))
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  const archive = join(work, name)
  execFileSync('tar', ['-czf', archive, '-C', pkg, 'build/Release/better_sqlite3.node'])
  const served: string[] = []
  const server = createServer((req, res) => {
    served.push(req.url ?? '')
    if (req.url !== `/v${version}/${name}`) return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'application/gzip' }).end(readFileSync(archive))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // prebuild-install keeps what it downloads in npm's cache, under a name from the address: removed after.
  const cached = join(
    process.env.npm_config_cache || join(homedir(), '.npm'),
    '_prebuilds',
    `${createHash('sha512').update(`${host}/v${version}/${name}`).digest('hex').slice(0, 6)}-${name.replace(/[^a-zA-Z0-9.]+/g, '-')}`,
  )
  return {
    host,
    served,
    close: async () => {
      server.close()
      rmSync(cached, { force: true })
    },
  }
}

describe('the packed package, installed into an empty folder', { timeout: 20 * 60_000 }, () => {
  let work: string
  let tarball: string
  let files: string[]
  let installed: string
  let bin: string

  before(async () => {
    work = tempDir('cordage-package-')
    // Built into this test's own folder (or the suite's build copied there): other tests use dist/ at the same time.
    buildPackage(join(work, 'dist'))
    const pack = await sh('npm', ['pack', join(work, 'dist'), '--pack-destination', work, '--json'], work)
    assert.equal(pack.code, 0, pack.stderr)
    const [packed] = JSON.parse(pack.stdout)
    tarball = join(work, packed.filename)
    files = packed.files.map((f: { path: string }) => f.path)
    installed = tempDir('cordage-install-')
    bin = join(installed, 'node_modules/cordage/core/cli/bin.js')
    const mirror = await prebuildMirror(work)
    try {
      const install = await sh('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], installed, {
        npm_config_better_sqlite3_binary_host: mirror.host,
      })
      assert.equal(install.code, 0, install.all)
      process.stderr.write(`# better-sqlite3 mirror served: ${mirror.served.join(', ') || 'nothing'}\n`)
    } finally {
      await mirror.close()
    }
  })

  it('packs what a user needs and none of the project’s tests, fixtures, benches or evals', () => {
    const manifest = JSON.parse(readFileSync(join(work, 'dist/package.json'), 'utf8'))
    assert.equal(manifest.private, undefined, 'publishable')
    for (const [key, target] of Object.entries(manifest.exports as Record<string, unknown>)) {
      if (key === './package.json') continue
      const { types, default: js } = target as { types: string; default: string }
      assert.match(js, /\.js$/, key)
      assert.match(types, /\.d\.ts$/, key)
      for (const file of [js, types]) assert.ok(files.includes(file.replace(/^\.\//, '')), `${key}: ${file} is in the tarball`)
    }
    assert.ok(manifest.exports['./testing'], 'cordage/testing is exported')
    for (const wanted of ['core/cli/bin.js', 'presets/default.yml', 'templates/init/presets/default.yml', 'plugins/store-sqlite/index.js'])
      assert.ok(files.includes(wanted), `${wanted} is in the tarball`)
    const builtins = readdirSync(join(root, 'plugins')).filter((name) => existsSync(join(root, 'plugins', name, 'manifest.ts')))
    for (const name of builtins) assert.ok(files.includes(`plugins/${name}/manifest.js`), `built-in plugin ${name} is in the tarball`)
    const unwanted = files.filter(
      (f) =>
        /^plugins\/[^/]+\/test\//.test(f) ||
        /^(test|bench|evals|build|reports|coverage)\//.test(f) ||
        /\.(map|tsbuildinfo)$/.test(f) ||
        (f.startsWith('docs/') && !f.endsWith('.md')),
    )
    assert.deepEqual(unwanted, [])
    assert.deepEqual(files.filter(refused), [], 'no dotfiles, node_modules, databases or logs')
    // The package's own README, whose links into docs/ resolve inside the tarball.
    const readme = readFileSync(join(work, 'dist/README.md'), 'utf8')
    assert.match(readme, /npm install \/path\/to\/cordage-/)
    assert.doesNotMatch(readme, /npm install && npm start/)
    const links = [...readme.matchAll(/\]\((?!https?:)([^)#]+)/g)].map((m) => m[1])
    assert.ok(links.length > 5, 'the README links to the docs')
    for (const link of links) assert.ok(files.includes(link), `README link ${link} is in the tarball`)
    assert.equal(
      files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('templates/')).length,
      0,
      'no TypeScript sources',
    )
  })

  it('runs `cordage --help` and a built-in preset from the install', async () => {
    const help = await sh('npx', ['--no', '--', 'cordage', '--help'], installed)
    assert.equal(help.code, 0, help.all)
    assert.match(help.stdout, /usage: cordage <command>/)
    assert.match(help.stdout, /^ {2}init +Start a project/m)
    // The installed executable itself (npx above found it): npm's start is seconds on a loaded machine.
    const run = await sh(process.execPath, [bin, 'run', '--preset', 'node_modules/cordage/presets/minimal.yml'], installed)
    assert.equal(run.code, 0, run.all)
    assert.match(run.stderr, /^run \S+ COMPLETED$/m)
  })

  it('makes a project with `cordage init` whose tests pass and whose default preset completes', async () => {
    const init = await sh('npx', ['--no', '--', 'cordage', 'init', 'app'], installed)
    assert.equal(init.code, 0, init.all)
    assert.match(init.stdout, /created 10 files in app/)
    const app = join(installed, 'app')
    const test = await sh('npm', ['test'], app)
    assert.equal(test.code, 0, test.all)
    // Every test the scaffold has, counted from the template, ran and passed.
    const tests = readFileSync(join(root, 'templates/init/test/bookings.test.ts'), 'utf8').match(/^\s*it\(/gm)?.length
    assert.ok(tests && tests >= 3)
    assert.match(test.stdout, new RegExp(`^(#|ℹ) pass ${tests}$`, 'm'))
    assert.match(test.stdout, /^(#|ℹ) fail 0$/m)
    const run = await sh('npx', ['--no', '--', 'cordage', 'run', '--preset', 'presets/default.yml'], app)
    assert.equal(run.code, 0, run.all)
    assert.match(run.stdout, /tool\/end .*book_room/)
    assert.match(run.stdout, /verify\/end .*evidence: BK-1/)
    assert.match(run.stderr, /^run \S+ COMPLETED$/m)
    // The default preset keeps runs in SQLite: better-sqlite3 was built by the install, and is used.
    assert.ok(existsSync(join(app, '.cordage/cordage.db')))
    const again = await sh(process.execPath, [bin, 'init', 'app'], installed)
    assert.equal(again.code, 2)
    assert.match(again.stderr, /10 file\(s\) exist and would be overwritten/)
  })
})
