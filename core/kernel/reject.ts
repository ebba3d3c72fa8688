/**
 * @module reject
 * Closing an action that never starts: `tool/error` with the code, and the reason as the observation
 * the model reads next. Whatever refused it (validation, the guardrail, policy, a person, a phase, a
 * constraint) is named in the observation by the caller. A stage that refuses returns a
 * {@link Refused}; whoever acts on the stages' results closes it with {@link closeRefused}.
 */
import { Codes, type Code } from '../contracts/errors.ts'
import type { ActionState } from '../contracts/state.ts'
import type { Run } from './run.ts'
import { KernelProducer } from './version.ts'
import type { Next } from './flow.ts'

/** Why a stage closes an action unrun: the code, what the model reads, and the seq that caused it. */
export interface Refused {
  refuse: { code: Code; observation: string; causation?: number }
}

export const refuse = (code: Code, observation: string, causation?: number): Refused => ({ refuse: { code, observation, causation } })

/** An action closed unrun, as a stage refused it. */
export const closeRefused = (run: Run, action: ActionState, { refuse: r }: Refused): Next =>
  reject(run, action, r.code, r.observation, r.causation)

export function reject(run: Run, action: ActionState, code: Code, observation: string, causation = action.proposedSeq): 'continue' {
  run.rec.record(
    'tool/error',
    { tool: action.tool, errorClass: Codes[code].kind, code, message: observation, observation },
    KernelProducer,
    run.idsOf(action.id, causation),
  )
  return 'continue'
}
