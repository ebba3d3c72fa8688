import type { RunState, VerifierService, VerifyResult } from 'cordage'

/**
 * The completion contract of this desk: an answer that says a refund was made must name a refund id
 * that this run's issue_refund actually returned.
 */
export const refundVerifier: VerifierService = {
  verify({ state, answer }): VerifyResult {
    const named = answer.match(/RF-\d+/g) ?? []
    const issued = refundsOf(state)
    if (named.length === 0 && /refund(ed)?\b/i.test(answer) && !/not|no /i.test(answer)) {
      return { ok: false, code: 'missing_evidence', reason: 'the answer speaks of a refund but names no refund id', repairable: true }
    }
    for (const id of named) {
      if (!issued.has(id)) return { ok: false, code: 'missing_evidence', reason: `${id} was not issued in this run`, repairable: true }
    }
    return { ok: true, evidence: named.map((id) => ({ kind: 'receipt', ref: id, seq: issued.get(id) })) }
  },
}

function refundsOf(state: Readonly<RunState>): Map<string, number> {
  const found = new Map<string, number>()
  for (const entry of state.transcript) {
    if (entry.kind !== 'observation' || !entry.ok || entry.tool !== 'issue_refund') continue
    for (const id of entry.text.match(/RF-\d+/g) ?? []) found.set(id, entry.seq)
  }
  return found
}
