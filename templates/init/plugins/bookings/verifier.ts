import type { RunState, VerifierService, VerifyResult } from 'cordage'

/**
 * The completion contract: an answer that says a room is booked must name a booking reference that
 * book_room returned in this run.
 */
export const bookingVerifier: VerifierService = {
  verify({ state, answer }): VerifyResult {
    if (!/booked/i.test(answer)) return { ok: true, evidence: [] }
    const refs = answer.match(/BK-\d+/g) ?? []
    if (refs.length === 0)
      return { ok: false, code: 'missing_evidence', reason: 'the answer says booked but names no booking', repairable: true }
    const made = bookingsOf(state)
    const evidence = []
    for (const ref of refs) {
      const seq = made.get(ref)
      if (seq === undefined)
        return { ok: false, code: 'missing_evidence', reason: `booking ${ref} was not made in this run`, repairable: true }
      evidence.push({ kind: 'receipt' as const, ref, seq })
    }
    return { ok: true, evidence }
  },
}

/** Booking references that book_room returned in this run, with the seq of the observation. */
function bookingsOf(state: Readonly<RunState>): Map<string, number> {
  const found = new Map<string, number>()
  for (const entry of state.transcript) {
    if (entry.kind !== 'observation' || !entry.ok || entry.tool !== 'book_room') continue
    for (const ref of entry.text.match(/BK-\d+/g) ?? []) found.set(ref, entry.seq)
  }
  return found
}
