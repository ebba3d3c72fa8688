import type { Parsed } from './args.ts'

/**
 * Where a command writes: readable lines and results to `out`, status and errors to `err`. The raw
 * writers and the terminal flags are set by the binary (bin.js); an Output without them (a test, an
 * embedding) gets whole lines only, no status line and no colour unless `color` says so.
 */
export interface Output {
  out(line: string): void
  err(line: string): void
  /** Colour the readable event lines; when left out, main decides from the terminal and FORCE_COLOR / NO_COLOR. */
  color?: boolean
  /** stdout is a terminal. */
  outIsTTY?: boolean
  /** stderr is a terminal: a status line may be drawn there and rewritten in place. */
  errIsTTY?: boolean
  /** Write to stdout without ending the line (text streamed by the model). */
  write?(text: string): void
  /** Write to stderr without ending the line (the status line). */
  errWrite?(text: string): void
}

/** One command: its parsed arguments in, its exit code out. */
export type Handler = (args: Parsed, io: Output) => Promise<number>
