/**
 * @module cli/exit-codes
 * `cordage` exits 0 only when the run COMPLETED (or a non-run command succeeded). Each other outcome has
 * its own code so scripts can tell them apart without parsing output. docs/reference/cli.md lists the same table.
 */
import type { RunStatus } from '../kernel/status.ts'

export const ExitCodes = {
  ok: 0,
  failed: 1,
  usage: 2,
  failedVerification: 3,
  stopped: 4,
  waiting: 5,
  cancelled: 6,
  /** Another process owns the run now (run_busy, lease_lost, seq_conflict): try again later. */
  busy: 7,
  /** The run had ended before the command could act (run_ended: a cancel that came too late); nothing was changed. */
  ended: 8,
} as const

export function exitCodeFor(status: RunStatus): number {
  switch (status) {
    case 'COMPLETED':
      return ExitCodes.ok
    case 'FAILED_VERIFICATION':
      return ExitCodes.failedVerification
    case 'STOPPED':
      return ExitCodes.stopped
    case 'CANCELLED':
    case 'CANCELLING':
      return ExitCodes.cancelled
    case 'WAITING_APPROVAL':
    case 'WAITING_USER':
    case 'WAITING_RECONCILIATION':
    case 'SUSPENDED':
      return ExitCodes.waiting
    default:
      return ExitCodes.failed
  }
}
