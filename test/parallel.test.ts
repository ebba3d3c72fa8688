/**
 * Parallel tool calls: the independent calls of one step run side by side, calls whose footprints
 * overlap run one after another, and what is recorded does not depend on which call finished first.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { supportDesk, type Harness } from './helpers.ts'
import { workbenchLog } from './fixtures/plugins/workbench/index.ts'

const workbench = { path: resolve(import.meta.dirname, 'fixtures/plugins/workbench'), config: { timeoutMs: 1500 } }
const rules = [
  { id: 'secrets-need-approval', verdict: 'ask', priority: 1, match: { tool: 'read_slowly', args: { label: 'secret' } } },
  { id: 'forbidden', verdict: 'deny', priority: 1, match: { tool: 'read_slowly', args: { label: 'forbidden' } } },
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'notes', verdict: 'allow', match: { tool: 'write_*' } },
  { id: 'followups-need-approval', verdict: 'ask', match: { tool: 'record_followup' } },
]

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
  workbenchLog.length = 0
})

type Call = { tool: string; args: Record<string, unknown> }
async function runStep(calls: Call[], options: { parallel?: boolean } = {}) {
  harness = await supportDesk({
    script: [{ calls }, { final: 'Done.' }],
    rules,
    verifier: { minCount: 0 },
    plugins: [workbench],
    parallelTools: options.parallel,
  })
  const state = await harness.agent.run('work')
  const events = await harness.events(state.runId)
  return { state, events }
}

/** The tool events of the run as `type action`, in record order. */
function toolTrace(events: RunEvent[]): string[] {
  return events.filter((e) => ['tool/start', 'tool/end', 'tool/error'].includes(e.type)).map((e) => `${e.type} ${e.actionId}`)
}

