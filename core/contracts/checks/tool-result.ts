/**
 * @module checks/tool-result
 * The checks of what a tool's result says besides its output (services/tools.ts ToolResult): that it is
 * a result at all, the usage of a nested run it reports, and the agent it hands the run to. See core/contracts/check.ts; a usage
 * the budgets cannot count throws, since the call already ran and counting 0 would overspend.
 */
import { CordageError } from '../errors.ts'
import type { ToolResult } from '../services/tools.ts'
import { describe } from '../check.ts'

/**
 * A tool's answer as a result: an object, or `tool_failed` naming what the tool gave instead. The call
 * ran (a write may have landed), so the caller records it without output and fails the run after.
 */
export function resultObject(result: unknown, tool: string): ToolResult {
  if (result !== null && typeof result === 'object' && !Array.isArray(result)) return result as ToolResult
  throw new CordageError(
    'tool_failed',
    `${tool} returned ${describe(result)}, not a result: a tool returns { output }, with an observation if it likes`,
  )
}

const UsageKeys = new Set(['inputTokens', 'outputTokens', 'costUsd', 'steps'])

/**
 * Usage a call reports for a nested run: up to four non-negative numbers (a missing one is 0), or
 * nothing. A usage in another shape (`{ tokens: 250 }`, a negative or non-numeric count) would let the
 * run's budgets count less than was spent: the run fails (`internal_error`) rather than count 0.
 */
export function resultUsage(usage: ToolResult['usage'], tool: string): ToolResult['usage'] {
  if (usage === undefined || usage === null) return undefined
  const bad = (why: string) =>
    new CordageError(
      'internal_error',
      `tool "${tool}" reported usage Cordage cannot count (${why}): ToolResult.usage is { inputTokens, outputTokens, costUsd, steps? }, non-negative numbers`,
    )
  if (typeof usage !== 'object' || Array.isArray(usage)) throw bad(`not an object: ${typeof usage}`)
  for (const [key, value] of Object.entries(usage)) {
    if (!UsageKeys.has(key)) throw bad(`unknown key "${key}"`)
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0))
      throw bad(`${key} is ${JSON.stringify(value)}`)
  }
  const n = (v: unknown) => (typeof v === 'number' ? v : 0)
  return {
    inputTokens: n(usage.inputTokens),
    outputTokens: n(usage.outputTokens),
    costUsd: n(usage.costUsd),
    steps: Math.floor(n(usage.steps)),
  }
}

/** The agent a result asks to hand the run to, when it names one; anything else is no handoff. */
export function resultHandoff(handoff: ToolResult['handoff']): ToolResult['handoff'] {
  if (!handoff || typeof handoff.agent !== 'string' || !handoff.agent) return undefined
  return { agent: handoff.agent, reason: typeof handoff.reason === 'string' ? handoff.reason : undefined }
}
