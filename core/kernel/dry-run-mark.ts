/**
 * @module dry-run-mark
 * Every event that ends a dry run says so: `tool/end` and `tool/error` carry `dryRun: true` whichever
 * path ended it (its preview answered or failed, the guardrail or policy refused it, a person rejected
 * it, the run ended first), so anything that counts effects from those events alone (`cordage events`,
 * the playground, traces) never counts a preview as a write. The recorder applies it to every event it
 * records, so no path can forget it.
 */
import type { RunEventMap, RunEventType } from '../contracts/events.ts'
import type { RunState } from '../contracts/state.ts'

export function markDryRun<K extends RunEventType>(state: RunState, type: K, data: RunEventMap[K], actionId?: string): RunEventMap[K] {
  if ((type !== 'tool/end' && type !== 'tool/error') || actionId === undefined || !state.actions[actionId]?.dryRun) return data
  const ended = data as RunEventMap['tool/end' | 'tool/error']
  return (ended.dryRun ? data : { ...ended, dryRun: true }) as RunEventMap[K]
}
