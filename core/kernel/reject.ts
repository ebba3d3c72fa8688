/**
 * @module reject
 * Closing an action that never starts: `tool/error` with the code, and the reason as the observation
 * the model reads next. Whatever refused it (validation, the guardrail, policy, a person, a phase, a
 * constraint) is named in the observation by the caller.
 */
import { Codes, type Code } from '../contracts/errors.ts'
import type { ActionState } from '../contracts/state.ts'
import type { Run } from './run.ts'
import { KernelProducer } from './version.ts'

export function reject(run: Run, action: ActionState, code: Code, observation: string, causation = action.proposedSeq): 'continue' {
  run.rec.record(
    'tool/error',
    { tool: action.tool, errorClass: Codes[code].kind, code, message: observation, observation },
    KernelProducer,
    run.idsOf(action.id, causation),
  )
  return 'continue'
}
