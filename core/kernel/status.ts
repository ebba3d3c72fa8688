/**
 * @module status
 * Run statuses and the transitions the kernel allows between them. The reducer checks every status
 * change against this table, so a log that skips a state (or a bug that tries to) is caught on write
 * and on load alike.
 */
import { CordageError } from '../contracts/errors.ts'
import { deepFreeze } from '../kit/freeze.ts'
import type { RunStatus, WaitingStatus, TerminalStatus } from '../contracts/data.ts'
export type { RunStatus, WaitingStatus, TerminalStatus } from '../contracts/data.ts'

const waiting: WaitingStatus[] = ['WAITING_APPROVAL', 'WAITING_USER', 'WAITING_RECONCILIATION', 'SUSPENDED']
const terminal: TerminalStatus[] = ['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED']

export const Transitions: Record<RunStatus, readonly RunStatus[]> = {
  CREATED: ['RUNNING', 'CANCELLED', 'FAILED'],
  RUNNING: [...waiting, 'CANCELLING', ...terminal],
  WAITING_APPROVAL: ['RUNNING', 'CANCELLING', 'CANCELLED'],
  WAITING_USER: ['RUNNING', 'CANCELLING', 'CANCELLED'],
  WAITING_RECONCILIATION: ['RUNNING', 'CANCELLING', 'CANCELLED'],
  SUSPENDED: ['RUNNING', 'CANCELLING', 'CANCELLED'],
  CANCELLING: ['CANCELLED'],
  COMPLETED: [],
  FAILED: [],
  FAILED_VERIFICATION: [],
  STOPPED: [],
  CANCELLED: [],
}

deepFreeze(Transitions)
export function isTerminal(status: RunStatus): status is TerminalStatus {
  return (terminal as RunStatus[]).includes(status)
}

export function isWaiting(status: RunStatus): status is WaitingStatus {
  return (waiting as RunStatus[]).includes(status)
}

export function assertTransition(from: RunStatus, to: RunStatus): void {
  if (!Transitions[from].includes(to))
    throw new CordageError(
      'illegal_transition',
      `a run cannot go from ${from} to ${to} (allowed from ${from}: ${Transitions[from].join(', ') || 'none, it is final'})`,
    )
}
