/**
 * One transcript entry → one message, with its seq as `source` (transcriptMessage, cordage/kit). A tool
 * result longer than the limit is clipped here, once, with a note that gives the seq of the full result
 * and keeps the citations the cut removed, so a clipped fact still says where it came from.
 */
import {
  FailedResultMark,
  transcriptMessage,
  type ContextMessage,
  type ObservationEntry,
  type SafeRegex,
  type TranscriptEntry,
} from 'cordage'
import type { TokenCounter } from 'cordage'
import { prefixWithin } from './tokens.ts'

export interface RenderOptions {
  /** Tool results longer than this are clipped. */
  observationTokens: number
  /** Citations a clip keeps in its note. On the linear-time engine: it runs over tool results. */
  citation: SafeRegex
  /** The agent model's counter (or the kit's estimate). */
  counter: TokenCounter
}

export function toMessage(entry: TranscriptEntry, options: RenderOptions): ContextMessage {
  return transcriptMessage(entry, (result) => resultText(result, options.observationTokens, options.citation, options.counter))
}

/** A tool result as the model reads it, clipped to `tokens`; a failure stays marked as one however much is cut. */
export function resultText(entry: ObservationEntry, tokens: number, citation: SafeRegex, counter: TokenCounter): string {
  const mark = entry.ok ? '' : FailedResultMark
  return mark + clip(entry.text, entry.seq, tokens - counter.count(mark), citation, counter)
}

/** `text` cut to at most `tokens` (note included), or `text` itself when it fits. */
export function clip(text: string, seq: number, tokens: number, citation: SafeRegex, counter: TokenCounter): string {
  if (counter.count(text) <= tokens) return text
  // The note's length depends on what is cut: size it for cutting everything, then settle once more
  // in the rare case the citations it keeps came out longer.
  let room = tokens - counter.count(note(text, '', seq, citation))
  let out = ''
  for (let pass = 0; pass < 3; pass++) {
    const kept = prefixWithin(text, Math.max(0, room), counter)
    out = kept + note(text, kept, seq, citation)
    const over = counter.count(out) - tokens
    if (over <= 0 || kept === '') break
    room -= over
  }
  return out
}

function note(text: string, kept: string, seq: number, citation: SafeRegex): string {
  const cut = text.slice(kept.length)
  const cites = [...new Set(Array.from(citation.matchAll(cut), (m) => m[0]))].filter((c) => !kept.includes(c)).slice(0, 8)
  const keeps = cites.length ? `; cut citations: ${cites.join(' ')}` : ''
  return ` … [clipped ${cut.length} of ${text.length} characters; full result: seq ${seq}${keeps}]`
}
