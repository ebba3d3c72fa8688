/**
 * The last lines a server wrote to stderr. When a server fails to start or dies, its own last words
 * usually say why; they go into the error message (secrets removed by the caller).
 */
export class StderrTail {
  private text = ''

  constructor(private maxChars = 2000) {}

  push(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-this.maxChars)
  }

  /** The last `lines` non-empty lines, or '' when the server wrote nothing. */
  lines(lines = 8): string {
    return this.text.split('\n').filter((l) => l.trim()).slice(-lines).join('\n')
  }
}
