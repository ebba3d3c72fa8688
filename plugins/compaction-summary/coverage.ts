/**
 * The check before a summary is installed: every need is present (a fact's cited reference appears in
 * the summary) or retrievable (its seq is named, "seq 12" or "seqs 12, 15 and 19", which the recall
 * tool takes).
 */
import type { Need } from './needs.ts'

/** Every seq the text names: "seq 12", "[recall seq 12]", "seqs 3, 5 and 9", "seq 4/7". */
export function namedSeqs(text: string): Set<number> {
  const found = new Set<number>()
  // The model writes this text. No two runs of \s* meet (`\s*#?\s*` did: quadratic in a run of spaces).
  for (const match of text.matchAll(/\bseqs?\s*(?:#\s*)?(\d+(?:\s*(?:,|\/|&|and)\s*(?:seq\s*)?\d+)*)/gi)) {
    for (const n of match[1].match(/\d+/g) ?? []) found.add(Number(n))
  }
  return found
}

/** The needs the summary neither holds nor points to; empty when it passes. */
export function uncovered(summary: string, needs: readonly Need[]): Need[] {
  const seqs = namedSeqs(summary)
  return needs.filter((need) => {
    if (seqs.has(need.seq)) return false
    if (need.kind === 'fact' && need.citations.some((c) => summary.includes(c))) return false
    return true
  })
}

/** "failure seq 14, revision seq 20": the uncovered needs, for a rejection message. */
export function describeMissing(needs: readonly Need[]): string {
  const shown = needs
    .slice(0, 6)
    .map((n) => `${n.kind} seq ${n.seq}`)
    .join(', ')
  return needs.length > 6 ? `${shown} and ${needs.length - 6} more` : shown
}
