/**
 * @module playground/trace
 * A run's events as a tree of timed spans, for the playground's trace view (a waterfall): the run, its
 * turns, their steps, and in each step the context assembly, every model call attempt, each action
 * (with its policy decision, the wait for approval and every tool attempt), compaction and
 * verification. Pure: the same events give the same trace, so the page can ask again after each new
 * event and draw what it gets. A span whose end is not on record yet is open (`end` undefined): the
 * page draws it up to now, because the run is still working or waiting there.
 *
 * @example
 * const trace = traceOf(await agent.store().read(runId))
 * for (const s of trace.spans) console.log('  '.repeat(s.depth), s.label, s.end === undefined ? 'open' : `${s.end - s.start}ms`)
 */
import type { RunEvent, Usage } from 'cordage'

export type SpanKind =
  | 'run'
  | 'turn'
  | 'step'
  | 'context'
  | 'compaction'
  | 'model'
  | 'action'
  | 'policy'
  | 'approval'
  | 'tool'
  | 'verify'
  | 'wait'
  /** Stands for the spans a capped trace left out (see `capTrace`). */
  | 'more'

/** How a span went: `retried` is a failed attempt another one followed; `open` has no end on record yet. */
export type SpanStatus = 'ok' | 'error' | 'retried' | 'denied' | 'open'

export interface Span {
  /** Unique in the trace: `run`, `t1`, `s2`, `s2/model#1`, `s2.a1`, `s2.a1/tool#2`, ... */
  id: string
  parent?: string
  /** Depth in the tree: the run is 0. */
  depth: number
  kind: SpanKind
  /** What the bar says, e.g. `model model-scripted@1.2.0 #1`, `check_stock s1.a1`. */
  label: string
  /** Epoch milliseconds of the events that open and close it. */
  start: number
  end?: number
  status: SpanStatus
  /** Seqs of the events that open and close it. */
  startSeq: number
  endSeq?: number
  turnId?: string
  stepId?: string
  actionId?: string
  attempt?: number
  /** Tokens and cost: a model call's own; a step's, turn's or run's summed from the model calls, compactions and nested runs in it. */
  usage?: Usage
  /** One line of what happened (an error code, a verdict, who approved). */
  note?: string
  /** An action the model asked to dry-run: only its preview ran, nothing was done. */
  dryRun?: boolean
}

export interface Trace {
  runId?: string
  /** The run's status as the events say: RUNNING until it pauses or ends. */
  status: string
  start?: number
  end?: number
  /** Depth-first, children in the order they began. */
  spans: Span[]
  usage: Usage
  lastSeq: number
  /** Set when `capTrace` left spans out: how many there were, how many are shown, and which steps the rest are in. */
  truncated?: Truncation
}

export interface Truncation {
  /** Spans in the whole trace, and in this one (not counting the `more` entry). */
  total: number
  shown: number
  omitted: number
  /** The first and last step the omitted spans belong to, in the order drawn. */
  steps?: { from: string; to: string }
}

/** How many spans the trace route returns unless asked otherwise: enough for a few hundred steps, small enough to draw. */
export const DefaultSpanLimit = 2_000

type Ev = RunEvent
const zero = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 })

