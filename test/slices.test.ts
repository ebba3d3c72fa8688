/**
 * Plugins keep their own state in slices of run state (issue 28, item 3): a tool's `ToolResult.state`
 * and a progress verdict's `state` are checked, recorded in `slice/update` under the plugin's name, and
 * replayed from the log without the plugin's code. A malformed update fails closed; a stored one is
 * checked again; schema-1 logs (reveals, step/no-progress) still replay into their producer's slice.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { z } from 'zod'
import { CordageError, defineTool, replay, sliceOf, type RunEvent, type ToolsService } from 'cordage'
import { replayFrom, StateVersion } from '../core/kernel/state.ts'
import { DefaultRules, refundAnswer, supportDesk, type DeskOptions, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

const sliceDesk = { path: resolve(import.meta.dirname, 'fixtures/plugins/slice-desk') }
const keep = (mode: string, value = 'a') => ({ calls: [{ tool: 'keep', args: { mode, value } }] })
const lookup = { calls: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }] }
const rules = [
  { id: 'keep', verdict: 'allow', match: { tool: 'keep' } },
  { id: 'keep-write', verdict: 'allow', match: { tool: 'keep_write' } },
  ...DefaultRules,
]
const written: string[] = ((globalThis as Record<string, unknown>).__sliceDeskWrites ??= []) as string[]

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
    // Read back from a snapshot (a JSON copy, as a store keeps it): frozen all the same, and the same slices.
    const snapshot = { seq: state.lastSeq, version: StateVersion, state: JSON.parse(JSON.stringify(state)) }
    const loaded = replayFrom(state.runId, snapshot, [])!
    assert.deepEqual(loaded.slices, state.slices)
    const notes = (sliceOf(loaded, 'slice-desk') as { notes: string[] }).notes
    assert.ok(Object.isFrozen(sliceOf(loaded, 'slice-desk')) && Object.isFrozen(notes), 'a slice from a snapshot is read-only too')
    assert.throws(() => notes.push('c'), TypeError)
  })

  it('adds to a list only what it does not hold yet (add), where push appends everything', async () => {
    const script = [
      keep('add', 'a'),
      keep('add', 'b'),
      keep('add', 'a'),
      keep('push', 'a'),
      keep('push', 'a'),
      lookup,
      { final: refundAnswer },
    ]
    const { state } = await run(script)
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(sliceOf(state, 'slice-desk'), { seen: ['a', 'b'], notes: ['a', 'a'] })
  })

  for (const [mode, problem] of [
    ['shape', /a slice update has only set, push and add, got "remove"/],
    ['push-not-list', /push\.notes is a list of values to append/],
    ['getter', /update\.set\.last is a getter/],
    ['proto', /update\.set has a key "__proto__", which is refused/],
    ['huge', /one update may take 65536/],
    ['wide', /the update takes 819\d\d bytes of JSON; one update may take 65536/],
    ['empty', /a slice update changes something/],
    ['reveals', /returned reveals, which tools contract 1\.2\.0 replaced: return state: \{ add: \{ revealed/],
  ] as const) {
    it(`records the call without its update when a tool returns ${mode}, then fails the run (internal_error)`, async () => {
      const { state, events } = await run([keep(mode), { final: refundAnswer }])
      assert.equal(state.status, 'FAILED')
      assert.equal(state.failureCode, 'internal_error')
      assert.match(state.reason!, /tool "keep"/)
      assert.match(state.reason!, problem)
      assert.equal(updates(events).length, 0)
      assert.equal(state.slices, undefined)
      const end = events.find((e) => e.type === 'tool/end')
      assert.equal(end?.actionId, 's1.a1', 'the call ran, and its outcome is on record')
      assert.ok(!events.some((e) => e.type === 'step/start' && e.stepId === 's2'), 'no step after it')
    })
  }

  it('holds a slice to 256 KiB: the update that would pass it is left out and the run fails', async () => {
    const script = [keep('big', 'a'), keep('big', 'b'), keep('big', 'c'), keep('big', 'd'), keep('big', 'e'), { final: refundAnswer }]
    const { state, events } = await run(script)
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'internal_error')
    assert.match(state.reason!, /slice-desk@1\.0\.0 would keep 3\d{5} bytes in its slice of run state; a slice may take 262144/)
    assert.equal(updates(events).length, 4)
    assert.equal((sliceOf(state, 'slice-desk').notes as string[]).length, 4)
  })

  it('keeps a wave neighbour committed when one call of the wave returns a malformed update', async () => {
    written.length = 0
    const wave = {
      calls: [
        { tool: 'keep_write', args: { mode: 'shape', value: 'x' } },
        { tool: 'keep_write', args: { mode: 'push', value: 'y' } },
      ],
    }
    const { state, events } = await run([wave, { final: refundAnswer }], { parallelTools: true })
    assert.deepEqual(written.sort(), ['x', 'y'], 'both writes ran')
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'internal_error')
    const ends = events.filter((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')
    assert.deepEqual(
      ends.map((e) => [e.actionId, e.data.receipt]),
      [
        ['s1.a1', 'W-x'],
        ['s1.a2', 'W-y'],
      ],
    )
    assert.ok(!events.some((e) => e.type === 'tool/error'), 'no committed write is reported as failed or unknown')
    assert.deepEqual(
      updates(events).map((e) => e.actionId),
      ['s1.a2'],
    )
    assert.deepEqual(sliceOf(state, 'slice-desk'), { notes: ['y'] })
  })

  it('gives a tool registered outside any plugin no slice, whatever owner it claims', async () => {
    const forgedRules = [{ id: 'f', verdict: 'allow', match: { tool: 'forged' } }, ...DefaultRules]
    harness = await supportDesk({
      script: [{ calls: [{ tool: 'forged', args: {} }] }, { final: refundAnswer }],
      rules: forgedRules,
      plugins: ['loop-guard'],
    })
    const forged = defineTool({
      name: 'forged',
      description: 'Claims to be loop-guard.',
      sideEffect: 'none',
      input: z.object({}),
      async run() {
        return { output: 'hi', state: { push: { interventions: [{ detector: 'repeat', response: 'feedback', afterStep: 99 }] } } }
      },
    })
    ;(harness.agent.ctx as unknown as { tools: ToolsService }).tools.register({ ...forged, owner: 'loop-guard@1.1.0' })
    const state = await harness.agent.run()
    const events = await harness.events(state.runId)
    assert.equal(state.status, 'FAILED')
    assert.match(state.reason!, /tool "forged" returned state Cordage cannot record \(the tool has no plugin behind it/)
    assert.deepEqual(sliceOf(state, 'loop-guard'), {})
    assert.equal(updates(events).length, 0)
    const end = events.find((e) => e.type === 'tool/end')
    assert.match(end?.producer ?? '', /^kernel@/, 'its outcome is not recorded as loop-guard')
  })
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

  it('records the verdict state under the progress service before each step, and hands the slice back', async () => {
    const { state, events } = await run([keep('push'), lookup, { final: refundAnswer }], { plugins: [sliceDesk, rogue('continue-state')] })
    assert.equal(state.status, 'COMPLETED', state.reason)
    const found = updates(events).filter((e) => e.producer === 'rogue-progress@1.0.0')
    assert.equal(found.length, 3)
    // Each check saw what the ones before it kept.
    assert.deepEqual(sliceOf(state, 'rogue-progress').checks, [0, 1, 2])
    for (const update of found) assert.equal(events[update.seq].type, 'step/start', 'kept just before the step it let start')
  })

  it('fails the run verdict_invalid on a verdict whose state is not an update', async () => {
    const { state, events } = await run([keep('push'), { final: refundAnswer }], { plugins: [sliceDesk, rogue('bad-state')] })
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'verdict_invalid')
    assert.match(state.reason!, /rogue-progress@1\.0\.0 answered something that is not a verdict: state: push\.checks is a list/)
    assert.equal(updates(events).filter((e) => e.producer.startsWith('rogue-progress')).length, 0)
  })
})
