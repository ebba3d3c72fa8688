/**
 * A plugin's content hash covers the code that runs, not only its folder (core/host/plugin-hash.ts,
 * plugin-code.ts): a helper it imports from `../shared/`, the exact versions of the packages it
 * imports (a workspace package by its files), and, for a hot-reload swap, the bytes the build compiled.
 * A change to any of it is drift for a resumed run and a mismatch for the lock; a handoff records hashes.
 */
import assert from 'node:assert/strict'
import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import { CordageError } from 'cordage'
import type { RunEvent } from 'cordage'
import { main } from '../core/cli/main.ts'
import { lockFileOf, type LockFile } from '../core/host/lock.ts'
import { pluginFiles, pluginHash, pluginHashAsync, unhashableReason } from '../core/host/plugin-hash.ts'
import { buildPlugin } from '../core/host/reload-build.ts'
import { replay } from '../core/kernel/state.ts'
import { refundAnswer as answer } from './helpers.ts'
import { allowAll, close, open, presetFile, removeDirs, scratchDir, stopApps } from './sqlite-preset.ts'

after(removeDirs)
afterEach(stopApps)

const greeterFixture = resolve(import.meta.dirname, 'fixtures/plugins/greeter')

/** The greeter fixture in `dir`/greeter, its tool's answer taken from `../shared/helper.ts`. */
function greeterWithSharedHelper(dir: string): { greeter: string; helper: string } {
  const greeter = join(dir, 'greeter')
  cpSync(greeterFixture, greeter, { recursive: true })
  writeFileSync(join(greeter, 'package.json'), '{ "type": "module" }\n')
  mkdirSync(join(dir, 'shared'))
  // An ES module like the plugin: as CommonJS, tsx would load it through a data: URL, which c8's
  // coverage report cannot map back to a file.
  writeFileSync(join(dir, 'shared', 'package.json'), '{ "type": "module" }\n')
  const helper = join(dir, 'shared', 'helper.ts')
  writeFileSync(helper, "export const punctuation = '!'\n")
  const index = readFileSync(join(greeter, 'index.ts'), 'utf8')
  writeFileSync(
    join(greeter, 'index.ts'),
    `import { punctuation } from '../shared/helper.ts'\n${index.replace('[source: greeter]', '[source: greeter]${punctuation}')}`,
  )
  return { greeter, helper }
}

/** A plugin folder importing the package `dep` installed in `dir`/node_modules at `version`. */
function pluginWithPackage(dir: string, version: string): { plugin: string; dep: string } {
  const plugin = join(dir, 'uses-dep')
  mkdirSync(plugin, { recursive: true })
  writeFileSync(join(plugin, 'index.ts'), "import pad from 'dep-pad'\nexport default pad\n")
  const dep = join(dir, 'node_modules', 'dep-pad')
  mkdirSync(dep, { recursive: true })
  writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: 'dep-pad', version, main: 'index.js' }))
  writeFileSync(join(dep, 'index.js'), 'module.exports = (s) => s\n')
  return { plugin, dep }
}

const followup = { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved.' } }
const askFollowups = [{ id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } }, ...allowAll]

