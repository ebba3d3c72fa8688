/**
 * @module playground/step-detail
 * Everything the run log holds about one step, gathered for the trace view's detail panel: the task and
 * the turn's input, the context as recorded (a summary: `step/context` keeps counts, not the messages;
 * playground/step-context.ts rebuilds them), each model call with its answer or error, each action
 * with its proposal, policy decision, approval, every attempt's raw result or error and the observation
 * the model was given, the verification, guardrail trips, and how the run's state changed over the
 * step (the kernel's own fold of the events, before the step and after its last event). Pure.
 *
 * @example
 * const detail = stepDetail(await agent.store().read(runId), 's2')
 * detail.actions[0].decision?.verdict // 'ask'
 */
import { CordageError, replay, type RunEvent, type RunState } from 'cordage'

export interface StepDetail {
  runId: string
  stepId: string
  turnId?: string
  /** The agent that drove the run at this step (run/start, or the last run/handoff before it). */
  agent: string
  task: string
  /** What started the step's turn: the task, or the user's input on a later turn. */
  turnInput?: string
  start: number
  /** Undefined while the step is open. */
  end?: number
  /** The seqs of the step's events, first and last. */
  seqs: { from: number; to: number }
  context: {
    /** What step/context recorded: counts and tool names, not the messages. */
    recorded?: { seq: number; producer: string; messages: number; tokens: number; tools: string[] }
    compactions: {
      seq: number
      strategy: string
      before: number
      after: number
      summarised: number[]
      extends?: number
      kept: number
      rejected?: string
    }[]
  }
  model: ModelCall[]
  actions: ActionDetail[]
  verification: {
    seq: number
    answer: string
    ok?: boolean
    code?: string
    reason?: string
    feedback?: string
    repair?: boolean
    evidence?: unknown[]
  }[]
  guards: { seq: number; actionId?: string; stage: string; guard: string; action: string; reason: string }[]
  stateChange: StateChange
}

export interface ModelCall {
  attempt: number
  model: string
  seq: number
  start: number
  end?: number
  messages: number
  tools: string[]
  /** The model's decision, as recorded before the kernel acted on it. */
  decision?: unknown
  usage?: { inputTokens: number; outputTokens: number; costUsd: number }
  /** The answer came with provider reasoning blocks (kept in the record, opaque here). */
  reasoning?: boolean
  error?: { code: string; errorClass: string; message: string; retryInMs?: number }
}

export interface ActionDetail {
  actionId: string
  tool: string
  proposal: { seq: number; args: unknown; argsHash: string; callId?: string; argsError?: string }
  /** The model asked for the call's preview (`dry_run: true`): nothing was done, whatever ended it. */
  dryRun?: boolean
  /** A dry run's preview (its tool/end `output`), as the guardrail let it through: there is no attempt. */
  preview?: { seq: number; output: unknown; redacted?: { guard: string }; durationMs?: number }
  decision?: {
    seq: number
    verdict: string
    ruleId: string
    policyVersion: string
    reason: string
    approvers?: string[]
    toolVersion?: string
  }
  approval?: {
    requested?: { seq: number; time: number; reason: string; approvers?: string[] }
    decided?: { seq: number; time: number; approved: boolean; by: string; reason?: string; scope?: string }
  }
  attempts: {
    attempt: number
    seq: number
    start: number
    end?: number
    idempotencyKey: string
    timeoutMs: number
    /** The raw result the tool returned (tool/end `output`), and its receipt. */
    output?: unknown
    /** Set instead of `output` when the result was stored as an artifact (tool/end `artifact`). */
    artifact?: { ref: string; bytes: number; mediaType: string }
    /** Set when the guardrail redacted the result: `output` is the redacted form. */
    redacted?: { guard: string }
    receipt?: unknown
    observation?: string
    durationMs?: number
    /** `redacted`: the guardrail redacted or withheld the message (and stack): they are what it let through. */
    error?: {
      code: string
      errorClass: string
      message: string
      willRetry?: boolean
      unknown?: boolean
      stack?: string
      redacted?: { guard: string }
    }
  }[]
  /** What the model was told of the action: the observation of the event that closed it. */
  observation?: string
  /** Closed without a tool call (denied, rejected, invalid arguments): the error that closed it. */
  closedBy?: { seq: number; type: string; code?: string; message?: string; redacted?: { guard: string } }
  reconciled?: { seq: number; committed: boolean; by: string }
}

