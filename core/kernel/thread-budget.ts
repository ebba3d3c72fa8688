/**
 * @module thread-budget
 * A thread's token and cost budgets (`budgets.thread`) hold over all its turns: what the turns before
 * used (run/start `thread.usedBefore`) plus what this turn used so far. The kernel holds it at every
 * boundary, after the meter judged the run's own tokens and cost (core/kernel/meter.ts); the turn then
 * ends STOPPED `thread_budget_exceeded`. The meter reserves calls within the same figures (plugins/budgets
 * `available`), so a reservation that fits never crosses this bound. The turn budget (`maxTurns`) is checked before a turn starts, and what
 * the turns before used is read from their logs then, by the threads plugin (plugins/threads).
 */
import type { Code } from '../contracts/errors.ts'
import type { RunState } from '../contracts/state.ts'

/** The thread budget code that ends the turn now, or undefined (not a thread, or within its budgets). */
export function overThreadBudget(state: Pick<RunState, 'budgets' | 'thread' | 'usage'>): { code: Code; reason: string } | undefined {
  const bounds = state.budgets.thread
  const thread = state.thread
  if (!bounds || !thread) return undefined
  const before = thread.usedBefore
  const tokens = before.inputTokens + before.outputTokens + state.usage.inputTokens + state.usage.outputTokens
  const cost = before.costUsd + state.usage.costUsd
  let over: string | undefined
  if (bounds.maxTokens !== undefined && tokens >= bounds.maxTokens)
    over = `${tokens} tokens used over ${thread.turn} turn(s), budget ${bounds.maxTokens} (budgets.thread.maxTokens)`
  else if (bounds.maxCostUsd !== undefined && cost >= bounds.maxCostUsd)
    over = `$${cost.toFixed(4)} spent over ${thread.turn} turn(s), budget $${bounds.maxCostUsd} (budgets.thread.maxCostUsd)`
  return over === undefined ? undefined : { code: 'thread_budget_exceeded', reason: `thread ${thread.id}: ${over}` }
}
