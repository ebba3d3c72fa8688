/**
 * @module bounded
 * A service's asynchronous answer, bounded in time: it settles with the answer, or rejects with
 * `service_timeout` after the agent's limit for that service, or `deadline_exceeded` when the run's
 * deadline comes first, or the run's abort reason when the run is cancelled while it waits.
 */
import { CordageError } from '../contracts/errors.ts'
import type { TimedService } from './loop-host.ts'

export function bounded<T>(
  answer: Promise<T>,
  service: TimedService,
  provider: string,
  limit: number,
  deadline: number | undefined,
  signal: AbortSignal,
): Promise<T> {
  const byDeadline = deadline !== undefined && deadline - Date.now() < limit
  const ms = Math.max(0, byDeadline ? deadline! - Date.now() : limit)
  return new Promise<T>((resolve, reject) => {
    const settle =
      <A>(to: (a: A) => void) =>
      (a: A) => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        to(a)
      }
    const timer = setTimeout(
      () =>
        settle(reject)(
          byDeadline
            ? new CordageError('deadline_exceeded', `the deadline passed while the ${service} service (${provider}) was answering`)
            : new CordageError(
                'service_timeout',
                `the ${service} service (${provider}) did not answer within ${ms} ms (serviceTimeouts.${service})`,
              ),
        ),
      ms,
    )
    const onAbort = () => settle(reject)(signal.reason)
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    answer.then(settle(resolve), settle(reject))
  })
}

/** An answer given synchronously is used as it is: only a promise is bounded (and awaited). */
export { isThenable } from '../kit/later.ts'
