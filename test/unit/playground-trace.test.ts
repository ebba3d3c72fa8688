/**
 * playground/trace.ts: a run's events as a tree of timed spans. Hand-written logs, one per shape the
 * trace view must draw: a tool call retried after a transient failure and an action approved, a run
 * waiting (open spans), a model call retried, a denied action, a run cancelled mid-step, a compaction.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { capTrace, DefaultSpanLimit, traceOf, type Span } from '../../playground/trace.ts'

const T0 = 1_000_000
const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.001 }

/** A log written by hand: each entry is [ms after T0, type, data, ids]; seqs are 1, 2, 3, ... */
function log(entries: [number, string, Record<string, unknown>, { t?: string; s?: string; a?: string }?][]): RunEvent[] {
  return entries.map(
    ([at, type, data, ids], i) =>
      ({
        seq: i + 1,
        time: T0 + at,
        runId: 'run_x',
        turnId: ids?.t,
        stepId: ids?.s,
        actionId: ids?.a,
        schema: 1,
        producer: 'kernel@0.1.0',
        type,
        data,
      }) as unknown as RunEvent,
  )
}

const t1 = { t: 't1' }
const s1 = { t: 't1', s: 's1' }
const a1 = { t: 't1', s: 's1', a: 's1.a1' }
const start: Parameters<typeof log>[0] = [
  [0, 'run/start', { agent: 'desk', task: 'do it', plugins: {}, services: {}, budgets: {} }],
  [1, 'turn/start', { input: 'do it' }, t1],
  [2, 'step/start', { index: 1 }, s1],
  [5, 'step/context', { messages: 2, tokens: 40, tools: ['check'] }, s1],
  [5, 'step/model-request', { model: 'm@1', messages: 2, tools: ['check'], attempt: 1 }, s1],
]

const shape = (spans: Span[]) =>
  spans.map((s) => `${'  '.repeat(s.depth)}${s.id} ${s.status} ${s.end === undefined ? 'open' : s.end - s.start}`)

