/**
 * @module wire/args
 * Tool-call arguments arrive as JSON text, streamed in pieces. A call is acted on only once its text is
 * complete and parses to an object; anything else goes back to the model as a structured observation.
 */

export interface ParsedArgs {
  args: unknown
  /** Set when the text is not a JSON object; `args` is then the raw text, kept for the record. */
  argsError?: string
}

export function parseArgs(text: string): ParsedArgs {
  // Providers send "" for a call without arguments.
  if (text.trim() === '') return { args: {} }
  try {
    const value: unknown = JSON.parse(text)
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return { args: text, argsError: 'the arguments must be a JSON object' }
    return { args: value }
  } catch (error) {
    return { args: text, argsError: (error as Error).message }
  }
}
