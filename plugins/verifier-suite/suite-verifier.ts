/** The `verifier` service: the root check judges the answer; its verdict is the verifier's. */
import type { VerifierService, VerifyRequest, VerifyResult } from 'cordage'
import type { Check } from './check.ts'

export class SuiteVerifier implements VerifierService {
  constructor(private root: Check) {}

  async verify({ state, answer, signal }: VerifyRequest): Promise<VerifyResult> {
    const result = await this.root.run({ state, answer, signal })
    if (result.ok) return { ok: true, evidence: result.evidence }
    const { code, reason, feedback, repairable, evidence } = result
    return feedback === undefined
      ? { ok: false, code, reason, repairable, evidence }
      : { ok: false, code, reason, feedback, repairable, evidence }
  }
}
