/**
 * @module constraints
 * Constrained allows (issue 12): a policy may attach limits to an `allow` (core/contracts/data.ts
 * Constraints). They are checked strictly where the decision is (verdicts.ts: unknown names or bad
 * values make the decision invalid, denied to fail closed), recorded with it in tool/decision, and the
 * call runs under the RECORDED ones (after an approval or a resume in another process too). A tool
 * must declare in `enforces` each one it is given, except `timeLimitMs`, which the kernel holds itself
 * by shortening the call's time limit; otherwise the call is refused with `constraint_unenforceable`
 * before it starts.
 */
import type { Constraints } from '../contracts/data.ts'
import type { ConstraintName, Tool } from '../contracts/services/tools.ts'
import { describe } from './describe-value.ts'

export type CheckedConstraints = { ok: true; value: Constraints } | { ok: false; problem: string }

const Names: readonly ConstraintName[] = ['maxAmount', 'pathPrefix', 'timeLimitMs']

/** The constraints of a decision, checked and copied (own keys only; a getter is read once). */
export function checkConstraints(value: unknown): CheckedConstraints {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, problem: `constraints must be an object, got ${describe(value)}` }
  const out: Constraints = {}
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key]
    if (!(Names as readonly string[]).includes(key))
      return { ok: false, problem: `unknown constraint "${key}" (known: ${Names.join(', ')})` }
    if (key === 'maxAmount') {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        return { ok: false, problem: `constraints.maxAmount must be a finite number >= 0, got ${describe(v)}` }
      out.maxAmount = v
    } else if (key === 'pathPrefix') {
      const problem = pathProblem(v)
      if (problem) return { ok: false, problem: `constraints.pathPrefix ${problem}` }
      out.pathPrefix = v as string
    } else {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
        return { ok: false, problem: `constraints.timeLimitMs must be a positive integer, got ${describe(v)}` }
      out.timeLimitMs = v
    }
  }
  return { ok: true, value: out }
}

/** What is wrong with a path prefix, or undefined: a non-empty string, without a `..` segment or a NUL. */
export function pathProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return `must be a non-empty string, got ${describe(value)}`
  if (value.includes('\0')) return 'must not hold a NUL character'
  if (value.split(/[\\/]/).includes('..')) return `must not hold a ".." segment, got ${describe(value)}`
  return undefined
}

/** The constraints a tool is given that it does not declare it enforces (`timeLimitMs` the kernel holds itself). */
export function unenforceable(constraints: Constraints | undefined, tool: Tool): string[] {
  if (!constraints) return []
  const enforces = Array.isArray(tool.enforces) ? tool.enforces : []
  return Object.keys(constraints).filter((name) => name !== 'timeLimitMs' && !enforces.includes(name as ConstraintName))
}

/** The call's time limit: the tool's own, shortened by a `timeLimitMs` constraint. */
export function timeLimitOf(tool: Tool, constraints: Constraints | undefined): number {
  const limit = constraints?.timeLimitMs
  return limit !== undefined && limit < tool.timeoutMs ? limit : tool.timeoutMs
}
