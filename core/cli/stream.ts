/**
 * @module cli/stream
 * `--stream`: the model's text on stdout as it arrives, from the `model/delta` previews the adapter
 * sends while it reads the provider's stream. An adapter that does not stream (model-scripted, or
 * `stream: false`) sends none: its text is printed whole when the answer is in, which is when it
 * arrived. With `--json`, each piece is one JSON object `{"type":"model/delta", ...}` (no seq: a
 * preview, not a stored event).
 */
import type { ModelDeltaEvent, RunEvent } from '../contracts/events.ts'

export class StreamPrinter {
  /** Text written since the last newline (a partial line is open on stdout). */
  private open = false
  /** Text held back when there is no raw writer: whole lines only. */
  private pending = ''
  /** Steps whose text came in pieces: their whole answer is not printed again. */
  private readonly streamed = new Set<string>()

  /**
   * @param out a whole line to stdout
   * @param write raw text to stdout, when the output has a raw writer
   * @param json print pieces as JSON objects instead of text
   * @param onOpen told when a partial line opens (true) or closes (false): the status line keeps off it
   */
  constructor(
    private readonly out: (line: string) => void,
    private readonly write: ((text: string) => void) | undefined,
    private readonly json: boolean,
    private readonly onOpen: (open: boolean) => void = () => {},
  ) {}

  delta(event: ModelDeltaEvent): void {
    if (this.json) {
      this.out(JSON.stringify({ type: 'model/delta', ...event }))
      return
    }
    if (!event.text) return
    this.streamed.add(`${event.runId} ${event.stepId}`)
    this.text(event.text)
  }

  /** A model answer that came whole: its text is printed now, unless it was streamed. */
  event(event: RunEvent): void {
    if (this.json || event.type !== 'step/model-response') return
    if (this.streamed.delete(`${event.runId} ${event.stepId}`)) return
    const decision = event.data.decision
    const text = decision.kind === 'final' ? decision.text : decision.kind === 'ask_user' ? decision.question : ''
    if (text) this.text(text)
  }

  /** End the partial line, if one is open: before any other line is printed, and at the end. */
  endLine(): void {
    if (this.write) {
      if (!this.open) return
      this.open = false
      this.write('\n')
      this.onOpen(false)
      return
    }
    if (this.pending) this.out(this.pending)
    this.pending = ''
  }

  private text(text: string): void {
    if (!this.write) {
      const lines = (this.pending + text).split('\n')
      this.pending = lines.pop() ?? ''
      for (const line of lines) this.out(line)
      return
    }
    if (!this.open) this.onOpen(true)
    this.write(text)
    this.open = !text.endsWith('\n')
    if (!this.open) this.onOpen(false)
  }
}
