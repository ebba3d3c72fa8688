/**
 * `cordage lock`: each agent's exact plugin versions and content hashes written beside the preset;
 * `run` and `check` then resolve exactly those, refuse (listing every difference) when a locked version
 * is missing or its files changed, and ignore the lock with --no-lock. Runs record the hashes.
 */
import assert from 'node:assert/strict'
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { main } from '../core/cli/main.ts'
import { lockFileOf, type LockFile } from '../core/host/lock.ts'
import { pluginFiles, pluginHash, shipsInPlugin } from '../core/host/plugin-hash.ts'
import { tempDir } from './temp.ts'

const plugins = resolve(import.meta.dirname, '../plugins')

function capture() {
  const out: string[] = []
  const err: string[] = []
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err }
}

function desk(dir: string, policyRange: string, extra: unknown[] = []): string {
  const file = join(dir, 'desk.yml')
  writeFileSync(
    file,
    stringify({
      agents: {
        support: {
          task: 'Say hello',
          model: { plugin: 'model-scripted', config: { script: [{ final: 'Hello.' }] } },
          plugins: [
            'store-memory',
            'tools-registry',
            'context-basic',
            { plugin: 'verifier-basic', config: { minCount: 0 } },
            { plugin: 'policy-rules', version: policyRange, config: { default: 'deny' } },
            ...extra,
          ],
        },
      },
    }),
  )
  return file
}

function greeterIn(dir: string): string {
  const folder = join(dir, 'greeter')
  cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), folder, { recursive: true })
  writeFileSync(join(folder, 'package.json'), '{ "type": "module" }\n')
  return folder
}

async function run(file: string, ...flags: string[]) {
  const c = capture()
  const code = await main(['run', '--preset', file, '--json', ...flags], c.io)
  return { code, events: c.out.map((l) => JSON.parse(l)), err: c.err.join('\n') }
}

