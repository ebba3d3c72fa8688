/**
 * @module flow
 * The loop's flow, as every part of a step speaks it: what comes after a pass (go on, or stop driving
 * here), and why and how a run pauses.
 */
import type { Code } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { TerminalStatus, WaitCondition, WaitingStatus } from '../contracts/data.ts'

/** After a pass: go round again, or stop driving (the run paused, ended or was handed on). */
export type Next = 'continue' | 'halt'

export interface PauseDetail {
  /** The action the run waits on. */
  actionId?: string
  /** Record tool/approval-requested with these facts (after the checkpoint). */
  approval?: RunEvent<'tool/approval-requested'>['data']
  /** Why, where a code applies (run/paused.code). */
  code?: Code
  /** The condition outside the run that action `actionId` waits on (run/paused `waitsOn`, or `child`). */
  on?: WaitCondition
}

/**
 * What a stage asks of the run instead of going on, as data: end it (`end`, with the code and reason
 * of its run/end), pause it, or end it CANCELLED as asked. The stage returns it; the caller acts on it
 * with `stop` (core/kernel/ending.ts), so no stage ends a run behind its caller's back.
 */
export type Stop =
  | { end: TerminalStatus; code?: Code; reason?: string; answer?: string }
  | { pause: WaitingStatus; reason: string; detail?: PauseDetail }
  | { cancelled: true }
