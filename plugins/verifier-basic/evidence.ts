/**
 * Citation checking. An answer passes when it cites enough references and, if required, each one was
 * returned by a tool in this run: a citation the run never saw is not evidence.
 */
import {
  safeRegex,
  type Evidence,
  type RunState,
  type SafeRegex,
  type VerifierService,
  type VerifyRequest,
  type VerifyResult,
} from 'cordage'
import type { Config } from './manifest.ts'

export class CitationVerifier implements VerifierService {
  /** On the linear-time engine: the answer is the model's text, so no pattern may stall on it. */
  private pattern: SafeRegex

  /** @throws CordageError `invalid_input` when the pattern does not compile for the linear-time engine */
  constructor(private config: Config) {
    this.pattern = safeRegex(config.pattern)
  }

  verify({ state, answer }: VerifyRequest): VerifyResult {
    const refs = [...this.pattern.matchAll(answer)].map((m) => (m[1] ?? m[0]).trim())
    if (refs.length < this.config.minCount) {
      return {
        ok: false,
        code: 'missing_evidence',
        repairable: this.config.repairable,
        reason: `the answer cites ${refs.length} source(s), ${this.config.minCount} required; cite each fact like "[source: <ref>]" using a reference a tool returned`,
      }
    }
    const evidence: Evidence[] = []
    for (const ref of new Set(refs)) {
      const seq = this.config.mustBeObserved ? observedIn(state, ref) : undefined
      if (this.config.mustBeObserved && seq === undefined) {
        return {
          ok: false,
          code: 'missing_evidence',
          repairable: this.config.repairable,
          reason: `the answer cites "${ref}", which no tool returned in this run`,
          evidence,
        }
      }
      evidence.push({ kind: 'citation', ref, seq })
    }
    return { ok: true, evidence }
  }
}

function observedIn(state: Readonly<RunState>, ref: string): number | undefined {
  for (const entry of state.transcript) {
    // A dry run's observation is a preview built from the model's own arguments: it proves nothing.
    if (entry.kind === 'observation' && entry.ok && !entry.dryRun && entry.text.includes(ref)) return entry.seq
  }
  return undefined
}
