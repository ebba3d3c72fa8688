/**
 * The last lines a server wrote to stderr. When a server fails to start or dies, its own last words
 * usually say why; they go into the error message (secrets removed by the caller).
 */
export class StderrTail {
  private text = ''
  /** The first line that names an error: a stack trace's last lines are frames, its first says what broke. */
  private firstError = ''

  constructor(private maxChars = 2000) {}

  push(chunk: Buffer | string): void {
    const text = chunk.toString()
    if (!this.firstError)
      this.firstError =
        text
          .split('\n')
          .find((l) => /\b(Error|error|Exception|panic|Traceback)\b/.test(l))
          ?.trim() ?? ''
    this.text = (this.text + text).slice(-this.maxChars)
  }

  /** The first error line (when the last lines leave it out), then the last `lines` non-empty lines; '' when the server wrote nothing. */
  lines(lines = 8): string {
    const tail = this.text
      .split('\n')
      .filter((l) => l.trim())
      .slice(-lines)
    const first = this.firstError && !tail.some((l) => l.includes(this.firstError)) ? [this.firstError, '...'] : []
    return [...first, ...tail].join('\n')
  }
}
