/**
 * @module services/waits
 * The `waits` contract: conditions outside a run that one of its tool calls waits on (issue 28; a child
 * run that waits for a person is one kind, issue 17). The host provides it to every agent and owns kind
 * `child` itself (core/host/child-waits.ts); a plugin may own another kind (`own`).
 *
 * The kernel keeps the pause and the resume: a call whose result says it waits (ToolResult.waitsFor)
 * records no outcome, the run pauses in the status the condition gives, and once the condition has ended
 * the call runs again (so only an idempotent tool may wait). What the condition is, the kernel asks its
 * owner, and acts on the answer only after its check (core/contracts/checks/waits.ts): whether it is the waiting call's own
 * and still going (else the tool failed: no pause), whether it has ended (else `resume` is refused), to
 * cancel it (the waiting run is cancelled, or ends without it). And it tells the service when a run of
 * this agent ended, so that an owner wakes whoever waits on that run.
 */
import type { RunState } from '../state.ts'
import type { WaitCondition, WaitingChild } from '../data.ts'

export const WaitsContract = '1.0.0'

export type { WaitCondition } from '../data.ts'

/** The call that waits: its run and action. */
export interface Waiter {
  runId: string
  actionId: string
}

/**
 * What an owner says of a condition for a waiter. `going`: it is the waiter's own and has not ended (the
 * run may pause on it, and may not go on yet). `ended`: it is the waiter's own and has ended (the run
 * goes on; a tool may not start waiting on it). `unknown`: not the waiter's own, gone, or the owner cannot
 * tell (no pause on it; a run that waits on it is refused a resume and must be cancelled). `says` is for
 * the person: what it is, and what to do.
 */
export interface WaitLook {
  state: 'going' | 'ended' | 'unknown'
  says: string
}

/** The owner of one kind of condition. Whatever it answers is checked; a throw counts as `unknown`. */
export interface WaitOwner {
  look(on: WaitCondition, waiter: Waiter): Promise<WaitLook>
  /** Cancel it: its waiter's run is cancelled, or ends without it. Only the waiter's own, not ended; anything else is left alone. */
  cancel(on: WaitCondition, waiter: Waiter): Promise<void>
  /** A run of this agent ended: wake whoever waits on it, if it is a condition of this kind (best effort). */
  runEnded?(state: RunState): Promise<void>
  /** Refuse (throw) a decision on a run of this agent that is a condition of this kind nobody waits on any more. */
  checkAwaited?(state: RunState): Promise<void>
}

export interface WaitsService {
  /** The owner of conditions of `kind` in this agent, undefined when nobody owns it. */
  owner(kind: string): WaitOwner | undefined
  /** Own conditions of `kind` from now on (a plugin's kind goes with the plugin: call the returned function). */
  own(kind: string, owner: WaitOwner): () => void
  /** A run of this agent ended: every owner wakes whoever waits on it. Never throws (a lost wake is the worker's sweep's). */
  runEnded(state: RunState): Promise<void>
  /** Refuse (throw, with a code) a decision on run `state` of this agent when whoever waited on it has ended. */
  checkAwaited(state: RunState): Promise<void>
}

declare module 'cordis' {
  interface Context {
    waits: WaitsService
  }
}

/** What a kind may be called: lower case, digits and dashes, as a plugin name. */
export const WaitKind = /^[a-z][a-z0-9-]{0,31}$/

/** The fields run/paused records a condition in: a child run in `child` (as since issue 17), any other in `waitsOn`. */
export function recordedWait(on: WaitCondition): { child: WaitingChild } | { waitsOn: WaitCondition } {
  if (on.kind !== 'child') return { waitsOn: on }
  const { runId, agent, actionId } = on as unknown as { runId: string; agent: string; actionId?: string }
  return { child: { runId, agent, ...(actionId !== undefined ? { actionId } : {}) } }
}

/** The condition a run/paused records, from either field (undefined: the run waits on nothing outside it). */
export function pausedOn(data: { child?: WaitingChild; waitsOn?: WaitCondition }): WaitCondition | undefined {
  if (data.waitsOn) return { ...data.waitsOn }
  return data.child ? { ...data.child, kind: 'child' } : undefined
}
