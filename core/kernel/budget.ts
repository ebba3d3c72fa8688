/**
 * @module budget
 * Hard bounds live outside the model (invariant 4). The loop calls {@link overBudget} at every
 * boundary: before each model call and before each action.
 */
import type { Code } from '../contracts/errors.ts'
import type { Budgets, BudgetState } from '../contracts/data.ts'
export type { Budgets, BudgetState } from '../contracts/data.ts'

export const DefaultBudgets: Budgets = { maxSteps: 20, maxRepairs: 0 }
Object.freeze(DefaultBudgets)

/** The budget code that ends the run now, or undefined when every bound still holds. */
export function overBudget(budgets: Budgets, state: BudgetState, now: number): { code: Code; reason: string } | undefined {
  if (state.deadline !== undefined && now >= state.deadline) {
    return { code: 'deadline_exceeded', reason: `deadline of ${budgets.deadlineMs} ms passed` }
  }
  const tokens = state.usage.inputTokens + state.usage.outputTokens
  if (budgets.maxTokens !== undefined && tokens >= budgets.maxTokens) {
    return { code: 'token_budget_exceeded', reason: `${tokens} tokens used, budget ${budgets.maxTokens}` }
  }
  if (budgets.maxCostUsd !== undefined && state.usage.costUsd >= budgets.maxCostUsd) {
    return { code: 'cost_budget_exceeded', reason: `$${state.usage.costUsd.toFixed(4)} spent, budget $${budgets.maxCostUsd}` }
  }
  return undefined
}

/** Checked only before a model call: actions of a step that was already paid for may still run. */
export function outOfSteps(budgets: Budgets, state: BudgetState): { code: Code; reason: string } | undefined {
  const used = state.steps + (state.nestedSteps ?? 0)
  if (used >= budgets.maxSteps) {
    return {
      code: 'max_steps',
      reason: `${used} of ${budgets.maxSteps} steps used${state.nestedSteps ? ` (${state.nestedSteps} by subagents)` : ''}`,
    }
  }
  return undefined
}
