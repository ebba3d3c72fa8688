/**
 * @module cli/stream
 * `--stream`: the model's text on stdout as it arrives, from the `model/delta` previews the adapter
 * sends while it reads the provider's stream. An adapter that does not stream (model-scripted, or
 * `stream: false`) sends none: its text is printed whole when the answer is in, which is when it
 * arrived. With `--json`, each piece is one JSON object `{"type":"model/delta", ...}` (no seq: a
 * preview, not a stored event). The text is the model's, so untrusted: its control characters are shown
 * as text (`\x1b`), never sent to the terminal, where an escape sequence could clear the screen, set
 * the clipboard (OSC 52) or forge a line.
 */
import type { ModelDeltaEvent, RunEvent } from '../contracts/events.ts'

export class StreamPrinter {
  /** Text written since the last newline (a partial line is open on stdout). */
  private open = false
  /** Text held back when there is no raw writer: whole lines only. */
  private pending = ''
  /** A `\r` that ended the last piece: harmless only if the next piece starts with `\n`. */
  private cr = false
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
    // A held \r with nothing after it was bare after all.
    if (this.cr) this.text('')
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

  private text(raw: string): void {
    const held = this.cr
    this.cr = raw.endsWith('\r')
    const text = visible((held ? '\r' : '') + (this.cr ? raw.slice(0, -1) : raw))
    if (!text) return
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

/**
 * The text with every control character a terminal would act on written out as `\xNN`: C0 but `\n` and
 * `\t`, a `\r` not before `\n` (it would overwrite the line), DEL, and C1 (0x80-0x9f, which some
 * terminals read as ESC + a letter). Bidirectional controls (U+200E/F, U+202A-E, U+2066-9) are written
 * out as `\u{NNNN}`: they would make a diff or a note read differently from what it is (Trojan Source).
 */
export function visible(text: string): string {
  return text
    .replace(/\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`)
}
