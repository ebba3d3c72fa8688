/**
 * Plugins keep their own state in slices of run state (issue 28, item 3): a tool's `ToolResult.state`
 * and a progress verdict's `state` are checked, recorded in `slice/update` under the plugin's name, and
 * replayed from the log without the plugin's code. A malformed update fails closed; a stored one is
 * checked again; schema-1 logs (reveals, step/no-progress) still replay into their producer's slice.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { CordageError, replay, sliceOf, type RunEvent } from 'cordage'
import { DefaultRules, refundAnswer, supportDesk, type DeskOptions, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

const sliceDesk = { path: resolve(import.meta.dirname, 'fixtures/plugins/slice-desk') }
const keep = (mode: string, value = 'a') => ({ calls: [{ tool: 'keep', args: { mode, value } }] })
const lookup = { calls: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }] }
const rules = [{ id: 'keep', verdict: 'allow', match: { tool: 'keep' } }, ...DefaultRules]

async function run(script: DeskOptions['script'], options: Partial<DeskOptions> = {}) {
  harness = await supportDesk({ script, rules, plugins: [sliceDesk], ...options })
  const state = await harness.agent.run()
  return { state, events: await harness.events(state.runId) }
}

const updates = (events: RunEvent[]) => events.filter((e): e is RunEvent<'slice/update'> => e.type === 'slice/update')

describe('a tool keeps state in its plugin slice', () => {
  it('records each update under the plugin, just before the call tool/end, and replays the same slices', async () => {
    const { state, events } = await run([keep('push', 'a'), keep('set', 'x'), keep('push', 'b'), lookup, { final: refundAnswer }])
    assert.equal(state.status, 'COMPLETED', state.reason)
    const found = updates(events)
    assert.equal(found.length, 3)
    for (const update of found) {
      assert.equal(update.producer, 'slice-desk@1.0.0')
      const next = events[events.indexOf(update) + 1]
      assert.deepEqual([next.type, next.actionId], ['tool/end', update.actionId])
    }
    // The key named like another plugin is a key of this plugin slice: a tool writes its own slice only.
    assert.deepEqual(state.slices, {
      'slice-desk': { notes: ['a', 'b'], last: 'x', 'tool-search': { revealed: ['refund_payment'] } },
    })
    assert.deepEqual(sliceOf(state, 'tool-search'), {})
    assert.deepEqual(replay(state.runId, events).slices, state.slices)
    assert.ok(Object.isFrozen(sliceOf(state, 'slice-desk')), 'a slice is read-only to whoever reads state')
  })

  for (const [mode, problem] of [
    ['shape', /a slice update has only set and push, got "add"/],
    ['push-not-list', /push\.notes is a list of values to append/],
    ['getter', /update\.set\.last is a getter/],
    ['proto', /set key "__proto__" is not a name/],
    ['huge', /one update may take 65536/],
    ['reveals', /returned reveals, which tools contract 1\.2\.0 replaced: return state: \{ push: \{ revealed/],
  ] as const) {
    it(`fails the run (internal_error) when a tool returns ${mode}, and records no update`, async () => {
      const { state, events } = await run([keep(mode), { final: refundAnswer }])
      assert.equal(state.status, 'FAILED')
      assert.equal(state.failureCode, 'internal_error')
      assert.match(state.reason!, /tool "keep"/)
      assert.match(state.reason!, problem)
      assert.equal(updates(events).length, 0)
      assert.equal(state.slices, undefined)
    })
  }
})

describe('a stored update is checked again on replay', () => {
  it('refuses a slice/update row that is not an update (invalid_event)', async () => {
    const { state, events } = await run([keep('push'), { final: refundAnswer }])
    const at = events.findIndex((e) => e.type === 'slice/update')
    const tampered = events.map((e, i) => (i === at ? { ...e, data: { set: 5 } } : e)) as RunEvent[]
    assert.throws(
      () => replay(state.runId, tampered),
      (error: unknown) =>
        error instanceof CordageError && error.code === 'invalid_event' && /slice\/update\): set maps keys to values/.test(error.message),
    )
  })
})

describe('schema-1 logs replay into their producer slice', () => {
  it('reads a schema-1 tool/end reveals as a push to revealed, and ignores reveals on a schema-2 event', async () => {
    const { state, events } = await run([keep('push'), { final: refundAnswer }])
    const end = events.findIndex((e) => e.type === 'tool/end')
    const old = (schema: number) =>
      events
        .filter((e) => e.type !== 'slice/update')
        .map((e, i) => ({
          ...e,
          seq: i + 1,
          ...(e.type === 'tool/end' ? { schema, data: { ...e.data, reveals: ['lookup_policy'] } } : {}),
        })) as RunEvent[]
    assert.ok(end > 0)
    assert.deepEqual(replay(state.runId, old(1)).slices, { 'slice-desk': { revealed: ['lookup_policy'] } })
    assert.equal(replay(state.runId, old(2)).slices, undefined)
  })

  it('reads a schema-1 step/no-progress as a push to its producer interventions', async () => {
    const { state, events } = await run([keep('push'), { final: refundAnswer }])
    const stalled = {
      ...events.at(-1)!,
      seq: events.length + 1,
      type: 'step/no-progress',
      producer: 'loop-guard@1.2.0',
      data: { detector: 'repeat', response: 'feedback', reason: 'same call', thresholds: { times: 3 }, text: 'stop' },
    }
    const legacy = replay(state.runId, [...events, { ...stalled, schema: 1 }] as RunEvent[])
    assert.deepEqual(sliceOf(legacy, 'loop-guard').interventions, [
      { detector: 'repeat', response: 'feedback', afterStep: state.steps, seq: stalled.seq },
    ])
    assert.deepEqual(sliceOf(replay(state.runId, [...events, { ...stalled, schema: 2 }] as RunEvent[]), 'loop-guard'), {})
  })
})

describe('a progress verdict keeps state in the service slice', () => {
  const rogue = (mode: string) => ({ path: resolve(import.meta.dirname, 'fixtures/plugins/rogue-progress'), config: { mode } })

  it('records the verdict state under the progress service before each step', async () => {
    const { state, events } = await run([keep('push'), lookup, { final: refundAnswer }], { plugins: [sliceDesk, rogue('continue-state')] })
    assert.equal(state.status, 'COMPLETED', state.reason)
    const found = updates(events).filter((e) => e.producer === 'rogue-progress@1.0.0')
    assert.ok(found.length >= 1)
    assert.deepEqual(
      sliceOf(state, 'rogue-progress').checks,
      found.map(() => 1),
    )
  })

  it('fails the run verdict_invalid on a verdict whose state is not an update', async () => {
    const { state, events } = await run([keep('push'), { final: refundAnswer }], { plugins: [sliceDesk, rogue('bad-state')] })
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'verdict_invalid')
    assert.match(state.reason!, /rogue-progress@1\.0\.0 answered something that is not a verdict: state: push\.checks is a list/)
    assert.equal(updates(events).filter((e) => e.producer.startsWith('rogue-progress')).length, 0)
  })
})
