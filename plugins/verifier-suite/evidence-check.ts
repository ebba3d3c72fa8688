/**
 * The evidence check: the answer cites references (matches of a pattern), enough of them, and each was
 * returned by a successful tool call of this run. A reference the run never saw is not evidence.
 */
import { safeRegex, type Evidence, type RunState, type SafeRegex } from 'cordage'
import { leafFailure, type Check, type CheckInput, type CheckResult, type LeafTraits } from './check.ts'
import type { EvidenceSpec } from './config.ts'

export class EvidenceCheck implements Check {
  /** On the linear-time engine: the answer is the model's text, so no pattern may stall on it. */
  private pattern: SafeRegex

  constructor(
    private leaf: LeafTraits,
    private options: EvidenceSpec,
  ) {
    this.pattern = safeRegex(options.pattern, options.flags)
  }

  get label() {
    return this.leaf.label
  }

  run({ state, answer }: CheckInput): CheckResult {
    const { minCount, mustBeObserved, kind } = this.options
    const refs = [...new Set([...this.pattern.matchAll(answer)].map((m) => (m[1] ?? m[0]).trim()))]
    if (refs.length < minCount) {
      return leafFailure(
        this.leaf,
        'missing_evidence',
        `the answer cites ${refs.length} reference(s) matching /${this.pattern.source}/, ${minCount} required`,
        'Cite each fact with a reference a tool returned in this run, written the way the pattern expects.',
      )
    }
    const evidence: Evidence[] = []
    for (const ref of refs) {
      const seq = mustBeObserved ? observedIn(state, ref) : undefined
      if (mustBeObserved && seq === undefined) {
        return leafFailure(
          this.leaf,
          'missing_evidence',
          `the answer cites "${ref}", which no successful tool result of this run contains`,
          'Cite only references a tool returned; look the fact up first if you need it.',
          evidence,
        )
      }
      evidence.push({ kind, ref, seq })
    }
    return { ok: true, evidence }
  }
}

/** Seq of the first successful tool result that contains `ref`. */
function observedIn(state: Readonly<RunState>, ref: string): number | undefined {
  for (const entry of state.transcript) {
    // A dry run's observation is a preview built from the model's own arguments: it proves nothing.
    if (entry.kind === 'observation' && entry.ok && !entry.dryRun && entry.text.includes(ref)) return entry.seq
  }
  return undefined
}
