import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { emptyState, safeRegex, type ContextMessage, type ModelService, type RunEvent, type RunState } from 'cordage'
import { refundAnswer } from '../../../test/helpers.ts'
import { SummaryCompactor, SummaryRef, type SummaryOptions } from '../compactor.ts'
import { namedSeqs, uncovered } from '../coverage.ts'
import { extractiveSummary } from '../extractive.ts'
import manifest, { type Config } from '../manifest.ts'
import { citationsIn, needsOf } from '../needs.ts'
import { describe as describeEvent } from '../recall.ts'
import { deskWith, type Desk } from './test-desk.ts'
import { messageTokens, sumTokens } from '../tokens.ts'

const patterns = { citation: safeRegex('\\[source: ([^\\]]+)\\]'), commitment: safeRegex("\\b(I will|I'll)\\b", 'i') }

// ── unit: what must survive, and the check ──────────────────────────────────────────────────────────

/** A run with one of each kind of item that must survive compaction, and its projection. */
function eventfulRun(): { state: RunState; messages: ContextMessage[] } {
  const state = emptyState('r')
  const t = state.transcript
  t.push({ kind: 'user', text: 'Refund order O-7.', seq: 2 })
  const call = (seq: number, id: string, tool: string, args: unknown) => {
    t.push({
      kind: 'assistant',
      decision: {
        kind: 'tool_calls',
        calls: [{ name: tool, args }],
        text: seq === 20 ? 'I will record a follow-up once the refund is checked.' : undefined,
      },
      actionIds: [id],
      seq,
    })
    state.actions[id] = { id, stepId: id.split('.')[0], tool, args, argsHash: 'h', proposedSeq: seq + 1, status: 'succeeded', attempts: 1 }
  }
  call(6, 's1.a1', 'lookup_policy', { topic: 'refunds' })
  t.push({
    kind: 'observation',
    actionId: 's1.a1',
    tool: 'lookup_policy',
    text: 'Damaged items: 30 days. [source: policy/refunds#2]',
    ok: true,
    seq: 10,
  })
  call(15, 's2.a1', 'lookup_policy', { topic: 'pets' })
  t.push({ kind: 'observation', actionId: 's2.a1', tool: 'lookup_policy', text: 'no policy on "pets"', ok: false, seq: 18 })
  call(20, 's3.a1', 'issue_refund', { orderId: 'O-7', amount: 900 })
  state.actions['s3.a1'].decision = {
    verdict: 'deny',
    ruleId: 'large-refunds',
    policyVersion: 'p@1',
    reason: 'refunds over 100 go to a manager',
    seq: 22,
  }
  state.actions['s3.a1'].status = 'denied'
  t.push({
    kind: 'observation',
    actionId: 's3.a1',
    tool: 'issue_refund',
    text: 'denied: refunds over 100 go to a manager',
    ok: false,
    seq: 23,
  })
  t.push({ kind: 'user', text: 'Only refund 40 EUR then.', seq: 30 })
  t.push({ kind: 'feedback', text: 'The answer was not accepted (missing_evidence): cite a source', seq: 35 })
  call(40, 's5.a1', 'lookup_policy', { topic: 'shipping' })
  t.push({
    kind: 'observation',
    actionId: 's5.a1',
    tool: 'lookup_policy',
    text: 'Shipping: 3 to 5 days. [source: policy/shipping#4]',
    ok: true,
    seq: 44,
  })
  const messages: ContextMessage[] = [{ role: 'system', text: 'sys', source: 0 }]
  for (const e of t) {
    if (e.kind === 'user') messages.push({ role: 'user', text: e.text, source: e.seq })
    else if (e.kind === 'feedback') messages.push({ role: 'user', text: `[harness] ${e.text}`, source: e.seq })
    else if (e.kind === 'observation') messages.push({ role: 'tool', text: e.text, actionId: e.actionId, source: e.seq })
    else
      messages.push({
        role: 'assistant',
        text: e.decision.kind === 'tool_calls' ? (e.decision.text ?? '') : '',
        source: e.seq,
        calls: e.actionIds.map((id) => ({ actionId: id, name: state.actions[id].tool, args: state.actions[id].args })),
      })
  }
  return { state, messages }
}