describe('traceOf', () => {
  it('nests a retried tool call and an approved action under their step, with durations, statuses and usage summed up the tree', () => {
    const trace = traceOf(
      log([
        ...start,
        [105, 'step/model-response', { decision: { kind: 'tool_calls', calls: [{ name: 'check', args: {} }] }, usage }, s1],
        [106, 'tool/proposed', { tool: 'check', args: {}, argsHash: 'h' }, a1],
        [107, 'tool/decision', { verdict: 'ask', ruleId: 'r', policyVersion: 'p@1', reason: 'why' }, a1],
        [108, 'tool/approval-requested', { tool: 'check', args: {}, argsHash: 'h', policyVersion: 'p@1', ruleId: 'r', reason: 'why' }, a1],
        [108, 'run/paused', { status: 'WAITING_APPROVAL', reason: 'waits' }, s1],
        [500, 'tool/approval-decided', { approved: true, by: 'alice' }, a1],
        [500, 'run/resumed', { from: 'WAITING_APPROVAL', by: 'alice' }, s1],
        [501, 'tool/start', { tool: 'check', attempt: 1 }, a1],
        [
          531,
          'tool/error',
          {
            tool: 'check',
            attempt: 1,
            errorClass: 'tool_transient',
            code: 'tool_unavailable',
            message: 'x',
            observation: 'x',
            willRetry: true,
          },
          a1,
        ],
        [531, 'tool/start', { tool: 'check', attempt: 2 }, a1],
        [551, 'tool/end', { tool: 'check', attempt: 2, output: 1, observation: 'one', durationMs: 20 }, a1],
        [552, 'step/end', { actions: 1 }, s1],
        [553, 'turn/end', { answer: 'done' }, t1],
        [554, 'run/end', { status: 'COMPLETED', usage: { inputTokens: 300, outputTokens: 60, costUsd: 0.003 }, steps: 1 }, t1],
      ]),
    )
    assert.deepEqual(shape(trace.spans), [
      'run ok 554',
      '  t1 ok 552',
      '    s1 ok 550',
      '      s1/context ok 3',
      '      s1/model#1 ok 100',
      '      s1.a1 ok 445',
      '        s1.a1/policy ok 1',
      '        s1.a1/approval ok 392',
      '        s1.a1/tool#1 retried 30',
      '        s1.a1/tool#2 ok 20',
    ])
    const by = new Map(trace.spans.map((s) => [s.id, s]))
    assert.equal(by.get('s1.a1/approval')?.label, 'approval: approved by alice')
    assert.equal(by.get('s1.a1/policy')?.note, 'ask by r (p@1)')
    assert.equal(by.get('s1.a1/tool#1')?.note, 'tool_unavailable, retried')
    assert.equal(by.get('s1/context')?.label, 'context 2 msgs ~40 tok')
    assert.deepEqual(by.get('s1/model#1')?.usage, usage)
    assert.deepEqual(by.get('s1')?.usage, usage)
    assert.deepEqual(by.get('t1')?.usage, usage)
    // The run's own total is the kernel's (it counts what nested runs spent too).
    assert.deepEqual(trace.usage, { inputTokens: 300, outputTokens: 60, costUsd: 0.003 })
    assert.equal(trace.status, 'COMPLETED')
    assert.deepEqual([trace.start, trace.end, trace.lastSeq], [T0, T0 + 554, 19])
    assert.equal(by.get('s1.a1/tool#2')?.parent, 's1.a1')
    assert.equal(by.get('s1.a1')?.parent, 's1')
  })

  it('leaves what the run is still in open while it waits for approval', () => {
    const trace = traceOf(
      log([
        ...start,
        [105, 'step/model-response', { decision: { kind: 'tool_calls', calls: [{ name: 'check', args: {} }] }, usage }, s1],
        [106, 'tool/proposed', { tool: 'check', args: {}, argsHash: 'h' }, a1],
        [107, 'tool/decision', { verdict: 'ask', ruleId: 'r', policyVersion: 'p@1', reason: 'why' }, a1],
        [
          108,
          'tool/approval-requested',
          { tool: 'check', args: {}, argsHash: 'h', policyVersion: 'p@1', ruleId: 'r', reason: 'why', approvers: ['bob'] },
          a1,
        ],
        [108, 'run/paused', { status: 'WAITING_APPROVAL', reason: 'waits' }, s1],
      ]),
    )
    assert.equal(trace.status, 'WAITING_APPROVAL')
    assert.equal(trace.end, undefined)
    assert.deepEqual(
      trace.spans.filter((s) => s.end === undefined).map((s) => [s.id, s.status]),
      [
        ['run', 'open'],
        ['t1', 'open'],
        ['s1', 'open'],
        ['s1.a1', 'open'],
        ['s1.a1/approval', 'open'],
      ],
    )
    assert.equal(trace.spans.find((s) => s.id === 's1.a1/approval')?.note, 'waits for bob')
    // No separate wait span: the approval is the wait.
    assert.equal(trace.spans.filter((s) => s.kind === 'wait').length, 0)
  })

  it('shows a model call retried after an error as its own attempt, and an open model call while the model thinks', () => {
    const events = log([
      ...start,
      [50, 'step/model-error', { errorClass: 'model_transient', code: 'model_transient', message: 'x', attempt: 1, retryInMs: 10 }, s1],
      [60, 'step/model-request', { model: 'm@1', messages: 2, tools: [], attempt: 2 }, s1],
    ])
    const open = traceOf(events)
    assert.deepEqual(
      open.spans.filter((s) => s.kind === 'model').map((s) => [s.id, s.status, s.note]),
      [
        ['s1/model#1', 'retried', 'model_transient, retried in 10ms'],
        ['s1/model#2', 'open', undefined],
      ],
    )
    const answered = traceOf(
      log([
        ...start.map((e) => e),
        [50, 'step/model-error', { errorClass: 'model_transient', code: 'model_transient', message: 'x', attempt: 1, retryInMs: 10 }, s1],
        [60, 'step/model-request', { model: 'm@1', messages: 2, tools: [], attempt: 2 }, s1],
        [90, 'step/model-response', { decision: { kind: 'final', text: 'hi' }, usage }, s1],
      ]),
    )
    const second = answered.spans.find((s) => s.id === 's1/model#2')!
    assert.deepEqual([second.status, second.end! - second.start, second.note], ['ok', 30, 'final answer'])
    assert.deepEqual(answered.spans.find((s) => s.id === 's1/model#1')?.usage, undefined, 'a failed attempt reported no usage')
  })

  it('marks a denied action and its policy decision as denied', () => {
    const trace = traceOf(
      log([
        ...start,
        [105, 'step/model-response', { decision: { kind: 'tool_calls', calls: [{ name: 'check', args: {} }] }, usage }, s1],
        [106, 'tool/proposed', { tool: 'check', args: {}, argsHash: 'h' }, a1],
        [107, 'tool/decision', { verdict: 'deny', ruleId: 'no', policyVersion: 'p@1', reason: 'never' }, a1],
        [
          108,
          'tool/error',
          { tool: 'check', errorClass: 'policy_denied', code: 'policy_denied', message: 'never', observation: 'denied' },
          a1,
        ],
      ]),
    )
    const by = new Map(trace.spans.map((s) => [s.id, s]))
    assert.equal(by.get('s1.a1/policy')?.status, 'denied')
    assert.equal(by.get('s1.a1')?.status, 'denied')
    assert.equal(by.get('s1.a1')?.end, T0 + 108)
  })

  it('marks a dry run: its action span says so while open and when it ends, ended by its preview or by an error', () => {
    const a2 = { t: 't1', s: 's1', a: 's1.a2' }
    const trace = traceOf(
      log([
        ...start,
        [105, 'step/model-response', { decision: { kind: 'tool_calls', calls: [{ name: 'edit', args: {} }] }, usage }, s1],
        [106, 'tool/proposed', { tool: 'edit', args: {}, argsHash: 'h', dryRun: true }, a1],
        [106, 'tool/proposed', { tool: 'edit', args: {}, argsHash: 'h2', dryRun: true }, a2],
        [107, 'tool/decision', { verdict: 'allow', ruleId: 'r', policyVersion: 'p@1', reason: 'read' }, a1],
        [
          109,
          'tool/end',
          {
            tool: 'edit',
            attempt: 1,
            output: { summary: 's' },
            observation: 'Dry run',
            durationMs: 2,
            dryRun: true,
            redacted: { guard: 'card' },
          },
          a1,
        ],
        [110, 'tool/decision', { verdict: 'deny', ruleId: 'no', policyVersion: 'p@1', reason: 'no' }, a2],
        [
          111,
          'tool/error',
          { tool: 'edit', errorClass: 'policy_denied', code: 'policy_denied', message: 'no', observation: 'no', dryRun: true },
          a2,
        ],
      ]),
    )
    const by = new Map(trace.spans.map((s) => [s.id, s]))
    const [dry, denied] = [by.get('s1.a1')!, by.get('s1.a2')!]
    assert.deepEqual([dry.label, dry.dryRun, dry.status], ['edit s1.a1 (dry run)', true, 'ok'])
    assert.equal(dry.note, 'dry run: only the preview ran, nothing was done (redacted by card)')
    assert.equal(by.get('s1.a1/tool#1'), undefined, 'no tool span: the tool did not run')
    assert.deepEqual([denied.label, denied.dryRun, denied.status], ['edit s1.a2 (dry run)', true, 'denied'])
    assert.equal(denied.note, 'policy_denied, dry run: nothing was done')
  })

  it('closes what a cancelled run left open, as not finished', () => {
    const trace = traceOf(log([...start, [70, 'run/end', { status: 'CANCELLED', usage, steps: 1 }, t1]]))
    const by = new Map(trace.spans.map((s) => [s.id, s]))
    assert.deepEqual([by.get('run')?.status, by.get('run')?.end], ['error', T0 + 70])
    assert.deepEqual([by.get('s1/model#1')?.status, by.get('s1/model#1')?.note], ['error', 'not finished: the run ended CANCELLED'])
    assert.equal(
      trace.spans.every((s) => s.end !== undefined),
      true,
    )
  })

  it("draws a compaction and a verification inside their step, with the compactor's usage counted", () => {
    const trace = traceOf(
      log([
        ...start.slice(0, 3),
        [3, 'compaction/start', { strategy: 'summary', tokens: 900, limit: 500 }, s1],
        [43, 'compaction/end', { strategy: 'summary', before: 900, after: 300, summarised: [2], kept: 3, usage }, s1],
        [44, 'step/context', { messages: 3, tokens: 300, tools: [] }, s1],
        [44, 'step/model-request', { model: 'm@1', messages: 3, tools: [], attempt: 1 }, s1],
        [64, 'step/model-response', { decision: { kind: 'final', text: 'hi [source: a]' }, usage }, s1],
        [64, 'verify/start', { answer: 'hi [source: a]' }, s1],
        [66, 'verify/end', { ok: false, code: 'missing_evidence', reason: 'no source', evidence: [] }, s1],
      ]),
    )
    assert.deepEqual(shape(trace.spans).slice(2), [
      '    s1 open open',
      '      s1/context ok 42',
      '      s1/compaction@4 ok 40',
      '      s1/model#1 ok 20',
      '      s1/verify@9 error 2',
    ])
    const by = new Map(trace.spans.map((s) => [s.id, s]))
    assert.equal(by.get('s1/compaction@4')?.note, '900 → 300 tokens')
    assert.equal(by.get('s1/verify@9')?.label, 'verify failed')
    assert.deepEqual(by.get('s1')?.usage, { inputTokens: 200, outputTokens: 40, costUsd: 0.002 })
  })

  it('gives an empty trace for a run with no events yet', () => {
    assert.deepEqual(traceOf([]), {
      runId: undefined,
      status: 'RUNNING',
      start: undefined,
      end: undefined,
      spans: [],
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      lastSeq: 0,
    })
  })
})

