/**
 * @module services/verifier
 * The `verifier` contract: judge a finish request. Stopping is not succeeding (invariant 2): a final
 * answer only completes the run when the verifier returns evidence.
 */
import type { Code } from '../errors.ts'
import type { Evidence } from '../data.ts'
import type { RunState } from '../state.ts'
export type { Evidence } from '../data.ts'

export const VerifierContract = '1.1.0'

export type VerifyResult =
  | { ok: true; evidence: Evidence[] }
  | {
      ok: false
      /** `missing_evidence`, `verification_failed`, or another verification code. */
      code: Extract<Code, 'missing_evidence' | 'verification_failed'>
      reason: string
      /** The model may try again with the reason as feedback (if the repair budget allows). */
      repairable: boolean
      /**
       * What the model is told when it may try again, when that must differ from `reason` (which is
       * recorded in `verify/end` either way). A sealed check (hidden tests) sets a message that gives
       * nothing away. Default: `reason`. Since 1.1.0.
       */
      feedback?: string
      evidence?: Evidence[]
    }

export interface VerifyRequest {
  state: Readonly<RunState>
  answer: string
  signal: AbortSignal
}

export interface VerifierService {
  /**
   * Judge the final answer against the completion contract.
   *
   * Contract: reads run state, changes nothing. A throw fails the run with `internal_error`
   * (a broken verifier never passes an answer).
   */
  verify(request: VerifyRequest): VerifyResult | Promise<VerifyResult>
}

declare module 'cordis' {
  interface Context {
    verifier: VerifierService
  }
}
