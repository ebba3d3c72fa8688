/**
 * Following a preset's edits in process (core/host/preset-reload.ts, core/host/preset-diff.ts): which
 * edits are swaps of one plugin, which need a new plan, and that an edit is applied all or nothing.
 * The agents are the support desk of test/helpers.ts, loaded from a preset file that the tests rewrite.
 */
import assert from 'node:assert/strict'
import { renameSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { presetChanges, secretsChanged, type PresetView } from '../core/host/preset-diff.ts'
import { PresetWatcher, type PresetReload } from '../core/host/preset-reload.ts'
import type { AgentSpec, PluginRef } from '../core/host/preset.ts'
import type { PlannedPlugin } from '../core/host/resolve.ts'
import { saves, type SaveStyle } from './editor-saves.ts'
import { DefaultRules, deskPreset, refundAnswer, supportDesk, type DeskOptions, type Harness } from './helpers.ts'

const probe = resolve(import.meta.dirname, 'fixtures/plugins/start-probe')
const chatty = resolve(import.meta.dirname, 'fixtures/plugins/chatty')
const devPolicy = resolve(import.meta.dirname, 'fixtures/plugins/dev-policy')
const lookup = { tool: 'lookup_policy', args: { topic: 'refunds' } }

let harness: Harness | undefined
let watcher: PresetWatcher | undefined
afterEach(async () => {
  watcher?.stop()
  await harness?.stop()
  harness = undefined
  watcher = undefined
})

async function setup(options: DeskOptions) {
  harness = await supportDesk(options)
  watcher = await PresetWatcher.start(harness.app, { watch: false, lock: false })
  const edit = (next: DeskOptions) => writeFileSync(harness!.presetFile, stringify(deskPreset(next, 'outbox.jsonl')))
  return { h: harness, watcher, edit }
}

async function answer(h: Harness): Promise<string | undefined> {
  const state = await h.agent.run('refund window?')
  const end = (await h.events(state.runId)).find((e) => e.type === 'run/end')
  return end?.type === 'run/end' ? end.data.answer : undefined
}

describe('preset edits (in process)', () => {
  it('swaps a plugin whose version changed, and the next run decides with that version', async () => {
    const policy = (version: string) => ({
      plugin: 'policy-rules',
      version,
      config: { default: 'deny', rules: DefaultRules },
    })
    const base = { script: [lookup, { final: refundAnswer }] }
    const { h, watcher, edit } = await setup({ ...base, policyPlugin: policy('^1') })
    assert.equal(h.app.pluginsOf('support')['policy-rules'], '1.0.0')
    edit({ ...base, policyPlugin: policy('^2') })
    const result = await watcher.reload()
    assert.equal(result?.ok, true, result?.message)
    assert.deepEqual(result?.swapped, [
      { agent: 'support', name: 'policy-rules', changed: ['version'], from: 'policy-rules@1.0.0', to: 'policy-rules@2.1.0' },
    ])
    assert.equal(h.app.pluginsOf('support')['policy-rules'], '2.1.0')
    const state = await h.agent.run('refund window?')
    const decision = (await h.events(state.runId)).find((e) => e.type === 'tool/decision')
    assert.equal(decision?.producer, 'policy-rules@2.1.0')
  })

  it('undoes the swaps made before one that fails to start: nothing of the edit stays', async () => {
    const plugins = (fail: boolean) => [{ path: probe, config: { fail } }]
    const { h, watcher, edit } = await setup({ script: [{ final: 'one' }], plugins: plugins(false) })
    assert.equal(await answer(h), 'one')
    // The model's new script is swapped in first, then start-probe fails: the model is swapped back.
    edit({ script: [{ final: 'two' }], plugins: plugins(true) })
    const result = await watcher.reload()
    assert.equal(result?.ok, false)
    assert.equal(result?.code, 'plugin_start_failed')
    assert.match(
      result?.message ?? '',
      /start-probe in agent "support" did not start with the edited preset: .*start-probe was told to fail/,
    )
    assert.match(result?.message ?? '', /the plugins swapped before it were swapped back: nothing was changed/)
    assert.deepEqual(result?.swapped, [])
    assert.equal(await answer(h), 'one')
    assert.equal(h.app.pluginsOf('support')['start-probe'], '1.0.0')

    // The same edit without the failure goes through, compared with what runs (not with the failed edit).
    edit({ script: [{ final: 'two' }], plugins: plugins(false) })
    const fixed = await watcher.reload()
    assert.equal(fixed?.ok, true, fixed?.message)
    assert.deepEqual(
      fixed?.swapped.map((s) => s.name),
      ['model-scripted'],
    )
    assert.equal(await answer(h), 'two')
  })

  it('asks for a new plan, not a swap, when an edit changes the secrets a plugin names (secrets are computed when planned)', async () => {
    const name = 'CORDAGE_PRESET_RELOAD_TOKEN'
    process.env[name] = 'tok-preset-reload-0123456789abcdef'
    try {
      const plugins = (tokenEnv: string) => [{ path: chatty, config: { tokenEnv } }]
      const { h, watcher, edit } = await setup({ script: [{ final: 'one' }], plugins: plugins('') })
      const disposed: string[] = []
      h.app.root.on('plugin/disposed', (e: { name: string }) => disposed.push(e.name))
      // chatty's manifest marks tokenEnv as secret: the variable it names is a key the runs must scrub.
      edit({ script: [{ final: 'one' }], plugins: plugins(name) })
      const result = await watcher.reload()
      assert.equal(result?.ok, false)
      assert.deepEqual(result?.swapped, [])
      assert.deepEqual(result?.replan, [`agent "support": the secrets its plugins name changed (now also ${name})`])
      assert.deepEqual(disposed, [])
    } finally {
      delete process.env[name]
    }
  })

  it('says so when an undo fails too, and plans the agents again on the next edit (what runs is no longer the preset read)', async () => {
    // dev-policy with startOnce cannot start twice in one process: once swapped away, it cannot be swapped back.
    const desk = (once: boolean, fail: boolean): DeskOptions => ({
      script: [{ final: 'one' }],
      policyPlugin: { path: devPolicy, config: { startOnce: once } },
      plugins: [{ path: probe, config: { fail } }],
    })
    const { h, watcher, edit } = await setup(desk(true, false))
    edit(desk(false, true))
    const result = await watcher.reload()
    assert.equal(result?.ok, false)
    assert.equal(result?.partial, true)
    assert.match(result?.message ?? '', /could not all be swapped back: dev-policy in "support" \(.*already started once/)
    assert.match(result?.message ?? '', /the agents now run part of this edit: the next edit plans them again/)
    assert.equal(await answer(h), 'one')
    // Back to the preset the agents were loaded with: no diff from it, yet dev-policy runs the edited config.
    edit(desk(true, false))
    const next = await watcher.reload()
    assert.equal(next?.ok, false)
    assert.deepEqual(next?.replan, ['an earlier edit was applied only in part (dev-policy in "support" kept the edited config)'])
  })

  it('checks the whole edit before it swaps anything: a config that does not fit touches no plugin', async () => {
    const plugins = (fail: unknown) => [{ path: probe, config: { fail } }]
    const { h, watcher, edit } = await setup({ script: [{ final: 'one' }], plugins: plugins(false) })
    const disposed: string[] = []
    h.app.root.on('plugin/disposed', (e: { name: string }) => disposed.push(e.name))
    edit({ script: [{ final: 'two' }], plugins: plugins('yes') })
    const result = await watcher.reload()
    assert.equal(result?.ok, false)
    assert.equal(result?.code, 'plugin_config_invalid')
    assert.match(result?.message ?? '', /agents\.support\.plugins\[\d\]\.config\.fail/)
    assert.deepEqual(disposed, [])
    assert.equal(await answer(h), 'one')
  })

  it('applies nothing for an edit that changes nothing that matters, and asks for a new plan for a new plugin', async () => {
    const { h, watcher, edit } = await setup({ script: [{ final: 'one' }] })
    writeFileSync(h.presetFile, `# a comment\n${stringify(deskPreset({ script: [{ final: 'one' }] }, 'outbox.jsonl'))}`)
    assert.equal(await watcher.reload(), undefined)
    edit({ script: [{ final: 'one' }], plugins: [{ path: probe }] })
    const result = await watcher.reload()
    assert.equal(result?.ok, false)
    assert.deepEqual(result?.replan, [`agent "support": the plugin list changed (added ${probe})`])
    assert.equal(h.app.pluginsOf('support')['start-probe'], undefined)
  })
})

describe('preset edits, watched', () => {
  /** The desk with its preset followed on disk: each reload result is kept, and `next` waits for the next one. */
  async function watched() {
    harness = await supportDesk({ script: [{ final: 'one' }] })
    const results: PresetReload[] = []
    let waiting: ((r: PresetReload) => void) | undefined
    watcher = await PresetWatcher.start(harness.app, {
      lock: false,
      debounceMs: 20,
      onReload: (result) => {
        results.push(result)
        waiting?.(result)
        waiting = undefined
      },
    })
    // The next result (30 s is a deadline for a lost one, not a measure).
    const next = () =>
      new Promise<PresetReload>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no preset reload within 30 s; results: ${JSON.stringify(results)}`)), 30_000)
        waiting = (r) => {
          clearTimeout(timer)
          done(r)
        }
      })
    return { h: harness, next }
  }

  it('follows a preset saved by write-then-rename, save after save, and every other way editors save', async () => {
    const { h, next } = await watched()
    const styles: SaveStyle[] = ['atomic', 'atomic', 'atomic', 'backup', 'replace', 'inPlace']
    for (const [i, style] of styles.entries()) {
      const text = `answer ${i + 2} (${style})`
      const reloaded = next()
      saves[style](h.presetFile, stringify(deskPreset({ script: [{ final: text }] }, 'outbox.jsonl')))
      const result = await reloaded
      assert.equal(result.ok, true, `${style} save #${i + 1}: ${result.message}`)
      assert.deepEqual(
        result.swapped.map((s) => s.name),
        ['model-scripted'],
      )
      assert.equal(await answer(h), text)
    }
  })

  it("says so when the preset's folder goes away: watch_failed, and the agents keep what they run", async () => {
    const { h, next } = await watched()
    const moved = `${h.dir}-moved`
    const lost = next()
    renameSync(h.dir, moved)
    try {
      const result = await lost
      assert.equal(result.ok, false)
      assert.equal(result.code, 'watch_failed')
      assert.match(
        result.message ?? '',
        /was removed or renamed, so it is no longer watched: edits of .*preset\.yml are no longer followed/,
      )
      assert.deepEqual(result.swapped, [])
    } finally {
      renameSync(moved, h.dir)
    }
  })
})

