/**
 * @module checks/verifier
 * The check of a `verifier` service's verdict (services/verifier.ts): see core/contracts/check.ts.
 */
import type { Code } from '../errors.ts'
import type { Evidence, VerifyResult } from '../services/verifier.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'

/** Verification codes a verifier may end a run with. */
const VerifyCodes: readonly Code[] = ['missing_evidence', 'verification_failed']

export function checkVerifyResult(answer: unknown): Checked<VerifyResult> {
  const o = own(answer)
  if (!o) return bad(`a verifier verdict is an object, got ${describe(answer)}`)
  if (o.ok !== true && o.ok !== false) return bad(`ok must be true or false, got ${describe(o.ok)}`)
  const evidence = checkEvidence(o.evidence, o.ok)
  if (typeof evidence === 'string') return bad(evidence)
  if (o.ok) return { ok: true, value: { ok: true, evidence: evidence ?? [] } }
  if (!VerifyCodes.includes(o.code as Code))
    return bad(`a failing verdict's code must be ${VerifyCodes.join(' or ')}, got ${describe(o.code)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  if (typeof o.repairable !== 'boolean') return bad(`repairable must be true or false, got ${describe(o.repairable)}`)
  if (o.feedback !== undefined && typeof o.feedback !== 'string') return bad(`feedback must be a string, got ${describe(o.feedback)}`)
  return {
    ok: true,
    value: {
      ok: false,
      code: o.code as 'missing_evidence' | 'verification_failed',
      reason: o.reason,
      repairable: o.repairable,
      ...(o.feedback !== undefined ? { feedback: o.feedback } : {}),
      ...(evidence ? { evidence } : {}),
    },
  }
}

function checkEvidence(value: unknown, passing: boolean): Evidence[] | undefined | string {
  if (value === undefined)
    return passing ? 'a passing verdict must list its evidence (an empty list when the contract asks for none)' : undefined
  if (!Array.isArray(value)) return `evidence must be a list, got ${describe(value)}`
  const out: Evidence[] = []
  for (const [i, item] of value.entries()) {
    const e = own(item)
    if (!e || !nonEmpty(e.kind) || !nonEmpty(e.ref)) return `evidence[${i}] must have a kind and a ref, got ${describe(item)}`
    if (e.seq !== undefined && !Number.isInteger(e.seq)) return `evidence[${i}].seq must be an integer, got ${describe(e.seq)}`
    out.push({ kind: e.kind, ref: e.ref, ...(e.seq !== undefined ? { seq: e.seq as number } : {}) })
  }
  return out
}
