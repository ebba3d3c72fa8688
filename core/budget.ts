/**
 * @module budget
 * Hard bounds live outside the model (invariant 4). The loop calls {@link overBudget} at every
 * boundary: before each model call and before each action.
 */
import type { Code } from './errors.ts'
import type { Usage } from './services/model.ts'

export interface Budgets {
  /** Model calls per run. The run stops with `max_steps` before call maxSteps + 1. */
  maxSteps: number
  /** Wall-clock milliseconds from run start (waiting for approval counts). */
  deadlineMs?: number
  /** Input plus output tokens over the whole run. */
  maxTokens?: number
  /** US dollars over the whole run, from the model adapter's cost figures. */
  maxCostUsd?: number
  /** Times a repairable verification failure is fed back to the model before the run fails. */
  maxRepairs: number
}

export const DefaultBudgets: Budgets = { maxSteps: 20, maxRepairs: 0 }
Object.freeze(DefaultBudgets)

export interface BudgetState {
  steps: number
  /** Steps of child runs (subagents). */
  nestedSteps?: number
  usage: Usage
  deadline?: number
}

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
    return { code: 'max_steps', reason: `${used} of ${budgets.maxSteps} steps used${state.nestedSteps ? ` (${state.nestedSteps} by subagents)` : ''}` }
  }
  return undefined
}
