/**
 * @module state
 * Run state is a reduction of the run's events (invariant 5: state is not context). The loop applies
 * each event as it records it, and a resumed run rebuilds the same state from the store with
 * {@link replay}, so what a resumed run knows is exactly what was persisted, nothing more.
 */
import { CordageError } from '../contracts/errors.ts'
import { EventSchemaVersion, type RunEvent, type RunEventType } from '../contracts/events.ts'
import { zeroUsage } from '../contracts/services/model.ts'
import { pausedOn } from '../contracts/services/waits.ts'
import { freezeData } from '../kit/freeze.ts'
import { assertTransition, type RunStatus } from './status.ts'
import { ActionReducers, addUsage, release, type Reducer } from './action-reducers.ts'
import { applySlice, applySliceEvent } from './slice-reducers.ts'
import { sliceName } from '../kit/slices.ts'
import type { RunState } from '../contracts/state.ts'
export type { ActionStatus, ActionState, TranscriptEntry, RunState } from '../contracts/state.ts'

/** Version of the RunState shape; a snapshot of another version is ignored and the log replayed. */
export const StateVersion = 5

export function emptyState(runId: string): RunState {
  return {
    runId,
    agent: '',
    task: '',
    status: 'CREATED',
    lastSeq: 0,
    createdAt: 0,
    updatedAt: 0,
    budgets: { maxSteps: 0, maxRepairs: 0 },
    plugins: {},
    services: {},
    turns: 0,
    steps: 0,
    stepOpen: false,
    stepActions: 0,
    stepSettled: false,
    usage: zeroUsage(),
    grants: [],
    repairs: 0,
    nestedSteps: 0,
    transcript: [],
    actions: {},
    pending: [],
  }
}

/** Rebuild state from a run's events. Throws `invalid_event` on a gap, a foreign event or an illegal transition. */
export function replay(runId: string, events: readonly RunEvent[]): RunState {
  return replayFrom(runId, undefined, events)!
}

/** State from a snapshot plus the events after it; the whole log is needed when the snapshot is of another version. */
export function replayFrom(
  runId: string,
  snapshot: { seq: number; version: number; state: unknown } | undefined,
  events: readonly RunEvent[],
): RunState | undefined {
  if (snapshot && snapshot.version !== StateVersion) return undefined
  const state = snapshot ? (snapshot.state as RunState) : emptyState(runId)
  if (state.runId !== runId || state.lastSeq !== (snapshot?.seq ?? 0)) return undefined
  // Frozen as the reducer leaves them: a slice changes only by its plugin's events, whoever holds the state.
  if (state.slices) freezeData(state.slices)
  for (const event of events) apply(state, event)
  return state
}

/** Apply one event to state, in place. */
export function apply(state: RunState, event: RunEvent): void {
  if (event.seq !== state.lastSeq + 1)
    throw new CordageError('invalid_event', `run ${state.runId}: expected seq ${state.lastSeq + 1}, got ${event.seq} (${event.type})`)
  if (event.runId !== state.runId)
    throw new CordageError('invalid_event', `event seq ${event.seq} belongs to run ${event.runId}, not ${state.runId}`)
  if (event.schema > EventSchemaVersion)
    throw new CordageError(
      'invalid_event',
      `event seq ${event.seq} has schema ${event.schema}; this kernel reads up to ${EventSchemaVersion}`,
    )
  // Own keys only: a stored type such as "constructor" must not find Object's.
  if (!Object.hasOwn(Reducers, event.type)) throw new CordageError('invalid_event', `unknown event type ${event.type}`)
  ;(Reducers[event.type] as Reducer<RunEventType>)(state, event)
  state.lastSeq = event.seq
  state.updatedAt = event.time
}

const nothing = (): void => {}

