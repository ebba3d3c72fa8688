/**
 * @module reconcile
 * Settling an unknown effect by hand (`cordage reconcile`): the action a run in WAITING_RECONCILIATION
 * waits on is recorded as committed (it closes with that result) or not (it runs again under the same
 * idempotency key), and the ledger entry of its key gets the same outcome, in the same write.
 */
import { CordageError } from '../contracts/errors.ts'
import { turn } from './command-ids.ts'
import type { RunDriver } from './loop.ts'
import type { ActionState, RunState } from './state.ts'
import { KernelProducer } from './version.ts'

/** The action whose effect is unknown; `reconcile_not_possible` when the run does not wait on `actionId` for that. */
export function reconcilableAction(state: RunState, actionId: string): ActionState {
  const action = state.actions[actionId]
  // A run whose call waits on a condition (a child run) has no effect of its own to settle: it is settled where it waits.
  if (state.waiting?.on)
    throw new CordageError(
      'reconcile_not_possible',
      `run ${state.runId} has no effect of its own to settle: ${state.waiting.reason}; settle it there, and this run goes on once it has ended`,
    )
  if (state.status !== 'WAITING_RECONCILIATION' || state.waiting?.actionId !== actionId || action?.status !== 'running') {
    throw new CordageError(
      'reconcile_not_possible',
      `run ${state.runId} is ${state.status}${state.waiting?.actionId ? ` (waiting on ${state.waiting.actionId})` : ''}; action ${actionId} has no unknown effect to settle`,
    )
  }
  return action
}

/** Record tool/reconciled and the ledger outcome of the action's key, durably. */
export async function recordReconciled(
  driver: RunDriver,
  state: RunState,
  action: ActionState,
  committed: boolean,
  options: { by?: string; receipt?: unknown },
): Promise<void> {
  const key = action.key ?? `${state.runId}/${action.id}`
  const by = `operator:${options.by ?? 'api'}`
  driver.rec.record('tool/reconciled', { tool: action.tool, key, committed, by, receipt: options.receipt }, KernelProducer, {
    ...turn(state),
    stepId: action.stepId,
    actionId: action.id,
    causation: state.lastSeq,
  })
  const receipt = committed ? options.receipt : undefined
  await driver.flush([{ op: 'outcome', key, status: committed ? 'committed' : 'not_committed', receipt, at: Date.now() }])
}
