/**
 * @module command-ids
 * Where an operator's command (approve, reconcile, resume, a handoff) lands in a run's log.
 */
import type { RunState } from './state.ts'

/** Ids for a command's event: the current turn, and the step when the run paused inside one. */
export function turn(state: Pick<RunState, 'turns' | 'steps' | 'stepOpen'>): { turnId: string | undefined; stepId: string | undefined } {
  return { turnId: state.turns ? `t${state.turns}` : undefined, stepId: state.stepOpen ? `s${state.steps}` : undefined }
}
