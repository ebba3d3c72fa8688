/**
 * @module transcript
 * How a transcript entry reads to the model, for context plugins: one entry, one message, with the seq
 * it came from as `source`. A user entry as it is; harness feedback marked `[harness]`; a model turn as
 * its answer, its question or its text with its tool calls; a tool result as a `tool` message, marked
 * `Error: ` and flagged `isError` when the tool failed. How long a tool result may be is the plugin's choice (`resultText`).
 */
import type { ContextMessage } from '../contracts/services/context.ts'
import type { TranscriptEntry } from '../contracts/state.ts'

/** A tool result in the transcript. */
export type ObservationEntry = Extract<TranscriptEntry, { kind: 'observation' }>

/** What the text of a failed tool result starts with, so the model can tell a failure from a result. */
export const FailedResultMark = 'Error: '

/** A tool result's text as the model reads it, whole: marked when the tool failed. */
export function observationText(entry: ObservationEntry): string {
  return entry.ok ? entry.text : FailedResultMark + entry.text
}

/**
 * The message a transcript entry becomes. `resultText` gives a tool result's text (default
 * observationText, the whole result); a plugin that clips long results passes its own, and keeps
 * FailedResultMark in front of a failure.
 */
export function transcriptMessage(
  entry: TranscriptEntry,
  resultText: (entry: ObservationEntry) => string = observationText,
): ContextMessage {
  switch (entry.kind) {
    case 'user':
      return { role: 'user', text: entry.text, source: entry.seq }
    case 'feedback':
      return { role: 'user', text: `[harness] ${entry.text}`, source: entry.seq }
    case 'observation':
      return { role: 'tool', actionId: entry.actionId, text: resultText(entry), source: entry.seq, ...(entry.ok ? {} : { isError: true }) }
    case 'assistant': {
      const d = entry.decision
      // The provider's reasoning (signed thinking blocks) goes back with the message, unchanged.
      const reasoning = entry.reasoning ? { reasoning: entry.reasoning } : {}
      if (d.kind === 'final') return { role: 'assistant', text: d.text, source: entry.seq, ...reasoning }
      if (d.kind === 'ask_user') return { role: 'assistant', text: d.question, source: entry.seq, ...reasoning }
      return {
        role: 'assistant',
        text: d.text ?? '',
        source: entry.seq,
        calls: d.calls.map((call, i) => ({ actionId: entry.actionIds[i], name: call.name, args: call.args })),
        ...reasoning,
      }
    }
  }
}
