/**
 * A rule's `constraints` (a constrained allow), checked strictly at load: only on an allow rule, only
 * the names the policy contract knows, each with a good value. Unknown names and bad values are
 * config errors naming the key, never dropped (a dropped limit would widen what the rule allows).
 * The kernel checks the decision again (fail closed); this makes a bad preset fail at load instead.
 */
import type { PolicyDecision } from 'cordage'

type Constraints = NonNullable<PolicyDecision['constraints']>

const Names = ['maxAmount', 'pathPrefix', 'timeLimitMs']

/** The constraints as a clean copy, or what is wrong with them (a sentence that names the key). */
export function checkConstraints(value: unknown, verdict: string): Constraints | string {
  if (verdict !== 'allow') return `has constraints but its verdict is ${verdict}; constraints go only on an allow rule`
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `constraints must be an object (maxAmount, pathPrefix, timeLimitMs), got ${JSON.stringify(value)}`
  const out: Constraints = {}
  for (const [key, v] of Object.entries(value)) {
    if (!Names.includes(key)) return `constraints.${key} is not a constraint; known: ${Names.join(', ')}`
    if (key === 'maxAmount') {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        return `constraints.maxAmount must be a number >= 0, got ${JSON.stringify(v)}`
      out.maxAmount = v
    } else if (key === 'pathPrefix') {
      if (typeof v !== 'string' || v.length === 0 || v.includes('\0') || v.split(/[\\/]/).includes('..'))
        return `constraints.pathPrefix must be a non-empty path without a ".." segment or a NUL, got ${JSON.stringify(v)}`
      // Relative to the workspace root, as the tools hold it (cordage/kit resolvePathWithin): an
      // absolute one would allow nothing at run time, so it is refused here, where the preset is.
      if (/^[\\/]/.test(v))
        return `constraints.pathPrefix must be relative to the workspace root (such as "src/"), got ${JSON.stringify(v)}`
      out.pathPrefix = v
    } else {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
        return `constraints.timeLimitMs must be a positive integer (milliseconds), got ${JSON.stringify(v)}`
      out.timeLimitMs = v
    }
  }
  if (Object.keys(out).length === 0) return 'has empty constraints; leave the key out, or name a limit'
  return out
}