describe('compaction-summary: what must survive', () => {
  it('finds revisions, constraints, permissions, facts with sources, failures and commitments by seq', () => {
    const { state, messages } = eventfulRun()
    const needs = needsOf(messages, state, patterns)
    assert.deepEqual(
      needs.map((n) => [n.kind, n.seq]),
      [
        ['fact', 10],
        ['failure', 18],
        ['commitment', 20],
        ['permission', 23],
        ['revision', 30],
        ['constraint', 35],
        ['fact', 44],
      ],
    )
    assert.match(
      needs[3].label,
      /issue_refund\(\{"orderId":"O-7","amount":900\}\) was denied by policy \(rule large-refunds\): refunds over 100/,
    )
    assert.deepEqual(needs[0].citations, ['policy/refunds#2'])
  })

  it('counts an item as covered when its seq is named or, for a fact, its citation is copied', () => {
    assert.deepEqual(
      [...namedSeqs('see seq 12, [recall seq 14]; seqs 3, 5 and 9; seq 4/7')].sort((a, b) => a - b),
      [3, 4, 5, 7, 9, 12, 14],
    )
    const { state, messages } = eventfulRun()
    const needs = needsOf(messages, state, patterns)
    const summary =
      'Refunds: 30 days [source: policy/refunds#2]. Pets failed (seq 18). Denied (seq 23), user revised (seq 30), feedback seq 35. Promised a follow-up (seq 20).'
    assert.deepEqual(
      uncovered(summary, needs).map((n) => n.seq),
      [44],
      'the shipping fact is neither cited nor named',
    )
  })

  it('reads citations and commitments in time linear in the text, however the patterns are written', { timeout: 20_000 }, () => {
    // The patterns come from the config as the plugin compiles them (index.ts); on a backtracking
    // engine each of these takes longer than the universe has left.
    const config = (manifest.config as unknown as (c: unknown) => Config)({ citationPattern: '(x+x+)+y', commitmentPattern: '^(a+)+$' })
    const crafted = { citation: safeRegex(config.citationPattern), commitment: safeRegex(config.commitmentPattern, 'i') }
    const state = emptyState('r')
    state.transcript.push({ kind: 'user', text: 'go', seq: 2 })
    state.transcript.push({ kind: 'observation', actionId: 's1.a1', tool: 'lookup', text: 'x'.repeat(50_000), ok: true, seq: 11 })
    state.transcript.push({ kind: 'assistant', decision: { kind: 'final', text: 'a'.repeat(50_000) + 'b' }, actionIds: [], seq: 12 })
    const messages: ContextMessage[] = [
      { role: 'tool', text: '', actionId: 's1.a1', source: 11 },
      { role: 'assistant', text: '', source: 12 },
    ]
    assert.deepEqual(needsOf(messages, state, crafted), [])
    assert.equal(citationsIn('x'.repeat(50_000) + 'y', crafted.citation).length, 1, 'and it matches where it should')
    // The check of the summary reads the model's text with a fixed pattern of ours: linear too.
    assert.deepEqual([...namedSeqs(`seq${' '.repeat(200_000)}x seq #  12`)], [12])
  })

  it('writes an extractive summary that covers every item, shrinking to bare references to fit, or says it cannot', () => {
    const { state, messages } = eventfulRun()
    const needs = needsOf(messages, state, patterns)
    const roomy = extractiveSummary(needs, [6, 10, 15, 18, 20, 23, 30, 35, 40, 44], 400)!
    assert.deepEqual(uncovered(roomy, needs), [])
    assert.match(roomy, /Facts with their sources:\n- seq 10: Damaged items: 30 days\. \[source: policy\/refunds#2\]/)
    assert.match(roomy, /Other summarised events \(recall by seq\): seqs 6, 15, 40/)
    const tight = extractiveSummary(needs, [], 60)!
    assert.deepEqual(uncovered(tight, needs), [], 'still complete at its barest')
    assert.doesNotMatch(tight, /Damaged items/)
    assert.equal(extractiveSummary(needs, [], 10), undefined)
  })
})

// ── unit: the compactor on a hand-made projection ──────────────────────────────────────────────────

function compactor(model?: Partial<ModelService>, options: Partial<SummaryOptions> = {}) {
  return new SummaryCompactor(
    {
      windowTokens: 1000,
      reserveTokens: 100,
      keepRecentShare: 0.3,
      summaryShare: 0.4,
      summaryMaxTokens: 2000,
      useModel: true,
      patterns,
      recall: true,
      cachedRuns: 8,
      ...options,
    },
    () => model as ModelService | undefined,
  )
}

const usage = { inputTokens: 7, outputTokens: 3, costUsd: 0.01 }
const answer = (text: string) => ({ respond: async () => ({ decision: { kind: 'final' as const, text }, usage }) })

describe('compaction-summary: the compactor', () => {
  it('takes the threshold from the window minus the reserve and names its strategy', () => {
    const c = compactor()
    assert.equal(c.threshold, 900)
    assert.equal(c.strategy, 'summary@1')
  })

  it("keeps the head and the recent part verbatim, summarises the rest, and reports the summary's cost", async () => {
    const { state, messages } = eventfulRun()
    const good =
      'Refund 30 days [source: policy/refunds#2]; shipping [source: policy/shipping#4]. Failed: seq 18. Denied: seq 23. Revised: seq 30. Feedback: seq 35. Promise: seq 20.'
    const result = await compactor(answer(good)).compact({
      state,
      projection: { messages, tokens: sumTokens(messages) },
      limit: 250,
      signal: new AbortController().signal,
    })
    assert.deepEqual(result.messages.slice(0, 2), messages.slice(0, 2), 'system prompt and goal')
    const summary = result.messages[2]
    assert.equal(summary.ref, SummaryRef)
    assert.equal(summary.role, 'user')
    assert.match(
      summary.text,
      /^\[summary of earlier steps: \d+ events up to seq \d+, written by the model; the recall tool fetches any of them by seq\]\n/,
    )
    assert.deepEqual(
      result.messages.slice(3),
      messages.slice(-4),
      'the recent part (the revision, the feedback, the last call with its result), verbatim',
    )
    assert.equal(result.tokens, sumTokens(result.messages))
    assert.ok(result.tokens <= 250)
    assert.deepEqual(result.usage, usage)
    assert.deepEqual(result.summarised, [6, 10, 15, 18, 20, 23])
  })

  it("counts with the model's token counter, and splits anew when the counter's revision moves", async () => {
    const { state, messages } = eventfulRun()
    // Two tokens a character: far more than the estimate, so the same limit leaves less room.
    const counter = { name: 'double-chars', revision: 1, count: (text: string) => 2 * text.length }
    const model = { ...answer('Refund 30 days [source: policy/refunds#2].'), tokens: counter }
    const byCounter = (list: ContextMessage[]) => sumTokens(list, counter)
    const c = compactor(model, { useModel: false })
    const request = (limit: number) => ({
      state,
      projection: { messages, tokens: byCounter(messages) },
      limit,
      signal: new AbortController().signal,
    })
    const result = await c.compact(request(1200))
    assert.equal(result.tokens, byCounter(result.messages), 'the result is counted by the model counter')
    assert.ok(result.tokens <= 1200 && result.tokens > sumTokens(result.messages), 'and not by the estimate')
    counter.count = (text: string) => text.length
    counter.revision = 2
    const again = await c.compact(request(600))
    assert.equal(again.tokens, sumTokens(again.messages, counter), 'the new revision counts, not cached figures')
  })

  it("falls back to the extractive summary when the model's misses an item, fails, or answers with no text", async () => {
    const { state, messages } = eventfulRun()
    const request = { state, projection: { messages, tokens: sumTokens(messages) }, limit: 200, signal: new AbortController().signal }
    const models = [
      answer('Looked up refunds [source: policy/refunds#2]. The user revised the amount (seq 30).'),
      {
        respond: async () => {
          throw new Error('provider down')
        },
      },
      { respond: async () => ({ decision: { kind: 'tool_calls' as const, calls: [] }, usage }) },
    ]
    for (const model of models) {
      const result = await compactor(model).compact(request)
      assert.match(result.messages[2].text, /extracted from the run log/)
      assert.deepEqual(uncovered(result.messages[2].text, needsOf(messages.slice(2, -2), state, patterns)), [])
    }
  })

  it('keeps a call that is still open verbatim, with everything after it', async () => {
    const { state, messages } = eventfulRun()
    state.actions['s2.a1'].status = 'running'
    const result = await compactor(undefined, { useModel: false }).compact({
      state,
      projection: { messages, tokens: sumTokens(messages) },
      limit: 400,
      signal: new AbortController().signal,
    })
    const kept = result.messages.slice(3).map((m) => m.source)
    assert.deepEqual(
      kept,
      messages.slice(messages.findIndex((m) => m.source === 15)).map((m) => m.source),
    )
  })

  it('reuses its last summary while it still fits, without asking the model again', async () => {
    const { state, messages } = eventfulRun()
    let asked = 0
    const c = compactor({
      respond: async () => {
        asked++
        return { decision: { kind: 'final', text: 'x' }, usage }
      },
    })
    const request = { state, projection: { messages, tokens: sumTokens(messages) }, limit: 300, signal: new AbortController().signal }
    const first = await c.compact(request)
    const second = await c.compact(request)
    assert.equal(asked, 1)
    assert.deepEqual(second.messages, first.messages)
    assert.equal(second.usage, undefined, 'nothing spent the second time')
  })

  it('throws when not even bare references fit, so the kernel rejects the compaction', async () => {
    const { state, messages } = eventfulRun()
    await assert.rejects(
      compactor(undefined, { useModel: false }).compact({
        state,
        projection: { messages, tokens: sumTokens(messages) },
        limit: 70,
        signal: new AbortController().signal,
      }),
      { code: 'internal_error', message: /summary@1: the summary does not fit/ },
    )
  })

  it('stops when the run is cancelled during the summary request', async () => {
    const { state, messages } = eventfulRun()
    const abort = new AbortController()
    const model = {
      respond: async () => {
        abort.abort(new Error('cancelled'))
        throw new Error('aborted')
      },
    }
    await assert.rejects(
      compactor(model).compact({ state, projection: { messages, tokens: sumTokens(messages) }, limit: 200, signal: abort.signal }),
      /aborted/,
    )
  })
})

// ── through the kernel: a long run on a small window ───────────────────────────────────────────────

let desk: Desk | undefined
afterEach(async () => {
  await desk?.stop()
  desk = undefined
})

const topics = ['shipping', 'returns', 'warranty', 'shipping', 'returns', 'warranty', 'shipping', 'returns', 'warranty', 'refunds']
const lookups = (list: string[]) => list.map((topic) => ({ tool: 'lookup_policy', args: { topic } }))
const paid = { inputTokens: 100, outputTokens: 10, costUsd: 0.001 }
const goodSummary =
  'Looked up shipping [source: policy/shipping#4], returns [source: policy/returns#1] and warranty [source: policy/warranty#1]; none of it answers the refund question yet.'

async function longRun(script: unknown[], summaries: string[], compaction: Record<string, unknown> = {}) {
  desk = await deskWith({
    script: script as never,
    maxSteps: 20,
    model: { usage: paid, summaries },
    context: { plugin: 'context-default' },
    plugins: [{ plugin: 'compaction-summary', config: { windowTokens: 500, reserveTokens: 100, ...compaction } }],
  })
  const state = await desk.agent.run()
  const events = await desk.events(state.runId)
  return { state, events, requests: desk.model().requests }
}

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type)

/** Every seq a compaction left only summarised: its own and, through `extends`, those of the ones before. */
function summarisedAt(events: RunEvent[], end: RunEvent<'compaction/end'>): number[] {
  const earlier = end.data.extends === undefined ? undefined : events.find((e) => e.seq === end.data.extends)
  assert.ok(end.data.extends === undefined || earlier?.type === 'compaction/end', `compaction/end ${end.seq} extends a compaction/end`)
  return [...(earlier ? summarisedAt(events, earlier as RunEvent<'compaction/end'>) : []), ...end.data.summarised]
}

describe('compaction-summary: through the kernel', () => {
  it('continues the same task across compactions: summary from the model, recent part verbatim, its cost in the run usage', async () => {
    const { state, events, requests } = await longRun([...lookups(topics), { final: refundAnswer }], [goodSummary])
    assert.equal(state.status, 'COMPLETED')

    const starts = ofType(events, 'compaction/start')
    const ends = ofType(events, 'compaction/end')
    assert.ok(ends.length >= 2, `${ends.length} compactions`)
    for (const [i, end] of ends.entries()) {
      const start = starts[i]
      assert.equal(start.seq + 1, end.seq, 'compaction/end right after compaction/start')
      assert.equal(events.find((e) => e.seq === end.seq + 1)?.type, 'step/context')
      assert.ok(start.data.strategy === 'summary@1' && end.data.strategy === 'summary@1' && end.producer === 'compaction-summary@1.1.0')
      assert.equal(start.data.limit, 400, 'window 500 minus reserve 100')
      assert.equal(end.data.rejected, undefined)
      assert.ok(end.data.before > 400 && end.data.after <= 400 && end.data.after < end.data.before)
      const summarised = summarisedAt(events, end)
      assert.ok(summarised.length > 0 && summarised.every((s) => s < start.seq))
      if (i > 0) assert.equal(end.data.extends, ends[i - 1].seq, 'each compaction records what it adds to the one before')
    }
    assert.ok(
      ends.some((e) => e.data.summarised.length === 0),
      'a reused summary adds nothing to the record',
    )

    // The summary cost is counted: the run's usage is every step's plus every summary's.
    const summaryUsage = ends.filter((e) => e.data.usage)
    assert.ok(summaryUsage.length >= 1)
    const steps = ofType(events, 'step/model-response').length
    assert.equal(state.usage.inputTokens, (steps + summaryUsage.length) * paid.inputTokens)
    const summaryRequests = requests.filter((r) => r.purpose === 'summary')
    assert.equal(summaryRequests.length, summaryUsage.length, 'a reused summary costs nothing')
    assert.ok(summaryRequests.every((r) => r.tools.length === 0))
    assert.match(summaryRequests[0].messages[1].text, /\[seq 10\] result of s1\.a1: Standard shipping takes 3 to 5 working days/)

    // What the model saw after the first compaction: goal, summary, then the recent part exactly as it was.
    const stepRequests = requests.filter((r) => r.purpose !== 'summary')
    const first = ofType(events, 'step/context').findIndex((e) => e.seq === ends[0].seq + 1)
    const seen = stepRequests[first].messages
    assert.equal(seen[1].text, 'What is the refund window for damaged items?')
    assert.equal(seen[2].ref, SummaryRef)
    assert.match(seen[2].text, /written by the model/)
    assert.ok(seen[2].text.endsWith(goodSummary))
    assert.ok(
      seen.every((m) => !ends[0].data.summarised.includes(m.source)),
      'summarised messages are gone from the projection',
    )
    const lastObservation = state.transcript.filter((t) => t.kind === 'observation' && t.seq < ends[0].seq).at(-1)!
    assert.ok(
      seen.some(
        (m) =>
          m.role === 'tool' &&
          m.source === lastObservation.seq &&
          lastObservation.kind === 'observation' &&
          m.text === lastObservation.text,
      ),
      'the latest result verbatim',
    )
    // The projection's count is exact for what the model received.
    const context = ofType(events, 'step/context')[first]
    assert.equal(
      context.data.tokens,
      seen.reduce((n, m) => n + messageTokens(m), 0),
    )

    // State is not context: the run kept everything the projection dropped.
    assert.equal(state.transcript.filter((t) => t.kind === 'observation').length, topics.length)
    assert.ok(stepRequests.at(-1)!.messages.filter((m) => m.role === 'tool').length < topics.length)
  })

  it("falls back to the extractive summary when the model's summary misses a failed attempt", async () => {
    const script = [...lookups(['shipping', 'pets', 'returns', 'warranty', 'shipping', 'returns', 'refunds']), { final: refundAnswer }]
    const { state, events, requests } = await longRun(script, [goodSummary])
    assert.equal(state.status, 'COMPLETED')
    const failed = ofType(events, 'tool/error')[0]
    const end = ofType(events, 'compaction/end')[0]
    assert.ok(end.data.summarised.includes(failed.seq) && end.data.rejected === undefined)
    assert.deepEqual(end.data.usage, paid, 'the model was asked, and that is paid for')
    const summary = requests
      .find((r) => r.purpose !== 'summary' && r.messages.some((m) => m.ref === SummaryRef))!
      .messages.find((m) => m.ref === SummaryRef)!
    assert.match(summary.text, /extracted from the run log/)
    assert.match(summary.text, /Failed/)
    assert.ok(namedSeqs(summary.text).has(failed.seq), 'the failed attempt is named for recall')
  })

  it('falls back to the extractive summary when the model fails, and the run goes on', async () => {
    const { state, events, requests } = await longRun([...lookups(topics), { final: refundAnswer }], [])
    assert.equal(state.status, 'COMPLETED')
    const ends = ofType(events, 'compaction/end')
    assert.ok(ends.length >= 1 && ends.every((e) => e.data.rejected === undefined && e.data.usage === undefined))
    assert.ok(
      requests.some((r) => r.purpose === 'summary'),
      'the model was asked',
    )
    assert.match(
      requests.find((r) => r.messages.some((m) => m.ref === SummaryRef))!.messages.find((m) => m.ref === SummaryRef)!.text,
      /extracted from the run log[\s\S]*\[source: policy\/shipping#4\]/,
    )
  })

  it("recalls a summarised result from the store by seq, and only from the caller's run", async () => {
    const script = [
      ...lookups(topics),
      { tool: 'recall', args: { seq: 10 } },
      { tool: 'recall', args: { seq: 10, run: 'run_someone_else' } },
      { tool: 'recall', args: { seq: 9999 } },
      { final: refundAnswer },
    ]
    const { state, events } = await longRun(script, [goodSummary])
    assert.equal(state.status, 'COMPLETED')
    const original = events.find((e) => e.seq === 10)!
    assert.ok(original.type === 'tool/end' && original.actionId === 's1.a1')
    const calls = events.filter((e) => (e.type === 'tool/end' || e.type === 'tool/error') && e.data.tool === 'recall')
    const [found, foreign, missing] = calls
    assert.ok(
      ofType(events, 'compaction/end').some((e) => e.seq < found.seq && e.data.summarised.includes(10)),
      'seq 10 was summarised before it was recalled',
    )
    assert.ok(found.type === 'tool/end')
    assert.equal(
      found.data.observation,
      `seq 10 (tool/end): s1.a1 lookup_policy returned: ${original.type === 'tool/end' && original.data.observation}`,
    )
    assert.ok(foreign.type === 'tool/error' && foreign.data.code === 'tool_failed')
    assert.match(
      foreign.data.message,
      new RegExp(`recall reads only this run's events \\(${state.runId}\\), not those of run_someone_else`),
    )
    assert.ok(missing.type === 'tool/error' && /this run has no event seq 9999/.test(missing.data.message))
    assert.ok(
      ofType(events, 'tool/decision')
        .filter((e) => e.actionId === found.actionId)
        .every((e) => e.data.verdict === 'allow'),
      'recall goes through policy like any tool',
    )
  })

  it('tells the model only what it was shown of an event', () => {
    const sealed = {
      seq: 30,
      type: 'verify/end',
      data: { ok: false, code: 'verification_failed', reason: 'hidden test 3 failed', feedback: 'the tests fail', evidence: [] },
    } as unknown as RunEvent
    assert.equal(describeEvent(sealed), 'the answer was not accepted (verification_failed): the tests fail')
    assert.match(describeEvent({ seq: 1, type: 'run/start', data: {} } as unknown as RunEvent), /holds nothing the model was shown/)
  })

  it("brings back a thread's earlier turns (thread/history), as the model was shown them", () => {
    const history = {
      seq: 2,
      type: 'thread/history',
      data: {
        from: 'run_1',
        turns: 1,
        entries: [
          { kind: 'user', text: 'Where is order 7?', seq: 2, turn: 't1' },
          {
            kind: 'assistant',
            decision: { kind: 'tool_calls', calls: [{ name: 'lookup', args: { order: 7 } }] },
            actionIds: ['t1.s1.a1'],
            seq: 2,
            turn: 't1',
          },
          { kind: 'observation', actionId: 't1.s1.a1', tool: 'lookup', text: 'shipped on May 2', ok: true, seq: 2, turn: 't1' },
          { kind: 'assistant', decision: { kind: 'final', text: 'It shipped on May 2.' }, actionIds: [], seq: 2, turn: 't1' },
        ],
      },
    } as unknown as RunEvent
    assert.equal(
      describeEvent(history),
      [
        't1 user: Where is order 7?',
        't1 assistant called lookup({"order":7})',
        't1 t1.s1.a1 lookup returned: shipped on May 2',
        't1 assistant answered: It shipped on May 2.',
      ].join('\n'),
    )
  })
})

// ── unit: the cost of a step in a long run ──────────────────────────────────────────────────────────

describe('compaction-summary: a step of a long run', () => {
  it('reads what the projection gained since the last step, not the whole projection, transcript or actions', async () => {
    // A run of many settled tool calls, projected the way context-basic does: the same message objects
    // from one step to the next, one more exchange each step. Every read of a message, of the transcript
    // and of the actions is counted: a step that re-reads the run costs more the longer the run is.
    let reads = 0
    const counted = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(t, key, receiver) {
          reads++
          return Reflect.get(t, key, receiver)
        },
      })
    const plain = emptyState('long')
    const transcript: RunState['transcript'] = []
    const actions: RunState['actions'] = {}
    const state = { ...plain, transcript: counted(transcript), actions: counted(actions) }
    const messages: ContextMessage[] = [counted({ role: 'system', text: 'sys', source: 0 } as ContextMessage)]
    transcript.push({ kind: 'user', text: 'Go on for a long time.', seq: 2 })
    messages.push(counted({ role: 'user', text: 'Go on for a long time.', source: 2 } as ContextMessage))
    const exchange = (step: number) => {
      const id = `s${step}.a1`
      const seq = step * 10
      const call = { actionId: id, name: 'noop', args: {} }
      transcript.push({ kind: 'assistant', decision: { kind: 'tool_calls', calls: [{ name: 'noop', args: {} }] }, actionIds: [id], seq })
      transcript.push({ kind: 'observation', actionId: id, tool: 'noop', text: 'ok', ok: true, seq: seq + 4 })
      actions[id] = {
        id,
        stepId: `s${step}`,
        tool: 'noop',
        args: {},
        argsHash: 'h',
        proposedSeq: seq + 1,
        status: 'succeeded',
        attempts: 1,
      }
      messages.push(counted({ role: 'assistant', text: '', source: seq, calls: [call] } as ContextMessage))
      messages.push(counted({ role: 'tool', text: 'ok', actionId: id, source: seq + 4 } as ContextMessage))
    }
    let summaries = 0
    const c = compactor({
      respond: async () => {
        summaries++
        return { decision: { kind: 'final', text: 'The no-op tool answered ok each time.' }, usage }
      },
    })
    let tokens = sumTokens(messages)
    /** One step's compaction; only what the compactor reads is counted. */
    const step = async () => {
      tokens += sumTokens(messages.slice(-2))
      const projection = { messages: messages.slice(), tokens }
      reads = 0
      return c.compact({ state, projection, limit: 400, signal: new AbortController().signal })
    }
    const long = 3000
    for (let s = 1; s <= long; s++) exchange(s)
    tokens = sumTokens(messages.slice(0, -2))
    await step()
    const perStep: number[] = []
    for (let s = long + 1; s <= long + 60; s++) {
      exchange(s)
      const result = await step()
      perStep.push(reads)
      assert.ok(result.tokens <= 400)
      assert.equal(result.messages.at(-1)!.source, s * 10 + 4, 'the newest result verbatim')
    }
    assert.ok(summaries >= 3, `new summaries were written too, not only reused (${summaries})`)
    assert.ok(Math.max(...perStep) < 400, `reads per step: at most ${Math.max(...perStep)}, in a run of ${messages.length} messages`)
  })
})
