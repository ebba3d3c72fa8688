/**
 * State is not context (invariant 5): compaction shrinks only what the model sees, never run state, and
 * a compacted projection that loses the goal or splits a tool call from its result is discarded.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { refundAnswer, supportDesk, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

const fixture = (name: string) => ({ path: resolve(import.meta.dirname, 'fixtures/plugins', name) })
const script = [
  { tool: 'lookup_policy', args: { topic: 'shipping' } },
  { tool: 'lookup_policy', args: { topic: 'returns' } },
  { tool: 'lookup_policy', args: { topic: 'warranty' } },
  { tool: 'lookup_policy', args: { topic: 'refunds' } },
  { final: refundAnswer },
]

describe('compaction', () => {
  it('shrinks the projection over the limit while run state keeps everything', async () => {
    harness = await supportDesk({ script, contextTokens: 120, plugins: [fixture('compactor-keep-recent')] })
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    const events = await harness.events(state.runId)
    const compacted = events.filter((e) => e.type === 'compaction/end')
    assert.ok(compacted.length >= 2)
    for (const e of compacted)
      assert.ok(
        e.type === 'compaction/end' &&
          e.data.after < e.data.before &&
          e.data.strategy === 'compactor-keep-recent@1.0.0' &&
          e.producer === 'compactor-keep-recent@1.0.0',
      )
    // Each compaction is announced before it happens, and ends before the step's context is recorded.
    const starts = events.filter((e) => e.type === 'compaction/start').map((e) => e.seq)
    assert.deepEqual(
      starts.map((seq) => events.find((e) => e.seq === seq + 1)?.type),
      starts.map(() => 'compaction/end'),
    )
    assert.ok(starts.every((seq) => events.find((e) => e.seq === seq + 2)?.type === 'step/context'))
    const last = harness.model().requests.at(-1)!
    assert.equal(last.messages[1].text, 'refund window?', 'the goal is still there')
    assert.ok(last.messages.length < state.transcript.length + 1, 'the model saw less than the run holds')
    assert.equal(state.transcript.filter((t) => t.kind === 'observation').length, 4, 'state kept every observation')
  })

  it('discards a compaction that splits a tool call from its result', async () => {
    harness = await supportDesk({ script, contextTokens: 120, plugins: [fixture('compactor-drops-results')] })
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    const compacted = (await harness.events(state.runId)).filter((e) => e.type === 'compaction/end')
    assert.ok(compacted.length >= 1, 'each attempt is on record')
    for (const e of compacted)
      assert.ok(e.type === 'compaction/end' && /lost its result|the last message is gone/.test(e.data.rejected ?? ''))
    const last = harness.model().requests.at(-1)!
    assert.equal(last.messages.filter((m) => m.role === 'tool').length, 4, 'the model saw every result')
  })

  it('records what each compaction adds to the one before, so a long run does not record every summarised seq again at each step', async () => {
    const topics = ['shipping', 'returns', 'warranty', 'refunds']
    const long = [
      ...Array.from({ length: 16 }, (_, i) => ({ tool: 'lookup_policy', args: { topic: topics[i % 4] } })),
      { final: refundAnswer },
    ]
    harness = await supportDesk({
      script: long,
      contextTokens: 120,
      budgets: { maxSteps: 20 },
      plugins: [fixture('compactor-keep-recent')],
    })
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await harness.events(state.runId)
    const ends = events.filter((e) => e.type === 'compaction/end')
    assert.ok(ends.length >= 10, `${ends.length} compactions`)
    // The compactor keeps the last four messages and lists every message before them as summarised.
    const bySeq = new Map(events.map((e) => [e.seq, e]))
    const summarisedAt = (seq: number): number[] => {
      const end = bySeq.get(seq)!
      assert.ok(end.type === 'compaction/end')
      return [...(end.data.extends === undefined ? [] : summarisedAt(end.data.extends)), ...end.data.summarised]
    }
    const requests = harness.model().requests
    for (const [i, end] of ends.entries()) {
      assert.ok(end.type === 'compaction/end')
      if (i > 0) assert.equal(end.data.extends, ends[i - 1].seq)
      // What the model was shown at that step, and what the record says it was not shown verbatim.
      const context = events.find((e) => e.seq === end.seq + 1)!
      const shown = requests[events.filter((e) => e.type === 'step/context' && e.seq <= context.seq).length - 1].messages
      const summarised = summarisedAt(end.seq)
      assert.ok(summarised.every((s) => !shown.some((m) => m.source === s)))
    }
    const recorded = ends.reduce((n, e) => n + (e.type === 'compaction/end' ? e.data.summarised.length : 0), 0)
    const last = summarisedAt(ends.at(-1)!.seq)
    assert.ok(last.length >= 20, `${last.length} seqs summarised in the end`)
    assert.equal(recorded, new Set(last).size, 'each summarised seq is recorded once')
  })

  it('does not compact a projection under the limit', async () => {
    harness = await supportDesk({ script, contextTokens: 100_000, plugins: [fixture('compactor-keep-recent')] })
    const state = await harness.agent.run('refund window?')
    assert.equal((await harness.events(state.runId)).filter((e) => e.type.startsWith('compaction/')).length, 0)
  })
})