/** The trace of a run from its events (in seq order, as the store gives them). */
export function traceOf(events: readonly RunEvent[]): Trace {
  const spans = new Map<string, Span>()
  const order: string[] = []
  const open = (span: Omit<Span, 'depth' | 'status'> & { status?: SpanStatus }): Span => {
    const made: Span = { depth: 0, status: 'open', ...span }
    // A step driven again (after a crash, say) opens its span once: the first start holds.
    if (spans.has(made.id)) return spans.get(made.id)!
    spans.set(made.id, made)
    order.push(made.id)
    return made
  }
  const close = (span: Span | undefined, event: Ev, status: SpanStatus = 'ok', note?: string) => {
    if (!span) return
    span.end = event.time
    span.endSeq = event.seq
    span.status = status
    if (note !== undefined) span.note = note
  }
  const add = (span: Span | undefined, usage: Partial<Usage> | undefined) => {
    if (!span || !usage) return
    span.usage ??= zero()
    span.usage.inputTokens += usage.inputTokens ?? 0
    span.usage.outputTokens += usage.outputTokens ?? 0
    span.usage.costUsd += usage.costUsd ?? 0
  }
  /** Usage counts for the step, its turn and the run, as well as for the span itself. */
  const charge = (self: Span | undefined, e: Ev, usage: Partial<Usage> | undefined) => {
    add(self, usage)
    add(e.stepId ? spans.get(e.stepId) : undefined, usage)
    add(e.turnId ? spans.get(e.turnId) : undefined, usage)
    add(spans.get('run'), usage)
  }
  const stepParent = (e: Ev) => e.stepId ?? e.turnId ?? 'run'
  const actionParent = (e: Ev) => e.actionId ?? stepParent(e)
  const ids = (e: Ev) => ({ turnId: e.turnId, stepId: e.stepId, actionId: e.actionId })

  let runId: string | undefined
  let status = 'RUNNING'
  let lastSeq = 0
  /** The attempt of the model call under way in each step, and of the tool call under way in each action. */
  const modelAttempt = new Map<string, string>()
  const toolAttempt = new Map<string, string>()
  /** Open compaction and verify spans per step, and open waits: found without scanning every span (long runs have many). */
  const openCompaction = new Map<string, Span[]>()
  const openVerify = new Map<string, Span[]>()
  const openWaits = new Set<Span>()
  const push = (map: Map<string, Span[]>, key: string, span: Span) => {
    const list = map.get(key) ?? []
    list.push(span)
    map.set(key, list)
  }
  const latestOpen = (map: Map<string, Span[]>, key: string): Span | undefined => {
    const list = map.get(key)
    while (list?.length) {
      const span = list.pop()!
      if (span.end === undefined) return span
    }
    return undefined
  }

  for (const e of events) {
    runId ??= e.runId
    lastSeq = e.seq
    switch (e.type) {
      case 'run/start':
        open({ id: 'run', kind: 'run', label: `run ${e.data.agent}`, start: e.time, startSeq: e.seq })
        break
      case 'run/end':
        status = e.data.status
        for (const span of spans.values())
          if (span.end === undefined && span.id !== 'run') close(span, e, 'error', `not finished: the run ended ${e.data.status}`)
        close(spans.get('run'), e, statusOfEnd(e.data.status), `${e.data.status}${e.data.failureCode ? ` (${e.data.failureCode})` : ''}`)
        {
          // The run's own count is the kernel's (it includes what nested runs spent).
          const run = spans.get('run')
          if (run) run.usage = { ...e.data.usage }
        }
        break
      case 'run/paused':
        status = e.data.status
        // An approval has its own span under the action; other waits (for the user, a resume) get one here.
        if (e.data.status !== 'WAITING_APPROVAL') {
          const wait = open({
            id: `wait@${e.seq}`,
            parent: stepParent(e),
            kind: 'wait',
            label: `waits: ${e.data.status}`,
            start: e.time,
            startSeq: e.seq,
            ...ids(e),
            note: e.data.reason,
          })
          if (wait.end === undefined) openWaits.add(wait)
        }
        break
      case 'run/resumed': {
        status = 'RUNNING'
        for (const span of openWaits) if (span.end === undefined) close(span, e, 'ok', `resumed by ${e.data.by}`)
        openWaits.clear()
        break
      }
      case 'turn/start':
        open({
          id: e.turnId ?? `turn@${e.seq}`,
          parent: 'run',
          kind: 'turn',
          label: `turn ${e.turnId ?? ''}`.trim(),
          start: e.time,
          startSeq: e.seq,
          ...ids(e),
        })
        break
      case 'turn/end':
        close(spans.get(e.turnId ?? ''), e)
        break
      case 'step/start': {
        const id = e.stepId ?? `step@${e.seq}`
        open({ id, parent: e.turnId ?? 'run', kind: 'step', label: `step ${id}`, start: e.time, startSeq: e.seq, ...ids(e) })
        open({ id: `${id}/context`, parent: id, kind: 'context', label: 'context', start: e.time, startSeq: e.seq, ...ids(e) })
        break
      }
      case 'step/context': {
        const span = spans.get(`${e.stepId}/context`)
        if (span && span.end === undefined) {
          span.label = `context ${e.data.messages} msgs ~${e.data.tokens} tok`
          close(span, e, 'ok', `${e.data.tools.length} tools: ${e.data.tools.join(', ')}`)
        }
        break
      }
      case 'step/end':
        close(spans.get(e.stepId ?? ''), e, 'ok', `${e.data.actions} action(s)`)
        break
      case 'compaction/start':
        push(
          openCompaction,
          e.stepId ?? '',
          open({
            id: `${e.stepId}/compaction@${e.seq}`,
            parent: stepParent(e),
            kind: 'compaction',
            label: `compaction ${e.data.strategy}`,
            start: e.time,
            startSeq: e.seq,
            ...ids(e),
          }),
        )
        break
      case 'compaction/end': {
        const span = latestOpen(openCompaction, e.stepId ?? '')
        close(
          span,
          e,
          e.data.rejected ? 'error' : 'ok',
          e.data.rejected ? `not used: ${e.data.rejected}` : `${e.data.before} → ${e.data.after} tokens`,
        )
        charge(span, e, e.data.usage)
        break
      }
      case 'step/model-request': {
        const id = `${e.stepId}/model#${e.data.attempt}`
        modelAttempt.set(e.stepId ?? '', id)
        open({
          id,
          parent: stepParent(e),
          kind: 'model',
          label: `model ${e.data.model} #${e.data.attempt}`,
          start: e.time,
          startSeq: e.seq,
          ...ids(e),
          attempt: e.data.attempt,
        })
        break
      }
      case 'step/model-response': {
        const span = spans.get(modelAttempt.get(e.stepId ?? '') ?? '')
        const d = e.data.decision
        close(
          span,
          e,
          'ok',
          d.kind === 'final' ? 'final answer' : d.kind === 'ask_user' ? 'asks the user' : `calls ${d.calls.map((c) => c.name).join(', ')}`,
        )
        charge(span, e, e.data.usage)
        break
      }
      case 'step/model-error': {
        const span = spans.get(`${e.stepId}/model#${e.data.attempt}`)
        close(
          span,
          e,
          e.data.retryInMs !== undefined ? 'retried' : 'error',
          `${e.data.code}${e.data.retryInMs !== undefined ? `, retried in ${e.data.retryInMs}ms` : ''}`,
        )
        break
      }
      case 'tool/proposed':
        open({
          id: e.actionId ?? `action@${e.seq}`,
          parent: stepParent(e),
          kind: 'action',
          label: `${e.data.tool} ${e.actionId ?? ''}${e.data.dryRun ? ' (dry run)' : ''}`.trim(),
          start: e.time,
          startSeq: e.seq,
          ...ids(e),
          ...(e.data.dryRun ? { dryRun: true } : {}),
        })
        break
      case 'tool/decision': {
        const verdict = e.data.verdict
        const action = spans.get(e.actionId ?? '')
        const policy = open({
          id: `${e.actionId}/policy`,
          parent: actionParent(e),
          kind: 'policy',
          label: `policy ${verdict}`,
          start: action?.start ?? e.time,
          startSeq: action?.startSeq ?? e.seq,
          ...ids(e),
        })
        close(policy, e, verdict === 'deny' ? 'denied' : 'ok', `${verdict} by ${e.data.ruleId} (${e.data.policyVersion})`)
        break
      }
      case 'tool/approval-requested':
        open({
          id: `${e.actionId}/approval`,
          parent: actionParent(e),
          kind: 'approval',
          label: 'approval',
          start: e.time,
          startSeq: e.seq,
          ...ids(e),
          note: `waits for ${e.data.approvers?.join(', ') ?? 'a person'}`,
        })
        break
      case 'tool/approval-decided': {
        const span = spans.get(`${e.actionId}/approval`)
        const who = `${e.data.approved ? 'approved' : 'rejected'} by ${e.data.by}`
        if (span) span.label = `approval: ${who}`
        close(span, e, e.data.approved ? 'ok' : 'denied', who)
        if (!e.data.approved) close(spans.get(e.actionId ?? ''), e, 'denied', who)
        break
      }
      case 'tool/start': {
        const id = `${e.actionId}/tool#${e.data.attempt}`
        toolAttempt.set(e.actionId ?? '', id)
        open({
          id,
          parent: actionParent(e),
          kind: 'tool',
          label: `${e.data.tool} #${e.data.attempt}`,
          start: e.time,
          startSeq: e.seq,
          ...ids(e),
          attempt: e.data.attempt,
        })
        break
      }
      case 'tool/end': {
        const span = spans.get(toolAttempt.get(e.actionId ?? '') ?? '')
        close(span, e, 'ok', e.data.deduplicated ? 'deduplicated: done before under the same key' : undefined)
        charge(span, e, e.data.usage)
        close(
          spans.get(e.actionId ?? ''),
          e,
          'ok',
          e.data.dryRun
            ? `dry run: only the preview ran, nothing was done${e.data.redacted ? ` (redacted by ${e.data.redacted.guard})` : ''}`
            : undefined,
        )
        break
      }
      case 'tool/error': {
        const attempt = spans.get(toolAttempt.get(e.actionId ?? '') ?? '')
        const running = attempt && attempt.end === undefined ? attempt : undefined
        const note = `${e.data.code}${e.data.willRetry ? ', retried' : ''}${e.data.unknown ? ', outcome unknown' : ''}${e.data.dryRun ? ', dry run: nothing was done' : ''}`
        close(running, e, e.data.willRetry ? 'retried' : 'error', note)
        if (!e.data.willRetry && !e.data.unknown) {
          const action = spans.get(e.actionId ?? '')
          const denied = e.data.errorClass === 'policy_denied'
          if (action && action.end === undefined) close(action, e, denied ? 'denied' : 'error', note)
        }
        break
      }
      case 'tool/reconciled':
        if (e.data.committed) close(spans.get(e.actionId ?? ''), e, 'ok', `reconciled by ${e.data.by}`)
        break
      case 'verify/start':
        push(
          openVerify,
          e.stepId ?? '',
          open({
            id: `${e.stepId}/verify@${e.seq}`,
            parent: stepParent(e),
            kind: 'verify',
            label: 'verify',
            start: e.time,
            startSeq: e.seq,
            ...ids(e),
          }),
        )
        break
      case 'verify/end': {
        const span = latestOpen(openVerify, e.stepId ?? '')
        if (span) span.label = e.data.ok ? 'verify ok' : `verify failed`
        close(
          span,
          e,
          e.data.ok ? 'ok' : 'error',
          e.data.ok
            ? `evidence: ${e.data.evidence.map((x) => x.ref).join(', ') || 'none'}`
            : `${e.data.code ?? ''} ${e.data.reason ?? ''}`.trim(),
        )
        break
      }
      default:
        break
    }
  }

  // Depth-first, children in the order they began (then by seq, which breaks ties of equal times).
  const children = new Map<string | undefined, Span[]>()
  for (const id of order) {
    const span = spans.get(id)!
    const parent = span.parent !== undefined && spans.has(span.parent) ? span.parent : span.id === 'run' ? undefined : 'run'
    span.parent = spans.has('run') || parent !== 'run' ? parent : undefined
    const list = children.get(span.parent) ?? []
    list.push(span)
    children.set(span.parent, list)
  }
  const flat: Span[] = []
  const walk = (parent: string | undefined, depth: number) => {
    const list = (children.get(parent) ?? []).sort((a, b) => a.start - b.start || a.startSeq - b.startSeq)
    for (const span of list) {
      span.depth = depth
      flat.push(span)
      walk(span.id, depth + 1)
    }
  }
  walk(undefined, 0)
  const run = spans.get('run')
  return { runId, status, start: run?.start, end: run?.end, spans: flat, usage: run?.usage ?? zero(), lastSeq }
}

