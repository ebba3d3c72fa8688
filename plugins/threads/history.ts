/**
 * @module threads/history
 * What a turn of a thread sees of the turns before it: the previous turn's transcript (which holds,
 * marked, the turns before that one), each entry marked with its turn and its action ids prefixed with
 * it, so the calls of turn 1 (`t1.s1.a1`) never collide with this run's (`s1.a1`) and each call still
 * pairs with its result. Recorded once per turn in thread/history; the reducer puts the entries before
 * the run's own transcript.
 *
 * The record is bounded (`historyBytes` of JSON, at most the kernel's MaxHistoryBytes), so a long thread does not copy an
 * ever-growing transcript into every turn: beyond it, the oldest turns are kept only as the user's
 * message and the final answer (`shortened`), then long texts are clipped, and as a last resort the
 * oldest turns are left out (`dropped`).
 */
import { Buffer } from 'node:buffer'
import { MaxHistoryBytes, turnIdOf, type RunEventMap, type RunState, type TranscriptEntry } from 'cordage'

export type ThreadHistory = RunEventMap['thread/history']

/** Longest text an entry keeps once shortening whole turns was not enough, unless told otherwise. */
const ClipChars = 4000

/** Entries of `previous` (turn `turn` of the thread) as the next turn sees them, within `bound` bytes of JSON. */
export function historyOf(
  previous: Pick<RunState, 'runId' | 'transcript'>,
  turn: number,
  bound = MaxHistoryBytes,
  clipChars = ClipChars,
): ThreadHistory {
  const mark = turnIdOf(turn)
  const entries = previous.transcript.map((e) => (e.turn === undefined ? marked(e, mark) : e))
  const turns = [...new Set(entries.map((e) => e.turn!))]
  const history: ThreadHistory = { from: previous.runId, turns: turns.length, entries }
  if (size(entries) <= bound) return history

  // Oldest first, each turn down to its message and its answer, until it fits.
  let shortened = 0
  let kept = entries
  for (const t of turns) {
    kept = shortenTurn(kept, t)
    shortened++
    if (size(kept) <= bound) return { ...history, entries: kept, shortened }
  }
  kept = kept.map((e) => clipped(e, clipChars))
  if (size(kept) <= bound) return { ...history, entries: kept, shortened }
  let dropped = 0
  for (const t of turns) {
    kept = kept.filter((e) => e.turn !== t)
    dropped++
    if (size(kept) <= bound) break
  }
  return { ...history, turns: turns.length - dropped, entries: kept, shortened: shortened - dropped, dropped }
}

function marked(entry: TranscriptEntry, turn: string): TranscriptEntry {
  const prefix = `${turn}.`
  if (entry.kind === 'assistant') return { ...entry, actionIds: entry.actionIds.map((id) => prefix + id), turn }
  if (entry.kind === 'observation') return { ...entry, actionId: prefix + entry.actionId, turn }
  return { ...entry, turn }
}

/** `entries` with turn `turn` kept as its first user message and its last final answer. */
function shortenTurn(entries: TranscriptEntry[], turn: string): TranscriptEntry[] {
  const of = entries.filter((e) => e.turn === turn)
  const message = of.find((e) => e.kind === 'user')
  const answer = of.findLast((e) => e.kind === 'assistant' && e.decision.kind === 'final')
  return entries.filter((e) => e.turn !== turn || e === message || e === answer)
}

function clipped(entry: TranscriptEntry, chars: number): TranscriptEntry {
  const cut = (text: string) => (text.length > chars ? `${text.slice(0, chars)} … [clipped ${text.length - chars} characters]` : text)
  if (entry.kind === 'assistant') {
    const d = entry.decision
    if (d.kind === 'final') return { ...entry, decision: { ...d, text: cut(d.text) } }
    if (d.kind === 'ask_user') return { ...entry, decision: { ...d, question: cut(d.question) } }
    return entry
  }
  return { ...entry, text: cut(entry.text) }
}

/** UTF-8 bytes, as stored: the bound is in bytes, not UTF-16 units (CJK text is 3 bytes a character). */
function size(entries: readonly TranscriptEntry[]): number {
  return Buffer.byteLength(JSON.stringify(entries), 'utf8')
}
