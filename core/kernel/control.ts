/**
 * @module control
 * Errors that end a run rather than count as a service's own failure.
 */
import { CordageError } from '../contracts/errors.ts'

const ControlCodes = new Set<string>(['service_timeout', 'deadline_exceeded', 'cancelled', 'lease_lost'])

/** What a service call ends in that is not the service's own failure: the loop ends the run with it. */
export const isControl = (error: unknown): boolean => CordageError.is(error) && ControlCodes.has(error.code)