describe('what a plugin hash covers', () => {
  it('a helper the plugin imports from outside its folder: editing it changes the hash', () => {
    const { greeter, helper } = greeterWithSharedHelper(scratchDir())
    const before = pluginHash(greeter)
    assert.match(before, /^sha256:[0-9a-f]{32}$/)
    assert.equal(pluginHash(greeter), before, 'the same code hashes the same')
    writeFileSync(helper, "export const punctuation = '?'\n")
    assert.notEqual(pluginHash(greeter), before, '../shared/helper.ts runs in the plugin, so it counts')
  })

  it('the exact version of an imported package: another version changes the hash, the same one does not', () => {
    const dir = scratchDir()
    const { plugin, dep } = pluginWithPackage(dir, '1.0.0')
    const before = pluginHash(plugin)
    // Its files at one version do not count (a registry version names its content).
    appendFileSync(join(dep, 'index.js'), '// same version\n')
    assert.equal(pluginHash(plugin), before)
    writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: 'dep-pad', version: '1.0.1', main: 'index.js' }))
    assert.notEqual(pluginHash(plugin), before, 'dep-pad 1.0.0 → 1.0.1')
  })

  it('a workspace package (linked, not inside a node_modules): its files count, as they change without a version', () => {
    const dir = scratchDir()
    const { plugin } = pluginWithPackage(dir, '1.0.0')
    const workspace = join(dir, 'packages', 'pad')
    mkdirSync(workspace, { recursive: true })
    writeFileSync(join(workspace, 'package.json'), JSON.stringify({ name: 'dep-pad', version: '0.0.0', main: 'index.js' }))
    writeFileSync(join(workspace, 'index.js'), 'module.exports = (s) => s\n')
    // The installed copy replaced by a link to the workspace folder, as npm workspaces install it.
    const installed = join(dir, 'node_modules', 'dep-pad')
    rmSync(installed, { recursive: true })
    symlinkSync(workspace, installed, 'dir')
    const before = pluginHash(plugin)
    appendFileSync(join(workspace, 'index.js'), 'module.exports.extra = 1\n')
    assert.notEqual(pluginHash(plugin), before)
  })

  it('a plugin esbuild cannot bundle (a syntax error) fails closed: its hash never matches, and says why', async () => {
    const dir = scratchDir()
    const plugin = join(dir, 'broken')
    mkdirSync(plugin)
    writeFileSync(join(plugin, 'index.ts'), 'export default {\n')
    const broken = pluginHash(plugin)
    assert.match(broken, /^unhashable:[0-9a-f]{16}$/)
    assert.notEqual(pluginHash(plugin), broken, 'not even the same files hash the same: nothing recorded can match')
    assert.match(await pluginHashAsync(plugin), /^unhashable:/)
    assert.match(unhashableReason(broken)!, /esbuild cannot bundle it from .*index\.ts \(.*end of file.*\).*fix that error/)
    assert.equal(unhashableReason(pluginHash(greeterFixture)), undefined)
  })

  it('an import esbuild cannot resolve (a dynamic import that never runs) leaves the rest of the bundle hashed', async () => {
    const { greeter, helper } = greeterWithSharedHelper(scratchDir())
    appendFileSync(join(greeter, 'index.ts'), "if (Math.random() < 0) await import('./nope.js')\n")
    const before = pluginHash(greeter)
    assert.match(before, /^sha256:[0-9a-f]{32}$/)
    assert.equal(await pluginHashAsync(greeter), before, 'the app (asynchronous) and the lock (synchronous) agree')
    writeFileSync(helper, "export const punctuation = '?'\n")
    assert.notEqual(pluginHash(greeter), before, '../shared/helper.ts still counts')
    assert.notEqual(await pluginHashAsync(greeter), before)
  })

  it('code the bundle imports from a tests/ folder or a test-named file counts: if the code imports it, it runs', () => {
    const dir = scratchDir()
    const plugin = join(dir, 'odd')
    mkdirSync(join(plugin, 'tests'), { recursive: true })
    writeFileSync(join(plugin, 'index.ts'), "import { a } from './tests/impl.ts'\nimport { b } from './b.test.ts'\nexport default a + b\n")
    writeFileSync(join(plugin, 'tests', 'impl.ts'), 'export const a = 1\n')
    writeFileSync(join(plugin, 'b.test.ts'), 'export const b = 1\n')
    const before = pluginHash(plugin)
    writeFileSync(join(plugin, 'tests', 'impl.ts'), 'export const a = 2\n')
    const edited = pluginHash(plugin)
    assert.notEqual(edited, before, 'tests/impl.ts is imported')
    writeFileSync(join(plugin, 'b.test.ts'), 'export const b = 2\n')
    assert.notEqual(pluginHash(plugin), edited, 'b.test.ts is imported')
  })

  it('a symbolic link in the folder counts as what it points at; a link back up the tree is walked once', () => {
    const dir = scratchDir()
    const plugin = join(dir, 'linked')
    mkdirSync(join(dir, 'outside'))
    mkdirSync(plugin)
    writeFileSync(join(plugin, 'index.ts'), 'export default 1\n')
    writeFileSync(join(dir, 'outside', 'table.json'), '{"a":1}\n')
    writeFileSync(join(dir, 'outside', 'more.json'), '{"b":1}\n')
    symlinkSync(join(dir, 'outside', 'table.json'), join(plugin, 'table.json'), 'file')
    symlinkSync(join(dir, 'outside'), join(plugin, 'data'), 'dir')
    symlinkSync(plugin, join(plugin, 'loop'), 'dir')
    assert.deepEqual(pluginFiles(plugin), ['data/more.json', 'data/table.json', 'index.ts', 'table.json'])
    const before = pluginHash(plugin)
    writeFileSync(join(dir, 'outside', 'table.json'), '{"a":2}\n')
    const edited = pluginHash(plugin)
    assert.notEqual(edited, before, 'the linked file is read at run time')
    writeFileSync(join(dir, 'outside', 'more.json'), '{"b":2}\n')
    assert.notEqual(pluginHash(plugin), edited, 'so is a file in a linked folder')
  })

  it('a compiled plugin installed as a package (node_modules, entry named by its package.json) hashes its dist code and its dependencies', () => {
    const dir = scratchDir()
    pluginWithPackage(dir, '1.0.0')
    const plugin = join(dir, 'node_modules', 'cordage-plugin-compiled')
    mkdirSync(join(plugin, 'dist'), { recursive: true })
    writeFileSync(
      join(plugin, 'package.json'),
      JSON.stringify({ name: 'cordage-plugin-compiled', version: '1.0.0', type: 'module', cordage: { plugin: './dist/index.js' } }),
    )
    writeFileSync(
      join(plugin, 'dist', 'index.js'),
      "import pad from 'dep-pad'\nimport { word } from './lib.js'\nexport default pad(word)\n",
    )
    writeFileSync(join(plugin, 'dist', 'lib.js'), "export const word = 'a'\n")
    const before = pluginHash(plugin)
    appendFileSync(join(plugin, 'dist', 'lib.js'), "export const more = 'b'\n")
    const edited = pluginHash(plugin)
    assert.notEqual(edited, before, 'its compiled code counts')
    writeFileSync(
      join(dir, 'node_modules', 'dep-pad', 'package.json'),
      JSON.stringify({ name: 'dep-pad', version: '2.0.0', main: 'index.js' }),
    )
    assert.notEqual(pluginHash(plugin), edited, 'so does the version of the package it imports')
  })
})

