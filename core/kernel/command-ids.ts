/**
 * @module command-ids
 * Where an operator's command (approve, reconcile, resume, a handoff) lands in a run's log.
 */
import type { RunState } from './state.ts'
import { turnIdOf } from '../kit/thread-ids.ts'
import type { EventIds } from './recorder.ts'

/**
 * Ids for a command's event: the run's turn (`t1`, or for a turn of a thread its turn in the thread;
 * none before turn/start), and the step when the run paused inside one.
 */
export function turn({ turns, steps, stepOpen, thread }: Pick<RunState, 'turns' | 'steps' | 'stepOpen' | 'thread'>): EventIds {
  const turnId = turns ? turnIdOf(thread ? thread.turn + turns - 1 : turns) : undefined
  return { turnId, stepId: stepOpen ? `s${steps}` : undefined }
}
