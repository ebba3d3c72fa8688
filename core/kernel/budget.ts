/**
 * @module budget
 * Hard bounds live outside the model (invariant 4). The loop calls {@link overBudget} at every
 * boundary (before each model call and before each action) and {@link outOfSteps} before each model
 * call. Tokens and cost are the meter's (core/kernel/meter.ts asks it at the same boundaries).
 */
import type { Code } from '../contracts/errors.ts'
import type { Budgets, BudgetState } from '../contracts/data.ts'
export type { Budgets, BudgetState } from '../contracts/data.ts'

export const DefaultBudgets: Budgets = { maxSteps: 20, maxRepairs: 0 }
Object.freeze(DefaultBudgets)

/** The kernel's bound that ends the run now (the deadline), or undefined while it holds. */
export function overBudget(budgets: Budgets, state: BudgetState, now: number): { code: Code; reason: string } | undefined {
  if (state.deadline !== undefined && now >= state.deadline)
    return { code: 'deadline_exceeded', reason: `deadline of ${budgets.deadlineMs} ms passed` }
  return undefined
}

/** Checked only before a model call: actions of a step that was already paid for may still run. */
export function outOfSteps(budgets: Budgets, state: BudgetState): { code: Code; reason: string } | undefined {
  const used = state.steps + (state.nestedSteps ?? 0)
  if (used < budgets.maxSteps) return undefined
  return {
    code: 'max_steps',
    reason: `${used} of ${budgets.maxSteps} steps used${state.nestedSteps ? ` (${state.nestedSteps} by subagents)` : ''}`,
  }
}
