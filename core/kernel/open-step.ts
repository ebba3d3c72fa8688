/**
 * @module open-step
 * Where a run is inside its turn and step: the ids its events carry, and what an open step still owes
 * when a run is taken over from the log.
 */
import type { RunState } from '../contracts/state.ts'
import type { Next } from './flow.ts'
import { turn } from './command-ids.ts'
import type { EventIds } from './recorder.ts'
import { pauseRun, stopOrGoOn } from './ending.ts'
import { verifyAnswer } from './verification.ts'
import { runStep } from './step.ts'
import type { Run } from './run.ts'
import { flow } from '../kit/later.ts'

/** Turn and step ids of where a run is, rebuilt only when the run moves (they are read for every event). */
export class PlaceIds {
  #turns = -1
  #steps = -1
  #open = false
  #ids: EventIds = {}

  of(state: Pick<RunState, 'turns' | 'steps' | 'stepOpen' | 'thread'>): EventIds {
    const { turns, steps, stepOpen } = state
    if (this.#turns !== turns || this.#steps !== steps || this.#open !== stepOpen) {
      this.#turns = turns
      this.#steps = steps
      this.#open = stepOpen
      this.#ids = turn(state)
    }
    return this.#ids
  }
}

Object.freeze(PlaceIds.prototype)

/**
 * Do what the open step still owes, when a run is taken over from the log (undefined: nothing): the model never answered it
 * on record (ask again, as the same step), or its final answer was not verified yet, or its question
 * was not put to the user yet. A step whose answer is on record is never asked again.
 */
export function finishOpenStep(run: Run): Next | Promise<Next> | undefined {
  const { stepDecision, stepSettled } = run.state
  if (!stepDecision) return flow(runStep(run, false))
  if (stepSettled || stepDecision === 'tool_calls') return undefined
  const last = run.state.transcript.findLast((t) => t.kind === 'assistant')
  if (last?.kind !== 'assistant') return undefined
  const { decision, seq } = last
  if (decision.kind === 'final') return verifyAnswer(run, decision.text, seq).then((s) => stopOrGoOn(run, s))
  if (decision.kind === 'ask_user') return pauseRun(run, 'WAITING_USER', decision.question)
  return undefined
}