describe('a long run', () => {
  /** A run of `steps` steps, each a model call and one tool call: 7 events and 6 spans a step. */
  function longLog(steps: number): RunEvent[] {
    const entries: Parameters<typeof log>[0] = [
      [0, 'run/start', { agent: 'desk', task: 'do it', plugins: {}, services: {}, budgets: {} }],
      [0, 'turn/start', { input: 'do it' }, t1],
    ]
    for (let i = 1; i <= steps; i++) {
      const s = { t: 't1', s: `s${i}` }
      const a = { ...s, a: `s${i}.a1` }
      const at = i * 10
      entries.push(
        [at, 'step/start', { index: i }, s],
        [at + 1, 'step/context', { messages: i, tokens: 10 * i, tools: ['check'] }, s],
        [at + 1, 'step/model-request', { model: 'm@1', messages: i, tools: ['check'], attempt: 1 }, s],
        [at + 5, 'step/model-response', { decision: { kind: 'tool_calls', calls: [{ name: 'check', args: {} }] }, usage }, s],
        [at + 6, 'tool/proposed', { tool: 'check', args: {}, argsHash: 'h' }, a],
        [at + 7, 'tool/end', { tool: 'check', output: {}, observation: 'ok', durationMs: 1 }, a],
        [at + 9, 'step/end', { actions: 1 }, s],
      )
    }
    return log(entries)
  }

  it('caps a trace of 50k events at the limit, with one entry standing for the rest and `truncated` saying so', () => {
    const events = longLog(7_200)
    assert.ok(events.length > 50_000)
    const full = traceOf(events)
    assert.equal(full.spans.length, 2 + 7_200 * 4)
    const capped = capTrace(full)
    assert.equal(capped.spans.length, DefaultSpanLimit + 1)
    assert.deepEqual(capped.spans.slice(0, DefaultSpanLimit), full.spans.slice(0, DefaultSpanLimit))
    const more = capped.spans.at(-1)!
    assert.equal(more.kind, 'more')
    assert.equal(more.parent, 'run')
    // 2,000 spans: the run, the turn, then four a step (499 whole steps and s500's first two).
    assert.equal(more.label, `${full.spans.length - 2_000} more spans (steps s500–s7200)`)
    assert.deepEqual(capped.truncated, {
      total: full.spans.length,
      shown: 2_000,
      omitted: full.spans.length - 2_000,
      steps: { from: 's500', to: 's7200' },
    })
    assert.equal(more.end, T0 + 7_200 * 10 + 9)
    assert.ok(JSON.stringify(capped).length < 1_000_000, 'the capped trace is small to send')
    assert.equal(capTrace(full, full.spans.length), full, 'a trace within the limit is as it was')
  })
})