export interface StateChange {
  /** State folded from the events before the step (seq < before) and through its last event (seq ≤ after). */
  before: number
  after: number
  /** Fields of run state that differ, with their values before and after (transcript and actions below). */
  fields: { field: string; before: unknown; after: unknown }[]
  transcript: { kind: string; seq: number; text?: string; actionIds?: readonly string[]; ok?: boolean }[]
  actions: { actionId: string; tool: string; from?: string; to: string; attempts: number }[]
  /** Set when the log could not be folded (a damaged log): why. */
  error?: string
}

/**
 * The step's detail from the run's events.
 * @throws CordageError `invalid_input` when the run has no step `stepId`
 */
export function stepDetail(events: readonly RunEvent[], stepId: string): StepDetail {
  const index = events.findIndex((e) => e.type === 'step/start' && e.stepId === stepId)
  if (index < 0) throw new CordageError('invalid_input', `the run has no step ${JSON.stringify(stepId)}; its steps are named s1, s2, ...`)
  const started = events[index]
  const mine = events.filter((e) => e.stepId === stepId)
  const last = mine[mine.length - 1]
  const first = events[0]
  let agent = first?.type === 'run/start' ? first.data.agent : ''
  for (const e of events.slice(0, index)) if (e.type === 'run/handoff') agent = e.data.to
  const turn = events.find((e) => e.type === 'turn/start' && e.turnId === started.turnId)
  const ended = mine.find((e) => e.type === 'step/end')

  const detail: StepDetail = {
    runId: started.runId,
    stepId,
    turnId: started.turnId,
    agent,
    task: first?.type === 'run/start' ? first.data.task : '',
    turnInput: turn?.type === 'turn/start' ? turn.data.input : undefined,
    start: started.time,
    end: ended?.time,
    seqs: { from: started.seq, to: last.seq },
    context: { compactions: [] },
    model: [],
    actions: [],
    verification: [],
    guards: [],
    stateChange: stateChange(events, started.seq, last.seq),
  }
  const actions = new Map<string, ActionDetail>()
  const action = (e: RunEvent) => actions.get(e.actionId ?? '')
  for (const e of mine) {
    switch (e.type) {
      case 'step/context':
        detail.context.recorded = { seq: e.seq, producer: e.producer, ...e.data }
        break
      case 'compaction/end':
        detail.context.compactions.push({ seq: e.seq, ...e.data })
        break
      case 'step/model-request':
        detail.model.push({
          attempt: e.data.attempt,
          model: e.data.model,
          seq: e.seq,
          start: e.time,
          messages: e.data.messages,
          tools: e.data.tools,
        })
        break
      case 'step/model-response': {
        const call = detail.model[detail.model.length - 1]
        if (call)
          Object.assign(call, {
            end: e.time,
            decision: e.data.decision,
            usage: e.data.usage,
            reasoning: e.data.reasoning ? true : undefined,
          })
        break
      }
      case 'step/model-error': {
        const call = detail.model.find((c) => c.attempt === e.data.attempt && c.end === undefined)
        if (call)
          Object.assign(call, {
            end: e.time,
            error: { code: e.data.code, errorClass: e.data.errorClass, message: e.data.message, retryInMs: e.data.retryInMs },
          })
        break
      }
      case 'tool/proposed': {
        const d = e.data
        const made: ActionDetail = {
          actionId: e.actionId ?? `?${e.seq}`,
          tool: d.tool,
          proposal: { seq: e.seq, args: d.args, argsHash: d.argsHash, callId: d.callId, argsError: d.argsError },
          ...(d.dryRun ? { dryRun: true } : {}),
          attempts: [],
        }
        actions.set(made.actionId, made)
        detail.actions.push(made)
        break
      }
      case 'tool/decision': {
        const a = action(e)
        if (a) a.decision = { seq: e.seq, ...e.data }
        break
      }
      case 'tool/approval-requested': {
        const a = action(e)
        if (a) a.approval = { ...a.approval, requested: { seq: e.seq, time: e.time, reason: e.data.reason, approvers: e.data.approvers } }
        break
      }
      case 'tool/approval-decided': {
        const a = action(e)
        const d = e.data
        if (a)
          a.approval = {
            ...a.approval,
            decided: { seq: e.seq, time: e.time, approved: d.approved, by: d.by, reason: d.reason, scope: d.scope },
          }
        break
      }
      case 'tool/start': {
        const d = e.data
        action(e)?.attempts.push({
          attempt: d.attempt,
          seq: e.seq,
          start: e.time,
          idempotencyKey: d.idempotencyKey,
          timeoutMs: d.timeoutMs,
        })
        break
      }
      case 'tool/end': {
        const a = action(e)
        const attempt = a?.attempts.find((t) => t.attempt === e.data.attempt && t.end === undefined)
        if (attempt)
          Object.assign(attempt, {
            end: e.time,
            output: e.data.output,
            // The reference, never an audit-only one: that is for the audit view alone.
            artifact: e.data.artifact && { ref: e.data.artifact.ref, bytes: e.data.artifact.bytes, mediaType: e.data.artifact.mediaType },
            redacted: e.data.redacted && { guard: e.data.redacted.guard },
            receipt: e.data.receipt,
            observation: e.data.observation,
            durationMs: e.data.durationMs,
          })
        // A dry run has no attempt: its preview is what it came to.
        if (a && !attempt && e.data.dryRun)
          a.preview = {
            seq: e.seq,
            output: e.data.output,
            redacted: e.data.redacted && { guard: e.data.redacted.guard },
            durationMs: e.data.durationMs,
          }
        if (a) a.observation = e.data.observation
        break
      }
      case 'tool/error': {
        const a = action(e)
        const d = e.data
        const attempt = a?.attempts.find((t) => t.attempt === d.attempt && t.end === undefined)
        const error = {
          code: d.code,
          errorClass: d.errorClass,
          message: d.message,
          willRetry: d.willRetry,
          unknown: d.unknown,
          stack: d.stack,
          redacted: d.redacted && { guard: d.redacted.guard },
        }
        if (attempt) Object.assign(attempt, { end: e.time, observation: d.observation, durationMs: d.durationMs, error })
        else if (a)
          a.closedBy = { seq: e.seq, type: e.type, code: d.code, message: d.message, redacted: d.redacted && { guard: d.redacted.guard } }
        if (a && !d.willRetry) a.observation = d.observation
        break
      }
      case 'tool/reconciled': {
        const a = action(e)
        if (a) a.reconciled = { seq: e.seq, committed: e.data.committed, by: e.data.by }
        break
      }
      case 'verify/start':
        detail.verification.push({ seq: e.seq, answer: e.data.answer })
        break
      case 'verify/end': {
        const v = detail.verification[detail.verification.length - 1]
        if (v) Object.assign(v, e.data)
        break
      }
      case 'guard/tripped':
        detail.guards.push({ seq: e.seq, actionId: e.actionId, ...e.data })
        break
      default:
        break
    }
  }
  return detail
}