describe('plugin content hash', () => {
  it('covers the manifest and code, not docs or tests, and changes with any file that runs', () => {
    const files = pluginFiles(join(plugins, 'policy-rules'))
    assert.ok(files.includes('manifest.ts') && files.includes('index.ts') && files.includes('rules.ts'), files.join())
    assert.ok(!files.some((f) => f.endsWith('.md') || f.includes('.test.')), files.join())
    const folder = greeterIn(tempDir())
    const before = pluginHash(folder)
    assert.match(before, /^sha256:[0-9a-f]{32}$/)
    writeFileSync(join(folder, 'README.md'), '# docs do not count\n')
    writeFileSync(join(folder, 'index.test.ts'), '// tests do not count\n')
    assert.equal(pluginHash(folder), before)
    appendFileSync(join(folder, 'manifest.ts'), '\n')
    assert.notEqual(pluginHash(folder), before)
  })

  it("leaves out the plugin's test/ folder: tests, helpers and fixtures there never change it; a shipped file does", () => {
    const folder = greeterIn(tempDir())
    mkdirSync(join(folder, 'test', 'fixtures', 'desk'), { recursive: true })
    writeFileSync(join(folder, 'test', 'index.test.ts'), '// a test\n')
    writeFileSync(join(folder, 'test', 'test-desk.ts'), 'export const desk = 1\n')
    writeFileSync(join(folder, 'test', 'fixtures', 'desk', 'index.ts'), 'export default 1\n')
    const before = pluginHash(folder)
    assert.deepEqual(pluginFiles(folder), ['index.ts', 'manifest.ts', 'package.json'])
    appendFileSync(join(folder, 'test', 'index.test.ts'), '// edited\n')
    appendFileSync(join(folder, 'test', 'test-desk.ts'), 'export const more = 2\n')
    writeFileSync(join(folder, 'test', 'fixtures', 'desk', 'index.ts'), 'export default 2\n')
    writeFileSync(join(folder, 'test', 'new-helper.ts'), 'export {}\n')
    assert.equal(pluginHash(folder), before, 'files under test/ do not count')
    appendFileSync(join(folder, 'index.ts'), '\n')
    const edited = pluginHash(folder)
    assert.notEqual(edited, before, 'an edited shipped file does')
    writeFileSync(join(folder, 'test-desk.ts'), 'export const desk = 1\n')
    assert.notEqual(pluginHash(folder), edited, 'a helper beside the code ships, so it counts')
  })

  it('says which paths ship (what cordage dev watches): not test/, node_modules, dot files, tests or Markdown', () => {
    for (const path of ['index.ts', 'manifest.ts', 'package.json', 'lib/rules.ts', 'data/table.json', 'test-command.ts'])
      assert.equal(shipsInPlugin(path), true, path)
    for (const path of [
      'test/index.test.ts',
      'test/test-desk.ts',
      'test/fixtures/desk/index.ts',
      'tests/a.ts',
      'lib/fixtures/x.ts',
      'node_modules/zod/index.js',
      '.git/HEAD',
      '.env',
      'rules.test.ts',
      'rules.spec.js',
      'README.md',
      'lib/test/x.ts',
    ])
      assert.equal(shipsInPlugin(path), false, path)
    const folder = greeterIn(tempDir())
    mkdirSync(join(folder, 'test'))
    writeFileSync(join(folder, 'test', 'helper.ts'), 'export {}\n')
    assert.deepEqual(pluginFiles(folder), pluginFiles(folder).filter(shipsInPlugin))
  })

  it('covers only shipped code in every built-in plugin: each hashed module is reachable from its index.ts or manifest.ts', () => {
    for (const name of readdirSync(plugins)) {
      const dir = join(plugins, name)
      const files = pluginFiles(dir)
      const modules = files.filter((f) => /\.[cm]?[jt]s$/.test(f))
      const reached = new Set<string>()
      const visit = (file: string) => {
        if (reached.has(file) || !modules.includes(file)) return
        reached.add(file)
        for (const [, spec] of readFileSync(join(dir, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
          visit(
            relative(dir, resolve(dirname(join(dir, file)), spec))
              .split('\\')
              .join('/'),
          )
        }
      }
      visit('index.ts')
      visit('manifest.ts')
      assert.deepEqual(
        modules.filter((f) => !reached.has(f)),
        [],
        `${name}: hashed modules that nothing shipped imports (tests and their helpers belong in plugins/${name}/test/)`,
      )
    }
  })
})

describe('cordage lock', () => {
  it("writes each plugin's exact version and hash beside the preset; check then says it is locked", async () => {
    const dir = tempDir()
    const file = desk(dir, '*')
    const c = capture()
    assert.equal(await main(['lock', '--preset', file], c.io), 0, c.err.join('\n'))
    const lockFile = lockFileOf(file)
    assert.equal(lockFile, join(dir, 'desk.lock.json'))
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as LockFile
    assert.equal(lock.preset, 'desk.yml')
    assert.deepEqual(Object.keys(lock.agents.support).sort(), [
      'context-basic',
      'model-scripted',
      'policy-rules',
      'store-memory',
      'tools-registry',
      'verifier-basic',
    ])
    assert.deepEqual(lock.agents.support['policy-rules'], { version: '2.1.0', hash: pluginHash(join(plugins, 'policy-rules')) })
    assert.match(c.out.join('\n'), /policy-rules@2\.1\.0 +sha256:[0-9a-f]{32}/)
    assert.match(c.out.at(-1)!, /^wrote \S*desk\.lock\.json$/)

    const check = capture()
    assert.equal(await main(['check', '--preset', file], check.io), 0, check.err.join('\n'))
    assert.match(check.out.join('\n'), /locked by \S*desk\.lock\.json\npreset \S+ is valid/)
  })

  it('makes run resolve the locked version, not the highest in range; --no-lock ignores it; lock again updates it', async () => {
    const dir = tempDir()
    const file = desk(dir, '^1.0.0')
    assert.equal(await main(['lock', '--preset', file], capture().io), 0)
    desk(dir, '>=1.0.0') // the range now admits 2.0.0 too
    const locked = await run(file)
    assert.equal(locked.code, 0, locked.err)
    assert.equal(locked.events[0].data.plugins['policy-rules'], '1.0.0')
    assert.equal(locked.events[0].data.hashes['policy-rules'], pluginHash(join(plugins, 'policy-rules-v1')))

    const unlocked = await run(file, '--no-lock')
    assert.equal(unlocked.events[0].data.plugins['policy-rules'], '2.1.0')

    const again = capture()
    assert.equal(await main(['lock', '--preset', file], again.io), 0)
    assert.match(again.out.join('\n'), /policy-rules@2\.1\.0 +sha256:\S+ +\(was 1\.0\.0\)/)
    assert.match(again.out.at(-1)!, /^updated /)
    assert.equal((await run(file)).events[0].data.plugins['policy-rules'], '2.1.0')
  })

  it("refuses when a locked plugin's files changed, listing what differs, until locked again", async () => {
    const dir = tempDir()
    const folder = greeterIn(dir)
    const file = desk(dir, '^2.0.0', [{ path: 'greeter' }])
    assert.equal(await main(['lock', '--preset', file], capture().io), 0)
    const lock = JSON.parse(readFileSync(lockFileOf(file), 'utf8')) as LockFile
    assert.deepEqual(lock.agents.support.greeter, { version: '0.3.0', hash: pluginHash(folder), path: 'greeter' })

    const locked = pluginHash(folder)
    appendFileSync(join(folder, 'index.ts'), '\n// changed\n')
    for (const command of ['check', 'run']) {
      const c = capture()
      assert.equal(await main([command, '--preset', file], c.io), 2)
      assert.match(
        c.err.join('\n'),
        new RegExp(
          `error \\[lock_mismatch\\]: preset \\S+ does not match its lock \\S*desk\\.lock\\.json:\\n  support: greeter@0\\.3\\.0: its files differ from the lock \\(locked ${locked}, installed ${pluginHash(folder)} in \\S*greeter\\)\\nrun cordage lock --preset \\S+ to lock what is installed now, or pass --no-lock to ignore the lock`,
        ),
      )
    }
    assert.equal(await main(['check', '--preset', file, '--no-lock'], capture().io), 0)
    assert.equal(await main(['lock', '--preset', file], capture().io), 0)
    assert.equal(await main(['check', '--preset', file], capture().io), 0)
  })

  it('lists every difference at once: a version not installed, a plugin not locked, a locked plugin gone, a range that no longer admits', async () => {
    const dir = tempDir()
    const file = desk(dir, '*', ['support-desk'])
    assert.equal(await main(['lock', '--preset', file], capture().io), 0)
    const lock = JSON.parse(readFileSync(lockFileOf(file), 'utf8')) as LockFile
    lock.agents.support['model-scripted'].version = '9.9.9'
    lock.agents.support['loop-guard'] = { version: '1.0.0', hash: 'sha256:0' }
    delete lock.agents.support['tools-registry']
    writeFileSync(lockFileOf(file), JSON.stringify(lock))
    desk(dir, '^1.0.0', ['support-desk'])
    const c = capture()
    assert.equal(await main(['run', '--preset', file], c.io), 2)
    const message = c.err.join('\n')
    assert.match(message, /support: model-scripted: locked at 9\.9\.9, which is not installed \(installed: 1\.2\.0\)/)
    assert.match(message, /support: plugin tools-registry \(agents\.support\.plugins\[1\]\) is in the preset but not in the lock/)
    assert.match(
      message,
      /support: policy-rules: the lock has 2\.1\.0, which the preset's range \^1\.0\.0 \(agents\.support\.plugins\[4\]\) does not admit/,
    )
    assert.match(message, /support: plugin loop-guard is in the lock but not in the preset/)
  })

  it('refuses an unreadable lock, and writes no lock for check or run', async () => {
    const dir = tempDir()
    const file = desk(dir, '*')
    assert.equal(await main(['check', '--preset', file], capture().io), 0)
    assert.equal(existsSync(lockFileOf(file)), false)
    writeFileSync(lockFileOf(file), '{ not json')
    const c = capture()
    assert.equal(await main(['check', '--preset', file], c.io), 2)
    assert.match(c.err.join('\n'), /lock file \S*desk\.lock\.json is not valid JSON .*pass --no-lock/)
    assert.equal(await main(['lock', '--preset', file], capture().io), 0)
    assert.equal(await main(['check', '--preset', file], capture().io), 0)
  })
})
