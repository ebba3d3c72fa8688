/**
 * Citation checking. An answer passes when it cites enough references and, if required, each one was
 * returned by a tool in this run: a citation the run never saw is not evidence.
 */
import type { Evidence, RunState, VerifierService, VerifyRequest, VerifyResult } from 'cordage'
import type { Config } from './manifest.ts'

export class CitationVerifier implements VerifierService {
  private pattern: RegExp

  constructor(private config: Config) {
    this.pattern = new RegExp(config.pattern, 'g')
  }

  verify({ state, answer }: VerifyRequest): VerifyResult {
    const refs = [...answer.matchAll(this.pattern)].map((m) => (m[1] ?? m[0]).trim())
    if (refs.length < this.config.minCount) {
      return {
        ok: false, code: 'missing_evidence', repairable: this.config.repairable,
        reason: `the answer cites ${refs.length} source(s), ${this.config.minCount} required; cite each fact like "[source: <ref>]" using a reference a tool returned`,
      }
    }
    const evidence: Evidence[] = []
    for (const ref of new Set(refs)) {
      const seq = this.config.mustBeObserved ? observedIn(state, ref) : undefined
      if (this.config.mustBeObserved && seq === undefined) {
        return { ok: false, code: 'missing_evidence', repairable: this.config.repairable, reason: `the answer cites "${ref}", which no tool returned in this run`, evidence }
      }
      evidence.push({ kind: 'citation', ref, seq })
    }
    return { ok: true, evidence }
  }
}

function observedIn(state: Readonly<RunState>, ref: string): number | undefined {
  for (const entry of state.transcript) {
    if (entry.kind === 'observation' && entry.ok && entry.text.includes(ref)) return entry.seq
  }
  return undefined
}