/** How run state changed over the step: the kernel's fold of the log before it, and through its last event. */
export function stateChange(events: readonly RunEvent[], from: number, to: number): StateChange {
  const change: StateChange = { before: from, after: to, fields: [], transcript: [], actions: [] }
  let before: RunState
  let after: RunState
  try {
    const runId = events[0]?.runId ?? ''
    before = replay(
      runId,
      events.filter((e) => e.seq < from),
    )
    after = replay(
      runId,
      events.filter((e) => e.seq <= to),
    )
  } catch (error) {
    change.error = (error as Error).message
    return change
  }
  // Bookkeeping that moves with every event says nothing about the step.
  const skip = new Set(['lastSeq', 'updatedAt', 'transcript', 'actions'])
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof RunState>
  for (const key of keys) {
    if (skip.has(key)) continue
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      change.fields.push({ field: key, before: before[key], after: after[key] })
  }
  for (const entry of after.transcript.slice(before.transcript.length)) {
    if (entry.kind === 'assistant')
      change.transcript.push({ kind: entry.kind, seq: entry.seq, text: describe(entry.decision), actionIds: entry.actionIds })
    else
      change.transcript.push({
        kind: entry.kind,
        seq: entry.seq,
        text: entry.text,
        ok: entry.kind === 'observation' ? entry.ok : undefined,
      })
  }
  for (const [id, a] of Object.entries(after.actions)) {
    const was = before.actions[id]
    if (was && was.status === a.status && was.attempts === a.attempts) continue
    change.actions.push({ actionId: id, tool: a.tool, from: was?.status, to: a.status, attempts: a.attempts })
  }
  return change
}

type Decision = RunEvent<'step/model-response'>['data']['decision']

function describe(decision: Decision): string {
  if (decision.kind === 'final') return decision.text
  if (decision.kind === 'ask_user') return decision.question
  return `${decision.text ? `${decision.text} ` : ''}calls ${decision.calls.map((c) => c.name).join(', ')}`
}