/**
 * The trace with at most `limit` spans: the first ones in the order drawn (a depth-first prefix, so every
 * span shown has its parents), then one `more` span under the run standing for the rest, labelled with
 * how many and which steps; `truncated` says the same in fields. A trace within the limit comes back as is.
 * The cap keeps a long run's response small and its page drawable (72k spans were 17.5 MB of JSON).
 */
export function capTrace(trace: Trace, limit = DefaultSpanLimit): Trace {
  if (trace.spans.length <= limit) return trace
  const shown = trace.spans.slice(0, limit)
  let firstStep: string | undefined
  let lastStep: string | undefined
  let start = Number.POSITIVE_INFINITY
  let end: number | undefined = Number.NEGATIVE_INFINITY
  let startSeq = Number.POSITIVE_INFINITY
  let open = false
  // Loops, not spreads: Math.max(...spans) overflows the stack at a few hundred thousand.
  for (let i = limit; i < trace.spans.length; i++) {
    const span = trace.spans[i]!
    if (span.stepId) {
      firstStep ??= span.stepId
      lastStep = span.stepId
    }
    if (span.start < start) start = span.start
    if (span.startSeq < startSeq) startSeq = span.startSeq
    if (span.end === undefined) open = true
    else if (span.end > end) end = span.end
  }
  const omitted = trace.spans.length - limit
  const steps = firstStep && lastStep ? { from: firstStep, to: lastStep } : undefined
  const more: Span = {
    id: 'more',
    parent: trace.spans[0]?.id === 'run' ? 'run' : undefined,
    depth: trace.spans[0]?.id === 'run' ? 1 : 0,
    kind: 'more',
    label: `${omitted} more spans${steps ? ` (steps ${steps.from}–${steps.to})` : ''}`,
    start,
    end: open ? undefined : end,
    status: open ? 'open' : 'ok',
    startSeq,
    note: `not drawn: the trace is capped at ${limit} spans`,
  }
  return { ...trace, spans: [...shown, more], truncated: { total: trace.spans.length, shown: limit, omitted, steps } }
}

function statusOfEnd(status: string): SpanStatus {
  return status === 'COMPLETED' ? 'ok' : 'error'
}
