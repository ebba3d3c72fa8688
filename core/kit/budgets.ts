/**
 * @module kit/budgets
 * The budgets a run starts or resumes with, checked before anything is recorded: a run's own laid
 * over its agent's, and those raised on resume. Pure checks the kernel calls at its commands; what
 * the budgets then allow is the kernel's (steps, the deadline) and the meter's (tokens, cost).
 */
import { CordageError } from '../contracts/errors.ts'
import type { ResumeBudgets } from '../contracts/events.ts'
import type { Budgets } from '../contracts/data.ts'

/**
 * Budgets given on resume (`cordage resume --max-tokens --max-cost`), checked strictly: only maxTokens
 * (a positive integer) and maxCostUsd (a positive finite number). Undefined when none was given.
 */
export function checkResumeBudgets(value: unknown): ResumeBudgets | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CordageError('invalid_input', 'resume budgets must be an object with maxTokens and/or maxCostUsd')
  const out: ResumeBudgets = {}
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue
    if (key === 'maxTokens') {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
        throw new CordageError('invalid_input', `resume budget maxTokens must be a positive integer (--max-tokens N), got ${String(v)}`)
      out.maxTokens = v
    } else if (key === 'maxCostUsd') {
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
        throw new CordageError(
          'invalid_input',
          `resume budget maxCostUsd must be a positive number of dollars (--max-cost USD), got ${String(v)}`,
        )
      out.maxCostUsd = v
    } else throw new CordageError('invalid_input', `unknown resume budget "${key}": only maxTokens and maxCostUsd can be set on resume`)
  }
  return Object.keys(out).length ? out : undefined
}

const BudgetKeys = new Set(['maxSteps', 'deadlineMs', 'maxTokens', 'maxCostUsd', 'maxRepairs', 'thread'])
const ThreadBudgetKeys = new Set(['maxTurns', 'maxTokens', 'maxCostUsd'])

/**
 * The agent's budgets with a run's own (`StartOptions.budgets`) laid over them: `thread` key by key,
 * so a run that sets one thread bound keeps the others. An unknown key is `invalid_input` (a typo must
 * not drop a bound silently).
 */
export function startBudgets(agent: Budgets, own: Partial<Budgets> | undefined): Budgets {
  if (own === undefined) return agent
  const unknown = (keys: Set<string>, value: object, where: string) => {
    for (const key of Object.keys(value))
      if (!keys.has(key))
        throw new CordageError(
          'invalid_input',
          `unknown budget "${where}${key}": the keys are ${[...keys].map((k) => where + k).join(', ')}`,
        )
  }
  unknown(BudgetKeys, own, '')
  if (own.thread !== undefined) unknown(ThreadBudgetKeys, own.thread, 'thread.')
  const thread = own.thread ? { ...agent.thread, ...own.thread } : agent.thread
  return { ...agent, ...own, ...(thread ? { thread } : {}) }
}
