/**
 * @module summary
 * The one-line summary of a run that `cordage runs` lists, folded from events so a store can keep it
 * current on append without replaying the log.
 */
import type { RunEvent } from '../contracts/events.ts'
import type { RunSummary } from '../contracts/services/store.ts'

/** Fold one event into a run's summary. Changes `previous` in place (and returns it); creates one for a new run. */
export function summarize(previous: RunSummary | undefined, event: RunEvent): RunSummary {
  const summary: RunSummary = previous ?? {
    runId: event.runId,
    agent: '',
    task: '',
    status: 'CREATED',
    lastSeq: event.seq,
    createdAt: event.time,
    updatedAt: event.time,
  }
  summary.lastSeq = event.seq
  summary.updatedAt = event.time
  switch (event.type) {
    case 'run/start':
      summary.agent = event.data.agent
      summary.task = event.data.task
      summary.status = 'RUNNING'
      break
    case 'run/handoff':
      // Who drives the run now: workers claim runs by this, and lists show it.
      summary.agent = event.data.to
      break
    case 'run/paused':
      summary.status = event.data.status
      break
    case 'run/resumed':
      summary.status = 'RUNNING'
      break
    case 'run/cancel-requested':
      summary.status = 'CANCELLING'
      break
    case 'run/end':
      summary.status = event.data.status
      summary.failureCode = event.data.failureCode
      break
  }
  return summary
}
