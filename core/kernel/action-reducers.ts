/**
 * @module action-reducers
 * What each `tool/*` event changes in run state: an action's life from its proposal to its outcome,
 * and the observation it leaves in the transcript. One handler per event type, as in state.ts, which
 * joins these to the run's own.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent, RunEventType } from '../contracts/events.ts'
import type { Usage } from '../contracts/data.ts'
import type { ActionState, RunState, TranscriptEntry } from '../contracts/state.ts'
import { sliceName } from '../kit/slices.ts'
import { applySlice } from './slice-reducers.ts'

/** One small handler per event type: what the event changes in state. */
export type Reducer<K extends RunEventType> = (state: RunState, event: RunEvent<K>) => void
type ToolEventType = Extract<RunEventType, `tool/${string}`>

export const ActionReducers: { readonly [K in ToolEventType]: Reducer<K> } = Object.freeze({
  'tool/proposed': (state, event) => {
    const id = need(event, event.actionId)
    const action: ActionState = {
      id,
      stepId: need(event, event.stepId),
      tool: event.data.tool,
      args: event.data.args,
      argsHash: event.data.argsHash,
      callId: event.data.callId,
      argsError: event.data.argsError,
      proposedSeq: event.seq,
      status: 'proposed',
      attempts: 0,
    }
    // Set, not spread in: a conditional spread in a literal takes V8's slow path, at every proposal.
    if (event.data.dryRun) action.dryRun = true
    state.actions[id] = action
    state.pending.push(id)
    state.stepActions++
    const t = state.transcript
    const last = t[t.length - 1]
    if (last?.kind === 'assistant')
      t[t.length - 1] = Object.freeze(Object.assign({}, last, { actionIds: Object.freeze([...last.actionIds, id]) }))
  },
  'tool/decision': (state, event) => {
    const a = needAction(state, event)
    // Not `{ ...event.data, seq }`: on Node 20, adding a key to a spread copy of a fresh literal takes a
    // slow path (measured: 0.7 us against 0.1 for Object.assign), and this runs at every call.
    a.decision = Object.assign({}, event.data, { seq: event.seq })
    a.status = event.data.verdict === 'allow' ? 'allowed' : event.data.verdict === 'deny' ? 'denied' : 'awaiting_approval'
  },
  'tool/approval-requested': (state, event) => {
    const a = needAction(state, event)
    a.status = 'awaiting_approval'
    a.requestedSeq = event.seq
    if (event.data.preview) a.preview = event.data.preview
  },
  'tool/approval-decided': (state, event) => {
    const a = needAction(state, event)
    const { grant, ...approval } = event.data
    a.approval = { ...approval, seq: event.seq }
    if (grant?.scope === 'run') state.grants.push(grant)
    a.status = event.data.approved ? 'approved' : 'rejected'
  },
  'tool/start': (state, event) => {
    const a = needAction(state, event)
    a.status = 'running'
    a.attempts = event.data.attempt
    a.key = event.data.idempotencyKey
  },
  'tool/end': (state, event) => {
    const a = needAction(state, event)
    // Schema 1 kept the names a tool revealed for the tools service; from 2 on the tool's plugin keeps them (slice/update).
    if (event.schema < 2 && event.data.reveals?.length)
      applySlice(state, sliceName(event.producer), { add: { revealed: event.data.reveals } })
    if (event.data.usage) {
      addUsage(state, event.data.usage)
      state.nestedSteps += event.data.usage.steps ?? 0
    }
    if (event.data.handoff) state.handoff = { to: event.data.handoff.agent, reason: event.data.handoff.reason, seq: event.seq }
    for (const ref of [event.data.artifact?.ref, event.data.redacted?.audit?.ref])
      if (ref && !state.artifacts?.includes(ref)) (state.artifacts ??= []).push(ref)
    a.status = 'succeeded'
    a.result = { observation: event.data.observation, seq: event.seq }
    settle(state, a, event.data.observation, true, event.seq)
  },
  'tool/error': (state, event) => {
    const a = needAction(state, event)
    a.error = { code: event.data.code, message: event.data.message, seq: event.seq }
    // Another attempt follows, or the effect is unknown: the action is not settled yet.
    if (event.data.willRetry || event.data.unknown) return
    // A denied or rejected action keeps that status; its tool/error only closes it.
    if (a.status !== 'denied' && a.status !== 'rejected') a.status = 'failed'
    settle(state, a, event.data.observation, false, event.seq)
  },
  'tool/reconciled': (state, event) => {
    const a = needAction(state, event)
    if (event.data.committed) {
      a.status = 'succeeded'
      const observation = `${event.data.tool} took effect (settled by ${event.data.by})${event.data.receipt !== undefined ? `: ${JSON.stringify(event.data.receipt)}` : '.'}`
      a.result = { observation, seq: event.seq }
      settle(state, a, observation, true, event.seq)
    } else {
      // It did not happen: the decision still stands, so the action runs again (same key).
      a.status = a.approval?.approved ? 'approved' : 'allowed'
    }
  },
})

export function addUsage(state: RunState, u: Usage) {
  state.usage = {
    inputTokens: state.usage.inputTokens + u.inputTokens,
    outputTokens: state.usage.outputTokens + u.outputTokens,
    costUsd: state.usage.costUsd + u.costUsd,
  }
}

/** Take the reservations `which` picks out of the pool (a new array: a snapshot may share the old one). */
export function release(state: RunState, which: (r: NonNullable<RunState['reservations']>[number]) => boolean) {
  if (state.reservations?.some(which)) state.reservations = state.reservations.filter((r) => !which(r))
}

function settle(state: RunState, action: ActionState, text: string, ok: boolean, seq: number) {
  state.pending = state.pending.filter((id) => id !== action.id)
  // However the action ended (an outcome, a refusal, a cancellation), what it reserved goes back to the pool.
  release(state, (r) => r.actionId === action.id)
  // The observations of one step stay in the order the model proposed the calls, whatever order they
  // settled in (a denied call settles before an allowed one that runs). Only the open step's tail
  // moves: what a context plugin saw before this step never changes.
  const t = state.transcript
  const after = (e: TranscriptEntry) =>
    e.kind === 'observation' && state.actions[e.actionId]?.stepId === action.stepId && actionIndex(e.actionId) >= actionIndex(action.id)
  let at = t.length
  while (at > 0 && after(t[at - 1])) at--
  const entry = { kind: 'observation' as const, actionId: action.id, tool: action.tool, text, ok, seq }
  t.splice(at, 0, Object.freeze(action.dryRun ? { ...entry, dryRun: true } : entry))
}

/** The position of an action in its step: 2 for `s4.a2`. */
function actionIndex(actionId: string): number {
  return Number(actionId.slice(actionId.lastIndexOf('.a') + 2))
}

function need(event: RunEvent, value: string | undefined): string {
  if (!value) throw new CordageError('invalid_event', `${event.type} (seq ${event.seq}) lacks its action or step id`)
  return value
}

function needAction(state: RunState, event: RunEvent): ActionState {
  const action = event.actionId ? state.actions[event.actionId] : undefined
  if (!action) throw new CordageError('invalid_event', `${event.type} (seq ${event.seq}) refers to unknown action ${event.actionId}`)
  return action
}
