/**
 * @module checks/asked-call
 * The check of what a `tool/after-decide` handler answers (core/contracts/phases.ts AskedCall): the call
 * and its decision unchanged, and at most the id of the grant that covers it. Whether that grant does
 * is the kernel's to check (core/kernel/grant-claim.ts).
 */
import type { AskedCall } from '../phases.ts'

/** A handler may set `grantId`, and nothing else: what is wrong with its answer, or nothing. */
export function askedCallProblem(value: unknown, was: AskedCall): string | undefined {
  const v = value as Partial<AskedCall> | null
  if (!v || typeof v !== 'object') return `a tool/after-decide handler returns the call, got ${typeof value}`
  const kept = (['actionId', 'tool', 'argsHash', 'verdict', 'ruleId', 'policyVersion', 'toolVersion'] as const).every(
    (k) => v[k] === was[k],
  )
  if (!kept) return 'a tool/after-decide handler may only name a grant (grantId), not change the call or its decision'
  if (v.grantId !== undefined && (typeof v.grantId !== 'string' || !v.grantId)) return 'grantId must be a non-empty string'
  return undefined
}
