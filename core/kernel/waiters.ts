/**
 * @module waiters
 * Who follows a run in this process (`AgentRuntime.follow`, core/kit/follow.ts) is woken when this
 * process dispatches an event of that run.
 */
import type { RunEvent } from '../contracts/events.ts'
import type { RunWaiters } from '../kit/follow.ts'
import type { Dispatch } from './cordis.ts'

/** `dispatch`, and then wake whoever follows the event's run here. */
export function wakingWaiters(dispatch: Dispatch, waiters: RunWaiters): Dispatch {
  return Object.assign(
    (event: RunEvent) => {
      dispatch(event)
      if (waiters.size) waiters.wake(event.runId)
    },
    dispatch,
    { watched: (types: readonly string[]) => waiters.size > 0 || dispatch.watched(types) },
  )
}