describe('presetChanges', () => {
  const ref = (plugin: string, config: Record<string, unknown> = {}, extra: Partial<PluginRef> = {}): PluginRef => ({
    plugin,
    version: '*',
    config,
    at: 'x',
    ...extra,
  })
  const spec = (name: string, over: Partial<AgentSpec> = {}): AgentSpec => ({
    name,
    budgets: {},
    spawns: [],
    handoffs: [],
    model: ref('model-scripted', { script: [] }),
    plugins: [ref('store-memory'), { plugin: undefined, path: '/p/greeter', version: '*', config: { greeting: 'Hi' }, at: 'y' }],
    at: `agents.${name}`,
    ...over,
  })
  const view = (specs: AgentSpec[], secrets: string[] = []): PresetView => ({
    preset: { secrets },
    specs: Object.fromEntries(specs.map((s) => [s.name, s])),
  })
  const live = {
    a: [
      { name: 'model-scripted', dir: '/plugins/model-scripted' },
      { name: 'store-memory', dir: '/plugins/store-memory' },
      { name: 'greeter', dir: '/p/greeter' },
    ],
  }

  it('names a path entry by the plugin that runs from its folder, and sees each kind of change', () => {
    const before = view([spec('a')])
    const greeter = spec('a', {
      plugins: [ref('store-memory'), { path: '/p/greeter', version: '*', config: { greeting: 'Howdy' }, at: 'y' }],
    })
    assert.deepEqual(
      presetChanges(before, view([greeter]), live).swaps.map((s) => [s.agent, s.name, s.changed]),
      [['a', 'greeter', ['config']]],
    )
    const cases: [PresetView, RegExp][] = [
      [view([spec('a', { budgets: { maxSteps: 3 } })]), /agent "a": budgets changed/],
      [view([spec('a', { model: ref('model-openai') })]), /agent "a": the model changed from model-scripted to model-openai/],
      [
        view([spec('a', { plugins: [ref('store-memory', {}, { onDrift: 'pin' }), spec('a').plugins[1]] })]),
        /onDrift of store-memory changed/,
      ],
      [view([spec('a')], ['API_KEY']), /the list of secrets changed/],
      [view([spec('a'), spec('b')]), /agent "b" was added/],
    ]
    for (const [after, reason] of cases) assert.match(presetChanges(before, after, live).replan.join('\n'), reason)
    // An agent that is not loaded here was planned at start: a change to it cannot be swapped in.
    const two = view([spec('a'), spec('b')])
    const changedB = view([spec('a'), spec('b', { model: ref('model-scripted', { script: [{ final: 'x' }] }) })])
    assert.deepEqual(presetChanges(two, changedB, live).replan, ['agent "b" (not started here) changed'])
  })

  it('sees a swap that would change the secrets a plugin names: another manifest (a version swap) or another variable', () => {
    const planned = (secrets: string[] | undefined, config: Record<string, unknown>) =>
      [{ ref: ref('p'), where: 'x', config, entry: { manifest: { name: 'p', version: '1.0.0', secrets } } }] as unknown as PlannedPlugin[]
    const env = { KEY_A: 'a-long-enough-secret-value-0123', KEY_B: 'b-long-enough-secret-value-0123' }
    assert.equal(
      secretsChanged('a', planned(['keyEnv'], { keyEnv: 'KEY_A' }), planned(['keyEnv'], { keyEnv: 'KEY_A', x: 1 }), env),
      undefined,
    )
    assert.equal(
      secretsChanged('a', planned(undefined, { keyEnv: 'KEY_A' }), planned(['keyEnv'], { keyEnv: 'KEY_A' }), env),
      'agent "a": the secrets its plugins name changed (now also KEY_A)',
    )
    assert.match(
      secretsChanged('a', planned(['keyEnv'], { keyEnv: 'KEY_A' }), planned(['keyEnv'], { keyEnv: 'KEY_B' }), env) ?? '',
      /now also KEY_B/,
    )
  })
})
