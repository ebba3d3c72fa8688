import type { RunState, VerifierService, VerifyResult } from 'cordage'

/**
 * The desk's completion contract: an answer that says a loan was renewed must state a due date that
 * renew_loan returned in this run.
 */
export const renewalVerifier: VerifierService = {
  verify({ state, answer }): VerifyResult {
    if (!/renewed/i.test(answer)) return { ok: true, evidence: [] }
    const dates = answer.match(/\d{4}-\d{2}-\d{2}/g) ?? []
    if (dates.length === 0) {
      return { ok: false, code: 'missing_evidence', reason: 'the answer says renewed but gives no due date', repairable: true }
    }
    const renewed = renewalsOf(state)
    const evidence = []
    for (const date of dates) {
      const seq = renewed.get(date)
      if (seq === undefined) return { ok: false, code: 'missing_evidence', reason: `no renewal in this run returned the due date ${date}`, repairable: true }
      evidence.push({ kind: 'receipt' as const, ref: date, seq })
    }
    return { ok: true, evidence }
  },
}

/** Due dates that renew_loan returned in this run, with the seq of the observation. */
function renewalsOf(state: Readonly<RunState>): Map<string, number> {
  const found = new Map<string, number>()
  for (const entry of state.transcript) {
    if (entry.kind !== 'observation' || !entry.ok || entry.tool !== 'renew_loan') continue
    for (const date of entry.text.match(/due (\d{4}-\d{2}-\d{2})/g) ?? []) found.set(date.slice(4), entry.seq)
  }
  return found
}
