/**
 * @module control
 * Errors that end a run rather than count as a service's own failure.
 */
import { CordageError } from '../contracts/errors.ts'

/** What a service call ends in that is not the service's own failure: the loop ends the run with it. */
export function isControl(error: unknown): boolean {
  return (
    CordageError.is(error) &&
    (error.code === 'service_timeout' || error.code === 'deadline_exceeded' || error.code === 'cancelled' || error.code === 'lease_lost')
  )
}