describe('parallel tool calls', () => {
  it('runs two reads side by side: each waits for the other to arrive, which one by one would never end', async () => {
    const { state, events } = await runStep([
      { tool: 'meet', args: { name: 'a', waitFor: 'b' } },
      { tool: 'meet', args: { name: 'b', waitFor: 'a' } },
    ])
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(toolTrace(events), ['tool/start s1.a1', 'tool/start s1.a2', 'tool/end s1.a1', 'tool/end s1.a2'])
  })

  it('one by one (parallelTools: false) the same step times out: the test above can fail', async () => {
    const { state, events } = await runStep(
      [
        { tool: 'meet', args: { name: 'a', waitFor: 'b' } },
        { tool: 'meet', args: { name: 'b', waitFor: 'a' } },
      ],
      { parallel: false },
    )
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'tool_timeout')
    // a1 never returns; the run ends FAILED and a2, which never started, is closed with it.
    assert.deepEqual(toolTrace(events), ['tool/start s1.a1', 'tool/error s1.a1', 'tool/error s1.a2'])
  })

  it('records outcomes in proposal order, whichever call finishes first', async () => {
    const { state, events } = await runStep([
      { tool: 'read_slowly', args: { label: 'slow', ms: 120 } },
      { tool: 'read_slowly', args: { label: 'fast', ms: 0 } },
      { tool: 'fail_fast', args: {} },
    ])
    assert.equal(state.status, 'COMPLETED', state.reason)
    // The fast one really finished first...
    assert.deepEqual(workbenchLog, ['read fast', 'read slow'])
    // ...and the record, the state and so the model's next context still follow the proposal.
    assert.deepEqual(toolTrace(events), [
      'tool/start s1.a1',
      'tool/start s1.a2',
      'tool/start s1.a3',
      'tool/end s1.a1',
      'tool/end s1.a2',
      'tool/error s1.a3',
    ])
    const observations = state.transcript
      .filter((t) => t.kind === 'observation')
      .map((t) => t.kind === 'observation' && [t.actionId, t.text])
    assert.deepEqual(observations, [
      ['s1.a1', 'slow'],
      ['s1.a2', 'fast'],
      ['s1.a3', 'fail_fast failed (tool_failed): it always fails'],
    ])
  })

  it('keeps the observations of a step in proposal order when a denied call settles before the calls around it ran', async () => {
    const { state, events } = await runStep([
      { tool: 'read_slowly', args: { label: 'first', ms: 30 } },
      { tool: 'read_slowly', args: { label: 'forbidden', ms: 0 } },
      { tool: 'read_slowly', args: { label: 'third', ms: 0 } },
    ])
    assert.equal(state.status, 'COMPLETED', state.reason)
    // The denial is on record first (it is decided before anything runs)...
    assert.deepEqual(
      events.filter((e) => e.type === 'tool/error' || e.type === 'tool/end').map((e) => e.actionId),
      ['s1.a2', 's1.a1', 's1.a3'],
    )
    // ...but the model reads the results in the order it asked for them.
    const observations = state.transcript.filter((t) => t.kind === 'observation').map((t) => t.kind === 'observation' && t.actionId)
    assert.deepEqual(observations, ['s1.a1', 's1.a2', 's1.a3'])
  })

  it('runs writes to different files together, and writes to the same file one after another', async () => {
    const { state, events } = await runStep([
      { tool: 'write_note', args: { file: 'notes/a.md', text: '1', ms: 300 } },
      { tool: 'write_note', args: { file: 'notes/b.md', text: '2', ms: 0 } },
      { tool: 'write_note', args: { file: 'notes/a.md', text: '3', ms: 0 } },
    ])
    assert.equal(state.status, 'COMPLETED', state.reason)
    // a1 and a2 share a wave; a3 overlaps a1 (same file) and starts only once that wave is over.
    assert.deepEqual(toolTrace(events), [
      'tool/start s1.a1',
      'tool/start s1.a2',
      'tool/end s1.a1',
      'tool/end s1.a2',
      'tool/start s1.a3',
      'tool/end s1.a3',
    ])
    assert.deepEqual(workbenchLog, [
      'start notes/a.md 1',
      'start notes/b.md 2',
      'end notes/b.md 2',
      'end notes/a.md 1',
      'start notes/a.md 3',
      'end notes/a.md 3',
    ])
  })

  it('keeps a write under a folder apart from a write of the folder, and a read apart from writes', async () => {
    const { events } = await runStep([
      { tool: 'write_note', args: { file: 'notes', text: '1' } },
      { tool: 'write_note', args: { file: 'notes/a.md', text: '2' } },
      { tool: 'read_slowly', args: { label: 'x', ms: 0 } },
    ])
    assert.deepEqual(toolTrace(events), [
      'tool/start s1.a1',
      'tool/end s1.a1',
      'tool/start s1.a2',
      'tool/end s1.a2',
      'tool/start s1.a3',
      'tool/end s1.a3',
    ])
  })

  it('runs a write that names no footprint alone, after the calls before it', async () => {
    const { state, events } = await runStep([
      { tool: 'read_slowly', args: { label: 'x', ms: 0 } },
      { tool: 'read_slowly', args: { label: 'y', ms: 0 } },
      { tool: 'write_anywhere', args: { text: 'z' } },
      { tool: 'read_slowly', args: { label: 'w', ms: 0 } },
    ])
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(toolTrace(events), [
      'tool/start s1.a1',
      'tool/start s1.a2',
      'tool/end s1.a1',
      'tool/end s1.a2',
      'tool/start s1.a3',
      'tool/end s1.a3',
      'tool/start s1.a4',
      'tool/end s1.a4',
    ])
  })

  it('runs writes that name no footprint one after another, each decided only when its turn comes (docs/concepts/architecture.md)', async () => {
    const { state, events } = await runStep([
      { tool: 'write_anywhere', args: { text: 'a' } },
      { tool: 'write_anywhere', args: { text: 'b' } },
      { tool: 'write_anywhere', args: { text: 'c' } },
    ])
    assert.equal(state.status, 'COMPLETED', state.reason)
    const trace = events.filter((e) => ['tool/decision', 'tool/start', 'tool/end'].includes(e.type)).map((e) => `${e.type} ${e.actionId}`)
    assert.deepEqual(trace, [
      'tool/decision s1.a1',
      'tool/start s1.a1',
      'tool/end s1.a1',
      'tool/decision s1.a2',
      'tool/start s1.a2',
      'tool/end s1.a2',
      'tool/decision s1.a3',
      'tool/start s1.a3',
      'tool/end s1.a3',
    ])
    assert.deepEqual(workbenchLog, ['anywhere a', 'anywhere b', 'anywhere c'])
  })

  it('decides the calls before running them, and puts one that needs approval to a person once the others ran', async () => {
    const { state, events } = await runStep([
      { tool: 'read_slowly', args: { label: 'x', ms: 0 } },
      { tool: 'lookup_policy', args: { topic: 'refunds' } },
      { tool: 'read_slowly', args: { label: 'secret', ms: 0 } },
      { tool: 'read_slowly', args: { label: 'later', ms: 0 } },
    ])
    assert.equal(state.status, 'WAITING_APPROVAL')
    assert.equal(state.waiting?.actionId, 's1.a3')
    const trace = events
      .filter((e) => e.actionId)
      .map((e) => `${e.type} ${e.actionId}`)
      .filter((t) => !t.startsWith('tool/proposed'))
    assert.deepEqual(trace, [
      'tool/decision s1.a1',
      'tool/decision s1.a2',
      'tool/decision s1.a3',
      'tool/start s1.a1',
      'tool/start s1.a2',
      'tool/end s1.a1',
      'tool/end s1.a2',
      'tool/approval-requested s1.a3',
    ])
    // The call after the one waiting is decided and run only once the person answered.
    const done = await (await harness!.agent.approve(state.runId, 's1.a3', { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    const after = (await harness!.events(state.runId)).filter((e) => e.actionId === 's1.a4').map((e) => e.type)
    assert.deepEqual(after, ['tool/proposed', 'tool/decision', 'tool/start', 'tool/end'])
  })

  it('cancels every call of a wave', async () => {
    harness = await supportDesk({
      script: [
        {
          calls: [
            { tool: 'read_slowly', args: { label: 'a', ms: 5000 } },
            { tool: 'read_slowly', args: { label: 'b', ms: 5000 } },
          ],
        },
        { final: 'Done.' },
      ],
      rules,
      verifier: { minCount: 0 },
      plugins: [{ ...workbench, config: { timeoutMs: 10_000 } }],
    })
    harness.app.root.on('tool/start', (e: RunEvent) => {
      if (e.actionId === 's1.a2') setTimeout(() => harness!.agent.cancel(e.runId, { by: 'test' }), 20)
    })
    const state = await harness.agent.run('work')
    assert.equal(state.status, 'CANCELLED')
    const errors = (await harness.events(state.runId)).filter((e) => e.type === 'tool/error')
    assert.deepEqual(
      errors.map((e) => e.type === 'tool/error' && [e.actionId, e.data.code]),
      [
        ['s1.a1', 'cancelled'],
        ['s1.a2', 'cancelled'],
      ],
    )
    assert.deepEqual(workbenchLog, [])
  })
})
