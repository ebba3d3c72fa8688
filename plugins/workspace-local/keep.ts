/** The cleanup policy: whether a run's workspace stays after the run ended with `status`. */
import type { TerminalStatus } from 'cordage'
import type { Keep } from './manifest.ts'

export function keepsWorkspace(keep: Keep, status: TerminalStatus): boolean {
  if (keep === 'always') return true
  if (keep === 'never') return false
  // `failed`: keep what someone may want to look at, that is every run that did not complete.
  return status !== 'COMPLETED'
}
