import type { RunState, VerifierService, VerifyResult } from 'cordage'

/** An answer that says plainly that no booking was made. */
const NotBooked =
  /\b(could ?n[o']t|can ?n[o']t|cannot|was ?n[o']t able to|were ?n[o']t able to|unable to|not able to|did ?n[o']t|failed to)\b[^.]*\bbook|\bnot booked\b|\bno booking\b/i

/**
 * The completion contract, closed by default: an answer passes only if it names booking references
 * that book_room returned in this run (the receipts are its evidence), or says that it could not book
 * when indeed no booking was made. Anything else, "Your room is reserved" included, fails.
 */
export const bookingVerifier: VerifierService = {
  verify({ state, answer }): VerifyResult {
    const made = bookingsOf(state)
    const refs = answer.match(/BK-\d+/g) ?? []
    if (refs.length === 0) {
      if (NotBooked.test(answer) && made.size === 0) return { ok: true, evidence: [] }
      const reason =
        made.size > 0
          ? `the answer names none of the bookings made in this run (${[...made.keys()].join(', ')})`
          : 'the answer names no booking made in this run, and does not say that none could be made'
      return { ok: false, code: 'missing_evidence', reason, repairable: true }
    }
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
