import { definePlugin, type VerifierService, type VerifyResult } from 'cordage'
import manifest, { type Config } from './manifest.ts'

/**
 * One verdict for every answer. `pass` is the null verifier of an ablation (what the harness does
 * without verification) and a verifier that wrongly accepts; `fail` a verifier that wrongly rejects.
 */
export class FixedVerifier implements VerifierService {
  constructor(private verdict: Config['verdict']) {}

  verify(): VerifyResult {
    if (this.verdict === 'pass') return { ok: true, evidence: [] }
    // Not repairable: another attempt would be rejected too, so the run ends at once.
    return { ok: false, code: 'verification_failed', reason: 'eval-verifier (verdict: fail) rejects every answer', repairable: false }
  }
}

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('verifier', new FixedVerifier(config.verdict))
})
