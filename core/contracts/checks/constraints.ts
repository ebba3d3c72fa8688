/**
 * @module checks/constraints
 * The constraints of a constrained allow (issue 12; core/contracts/data.ts Constraints), checked
 * strictly with the decision they come with (checks/policy.ts): unknown names or bad values make the
 * decision invalid, denied to fail closed. How the kernel holds them is core/kernel/constraints.ts.
 */
import type { Constraints } from '../data.ts'
import type { ConstraintName } from '../services/tools.ts'
import { describe } from '../check.ts'

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

/**
 * What is wrong with a path prefix, or undefined: a non-empty string, without a `..` segment or a NUL,
 * relative to the workspace root. An absolute one (POSIX or Windows, or one on a Windows drive) names
 * no folder of the workspace: the tools would refuse every call at run time (cordage/kit
 * resolvePathWithin), so the decision is refused here already, whichever system the run is on.
 */
export function pathProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return `must be a non-empty string, got ${describe(value)}`
  if (value.includes('\0')) return 'must not hold a NUL character'
  if (value.split(/[\\/]/).includes('..')) return `must not hold a ".." segment, got ${describe(value)}`
  if (/^([\\/]|[A-Za-z]:)/.test(value)) return `must be relative to the workspace root (such as "src/"), got ${describe(value)}`
  return undefined
}
