/**
 * @module checks/policy
 * The check of a `policy` service's answer (services/policy.ts): see core/contracts/check.ts.
 */
import type { PolicyDecision } from '../services/policy.ts'
import type { Constraints } from '../data.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'
import { checkConstraints } from './constraints.ts'

export function checkPolicyDecision(answer: unknown): Checked<PolicyDecision> {
  const o = own(answer)
  if (!o) return bad(`a policy decision is an object, got ${describe(answer)}`)
  if (o.verdict !== 'allow' && o.verdict !== 'ask' && o.verdict !== 'deny')
    return bad(`verdict must be allow, ask or deny, got ${describe(o.verdict)}`)
  if (!nonEmpty(o.ruleId)) return bad(`ruleId must be a non-empty string, got ${describe(o.ruleId)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  let approvers: string[] | undefined
  if (o.approvers !== undefined) {
    if (!Array.isArray(o.approvers) || !o.approvers.every(nonEmpty))
      return bad(`approvers must be a list of names, got ${describe(o.approvers)}`)
    approvers = [...o.approvers]
  }
  // Constrained allows (checks/constraints.ts): only on allow, only known names with good values.
  let constraints: Constraints | undefined
  if (o.constraints !== undefined) {
    if (o.verdict !== 'allow') return bad(`constraints go only with an allow, not with ${o.verdict}`)
    const checked = checkConstraints(o.constraints)
    if (!checked.ok) return bad(checked.problem)
    constraints = checked.value
  }
  return {
    ok: true,
    value: {
      verdict: o.verdict,
      ruleId: o.ruleId,
      reason: o.reason,
      ...(approvers ? { approvers } : {}),
      ...(constraints ? { constraints } : {}),
    },
  }
}
