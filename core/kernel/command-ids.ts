/**
 * @module command-ids
 * Where an operator's command (approve, reconcile, resume, a handoff) lands in a run's log.
 */
import type { RunState } from './state.ts'
import { turnIdOf } from '../kit/thread-ids.ts'

/** The id of the run's turn: `t1`, or for a turn of a thread its turn in the thread; undefined before turn/start. */
export function currentTurnId(state: Pick<RunState, 'turns' | 'thread'>): string | undefined {
  if (!state.turns) return undefined
  return turnIdOf(state.thread ? state.thread.turn + state.turns - 1 : state.turns)
}

/** Ids for a command's event: the current turn, and the step when the run paused inside one. */
export function turn(state: Pick<RunState, 'turns' | 'steps' | 'stepOpen' | 'thread'>): {
  turnId: string | undefined
  stepId: string | undefined
} {
  return { turnId: currentTurnId(state), stepId: state.stepOpen ? `s${state.steps}` : undefined }
}