/** The run's own events; the `tool/*` ones are in action-reducers.ts. The type makes the two exhaustive. */
const Reducers: { readonly [K in RunEventType]: Reducer<K> } = Object.freeze({
  ...ActionReducers,
  'run/start': (state, event) => {
    const d = event.data
    moveTo(state, 'RUNNING')
    Object.assign(state, {
      agent: d.agent,
      task: d.task,
      plugins: d.plugins,
      hashes: d.hashes ? { ...d.hashes } : undefined,
      services: d.services,
      budgets: d.budgets,
      deadline: d.deadline,
      createdAt: event.time,
      parent: d.parent,
      ...(d.thread ? { thread: freezeData(d.thread) } : {}),
    })
  },
  'run/handoff': (state, event) => {
    Object.assign(state, {
      agent: event.data.to,
      plugins: event.data.plugins,
      // An older handoff recorded versions only: its hashes are unknown.
      hashes: event.data.hashes ? { ...event.data.hashes } : undefined,
      services: event.data.services,
      handoff: undefined,
    })
  },
  'run/version-drift': (state, event) => {
    // What was accepted is what the run runs on from here: the next check compares with it.
    if (event.data.decision === 'refused') return
    for (const c of event.data.changes) {
      if (c.decision !== 'accepted') continue
      state.plugins = { ...state.plugins }
      if (c.to === undefined) delete state.plugins[c.plugin]
      else state.plugins[c.plugin] = c.to
      if (state.hashes) {
        state.hashes = { ...state.hashes }
        if (c.toHash === undefined) delete state.hashes[c.plugin]
        else state.hashes[c.plugin] = c.toHash
      }
    }
  },
  'run/checkpoint': nothing,
  'run/paused': (state, event) => {
    moveTo(state, event.data.status)
    const { status, actionId, reason, code, child } = event.data
    const on = pausedOn(event.data)
    // A run whose call waits on something outside it is not asking a question itself: its step still has that call open.
    if (status === 'WAITING_USER' && !on) state.stepSettled = true
    state.waiting = { status, actionId, reason, code, ...(on ? { on } : {}), ...(child ? { child: { ...child } } : {}) }
  },
  'run/resumed': (state, event) => {
    moveTo(state, 'RUNNING')
    state.waiting = undefined
    if (event.data.budgets) state.budgets = { ...state.budgets, ...event.data.budgets }
    if (event.data.input !== undefined) state.transcript.push(Object.freeze({ kind: 'user', text: event.data.input, seq: event.seq }))
  },
  'run/cancel-requested': (state, event) => {
    moveTo(state, 'CANCELLING')
    state.cancel = { by: event.data.by, at: event.data.requestedAt, reason: event.data.reason }
  },
  'run/recovered': nothing,
  'run/end': (state, event) => {
    moveTo(state, event.data.status)
    state.failureCode = event.data.failureCode
    state.reason = event.data.reason
    state.answer = event.data.answer
    state.waiting = undefined
    state.pending = []
    if (state.reservations?.length) state.reservations = []
  },
  'turn/start': (state, event) => {
    state.turns++
    state.transcript.push(Object.freeze({ kind: 'user', text: event.data.input, seq: event.seq }))
  },
  'turn/end': nothing,
  'step/start': (state) => {
    state.steps++
    state.stepOpen = true
    state.stepActions = 0
    state.stepDecision = undefined
    state.stepSettled = false
  },
  'step/end': (state) => {
    state.stepOpen = false
  },
  'step/no-progress': (state, event) => {
    // Schema 1 kept the progress service's history for it; from 2 on the service keeps its own (slice/update).
    const { detector, response, text } = event.data
    const kept = { detector, response, afterStep: state.steps, seq: event.seq }
    if (event.schema < 2) applySlice(state, sliceName(event.producer), { push: { interventions: [kept] } })
    if (response === 'feedback' && text) state.transcript.push(Object.freeze({ kind: 'feedback', text, seq: event.seq }))
  },
  'slice/update': applySliceEvent,
  'step/context': nothing,
  'compaction/start': nothing,
  'step/model-request': nothing,
  'step/model-error': nothing,
  // The turns before this one, ahead of the run's own transcript (plugins/threads hands them to the kernel to record).
  'thread/history': (state, event) => {
    for (const entry of event.data.entries) state.transcript.push(freezeData({ ...entry, seq: event.seq }))
  },
  // Open reservations count as spent (the meter, core/kernel/meter.ts) until settled or their action ends.
  'budget/reserved': (state, event) => {
    state.reservations = [...(state.reservations ?? []), ...event.data.reservations.map((r) => ({ ...r }))]
  },
  'budget/settled': (state, event) => {
    const { kind, actionId } = event.data.reservation
    release(state, (r) => r.kind === kind && r.actionId === actionId)
  },
  'compaction/end': (state, event) => {
    if (event.data.usage) addUsage(state, event.data.usage)
  },
  'step/model-response': (state, event) => {
    const { decision, reasoning, usage } = event.data
    addUsage(state, usage)
    const entry = { kind: 'assistant' as const, decision: freezeData(decision), actionIds: Object.freeze([]), seq: event.seq }
    // The reasoning is carried to the next request unchanged (the provider checks its signatures), so kept as recorded.
    state.transcript.push(Object.freeze(reasoning ? { ...entry, reasoning: freezeData(reasoning) } : entry))
    state.stepDecision = decision.kind
  },
  'verify/start': nothing,
  'guard/tripped': nothing,
  'verify/end': (state, event) => {
    state.stepSettled = true
    if (!event.data.ok && event.data.repair) {
      state.repairs++
      const text = `The answer was not accepted (${event.data.code}): ${event.data.feedback ?? event.data.reason}`
      state.transcript.push(Object.freeze({ kind: 'feedback', text, seq: event.seq }))
    }
  },
})

function moveTo(state: RunState, status: RunStatus) {
  assertTransition(state.status, status)
  state.status = status
}