describe('drift and the lock see a change outside the plugin folder', () => {
  it('a run resumed after the shared helper changed reports drift (refused), naming the plugin', async () => {
    const dir = scratchDir()
    const { helper } = greeterWithSharedHelper(dir)
    const file = presetFile(
      { support: { script: [followup, { final: answer }], rules: askFollowups, plugins: [{ path: 'greeter' }] } },
      dir,
    )
    const first = await open(file)
    const paused = await first.agent('support').run('refund T-1001')
    assert.equal(paused.status, 'WAITING_APPROVAL', `${paused.status}: ${paused.reason}`)
    await close(first)
    writeFileSync(helper, "export const punctuation = '?'\n")
    const second = await open(file)
    await assert.rejects(
      async () => (await second.agent('support').approve(paused.runId, paused.waiting!.actionId!, { by: 'op' })).done,
      (error: unknown) => CordageError.is(error, 'version_drift') && /greeter 0\.3\.0 \(sha256:/.test(error.message),
    )
  })

  it('the lock refuses a run once the shared helper changed, until locked again', async () => {
    const dir = scratchDir()
    const { greeter, helper } = greeterWithSharedHelper(dir)
    const file = presetFile({ support: { script: [{ final: answer }], plugins: [{ path: 'greeter' }] } }, dir)
    const quiet = { out: () => {}, err: () => {} }
    assert.equal(await main(['lock', '--preset', file], quiet), 0)
    const lock = JSON.parse(readFileSync(lockFileOf(file), 'utf8')) as LockFile
    assert.equal(lock.agents.support.greeter.hash, pluginHash(greeter))
    writeFileSync(helper, "export const punctuation = '?'\n")
    const err: string[] = []
    const code = await main(['run', '--preset', file, '--task', 'refund T-1001'], { out: () => {}, err: (l) => err.push(l) })
    assert.notEqual(code, 0, 'ran on other code than the lock names')
    assert.match(err.join('\n'), /lock_mismatch[\s\S]*greeter@0\.3\.0: its files differ from the lock/)
  })
})

describe('a plugin esbuild cannot bundle cannot be locked', () => {
  it("cordage lock refuses it, naming esbuild's error; a lock written before refuses the run", async () => {
    const dir = scratchDir()
    const { helper } = greeterWithSharedHelper(dir)
    const file = presetFile({ support: { script: [{ final: answer }], plugins: [{ path: 'greeter' }] } }, dir)
    const quiet = { out: () => {}, err: () => {} }
    assert.equal(await main(['lock', '--preset', file], quiet), 0)
    const locked = readFileSync(lockFileOf(file), 'utf8')
    writeFileSync(helper, 'export const punctuation = {\n')
    const err: string[] = []
    const code = await main(['lock', '--preset', file], { out: () => {}, err: (l) => err.push(l) })
    assert.notEqual(code, 0, 'locked a plugin whose code it cannot hash')
    assert.match(err.join('\n'), /lock_mismatch[\s\S]*greeter@0\.3\.0: esbuild cannot bundle it from .*index\.ts \(.*end of file/)
    assert.equal(readFileSync(lockFileOf(file), 'utf8'), locked, 'the lock is not written')
    const runErr: string[] = []
    const ran = await main(['run', '--preset', file, '--task', 'refund T-1001'], { out: () => {}, err: (l) => runErr.push(l) })
    assert.notEqual(ran, 0)
    assert.match(runErr.join('\n'), /lock_mismatch[\s\S]*greeter@0\.3\.0: esbuild cannot bundle it/)
  })
})

describe('what runs records the hashes', () => {
  it('run/handoff records the new agent’s plugin hashes, and a resumed run compares with them', async () => {
    const app = await open(
      presetFile({
        triage: {
          script: [{ tool: 'handoff', args: { agent: 'billing', reason: 'a refund question' } }],
          subagents: { handoffs: ['billing'] },
        },
        billing: { script: [{ final: 'never used' }, { tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: answer }] },
      }),
    )
    const state = await app.agent('triage').run('my kettle arrived broken; refund?')
    assert.equal(state.agent, 'billing')
    const events = await app.agent('billing').store().load(state.runId)
    const handoff = events.find((e): e is RunEvent<'run/handoff'> => e.type === 'run/handoff')!
    assert.deepEqual(handoff.data.hashes, app.agent('billing').hashes)
    assert.match(handoff.data.hashes!['policy-rules'], /^sha256:[0-9a-f]{32}$/)
    assert.deepEqual(state.hashes, app.agent('billing').hashes, 'the run is bound to the hashes of the agent it was handed to')
    // A log recorded before handoffs carried hashes still replays: versions only, hashes unknown.
    const old = events.map((e) => (e.type === 'run/handoff' ? { ...e, data: { ...e.data, hashes: undefined } } : e))
    const replayed = replay(state.runId, old as RunEvent[])
    assert.equal(replayed.agent, 'billing')
    assert.equal(replayed.hashes, undefined)
    assert.deepEqual(replayed.plugins, handoff.data.plugins)
  })

  it('a hot-reload swap records the hash of the bytes it built, even when a file is edited after the build', async () => {
    const dir = scratchDir()
    const { greeter, helper } = greeterWithSharedHelper(dir)
    const file = presetFile({ support: { script: [{ final: answer }], plugins: [{ path: 'greeter' }] } }, dir)
    const app = await open(file)
    const runtime = app.agent('support')
    const installed = app.entriesOf('support').find((e) => e.name === 'greeter')!.entry
    writeFileSync(helper, "export const punctuation = '.'\n")
    const built = await buildPlugin(installed)
    const ofBuild = pluginHash(greeter)
    assert.equal(built.contentHash, ofBuild, 'a build hashes what pluginHash hashes for the same files')
    // Edited while the swap waits at a step boundary: not the code that starts.
    writeFileSync(helper, "export const punctuation = '?!'\n")
    await app.swap('support', 'greeter', { entry: built.entry })
    assert.equal(runtime.hashes.greeter, ofBuild)
    assert.notEqual(runtime.hashes.greeter, pluginHash(greeter))
  })
})