/** The page's pure helpers (a browser module without type declarations, so typed here). */
interface TracePage {
  timelineEnd(spans: { end?: number }[], start: number): number
  refreshDelay(trace: { spans: unknown[]; truncated?: unknown } | undefined, sinceLastMs: number): number
  SlowRefreshMs: number
}
const pageModule = '../../playground/public/trace.js'
const tracePage = (): Promise<TracePage> => import(pageModule)

describe('the page (playground/public/trace.js)', () => {
  it("finds the timeline's end of 300k spans without spreading them into Math.max (which overflows the stack)", async () => {
    const { timelineEnd } = await tracePage()
    const spans = Array.from({ length: 300_000 }, (_, i) => ({ end: i % 7 === 1 ? undefined : 1_000 + i }))
    assert.equal(timelineEnd(spans, 5), 1_000 + 299_999)
    assert.equal(timelineEnd([], 5), 5)
    assert.equal(timelineEnd([{ end: 3 }], 5), 5)
  })

  it('asks for a large or capped trace at most every 500 ms, a small one soon after an event', async () => {
    const { refreshDelay, SlowRefreshMs } = await tracePage()
    assert.equal(refreshDelay(undefined, 0), 80)
    assert.equal(refreshDelay({ spans: new Array(10) }, 0), 80)
    assert.equal(refreshDelay({ spans: new Array(10), truncated: { total: 9000 } }, 0), SlowRefreshMs)
    assert.equal(refreshDelay({ spans: new Array(600) }, 100), SlowRefreshMs - 100)
    assert.equal(refreshDelay({ spans: new Array(600) }, 5_000), 80)
  })
})
