/**
 * @module resumable
 * Whether `resume` may continue a run, by its status: a run nobody drives any more is taken over; a
 * waiting run goes on once what it waits for is there (the user's input, a decision on its approval, a
 * settled or harmless effect); anything else is refused with the command that would help.
 */
import { CordageError } from '../contracts/errors.ts'
import type { Tool } from '../contracts/services/tools.ts'
import { notWaiting } from './approval.ts'
import type { RunState } from './state.ts'
import { isWaiting } from './status.ts'

/**
 * `take-over` for a RUNNING or CANCELLING run (its worker died), `go-on` for a waiting run that may
 * continue; throws `invalid_input` or `run_not_waiting` otherwise. `toolOf` finds a tool by name.
 */
export function checkResumable(
  state: RunState,
  input: string | undefined,
  toolOf: (name: string) => Pick<Tool, 'idempotent'> | undefined,
): 'take-over' | 'go-on' {
  const runId = state.runId
  const waitingOn = state.waiting?.actionId ? state.actions[state.waiting.actionId] : undefined
  // Waiting on a condition (the runtime checked that it ended): whatever the status, what was asked was asked there.
  if (state.waiting?.on && isWaiting(state.status)) {
    if (input !== undefined)
      throw new CordageError('invalid_input', `run ${runId} asks no question of its own (${state.waiting.reason}): answer it there`)
    return 'go-on'
  }
  switch (state.status) {
    case 'RUNNING':
    case 'CANCELLING':
      return 'take-over'
    case 'WAITING_USER':
      if (typeof input !== 'string' || !input.trim())
        throw new CordageError(
          'invalid_input',
          `run ${runId} waits for the user's answer to: "${state.waiting?.reason}"; resume it with an input`,
        )
      return 'go-on'
    case 'SUSPENDED':
      return 'go-on'
    case 'WAITING_RECONCILIATION':
      // Resuming is safe when the action never started (it waited on another run's effect under its
      // key), or when its tool is idempotent (running it again under the same key is harmless).
      if (waitingOn?.status === 'running' && !toolOf(waitingOn.tool)?.idempotent)
        throw new CordageError(
          'run_not_waiting',
          `run ${runId} waits for someone to settle whether action ${state.waiting?.actionId} took effect (unknown_effect): cordage reconcile ${runId} ${state.waiting?.actionId} --committed|--not-committed`,
        )
      return 'go-on'
    case 'WAITING_APPROVAL':
      if (waitingOn?.status === 'awaiting_approval')
        throw new CordageError(
          'run_not_waiting',
          `run ${runId} still waits for approval of ${waitingOn.id} (${waitingOn.tool}): approve or reject it first`,
        )
      return 'go-on'
    default:
      throw notWaiting(state)
  }
}
