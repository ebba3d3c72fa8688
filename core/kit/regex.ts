/**
 * @module regex
 * Regular expressions from presets and from the model, on a linear-time engine.
 *
 * Patterns in presets (policy rule `regex`, approval patterns, guardrail patterns, verifier evidence
 * patterns) and patterns the model sends (a code search) run on text the model controls. On V8's
 * backtracking engine one catastrophic pattern (`^(a+)+$` against 34 `a`s and a `b`) stalls the whole
 * process for minutes, synchronously, where no deadline can interrupt it. {@link safeRegex} compiles
 * them with re2js, a pure-JavaScript port of RE2 (linear time in the input, no native build), and turns
 * what RE2 cannot do (lookaround, backreferences: they need backtracking) into a clear error.
 *
 * @example
 * const citation = safeRegex('\\[source: ([^\\]]+)\\]')
 * citation.test('see [source: policy/refunds#2]') // true
 */
import { RE2JS } from 're2js'
import { CordageError } from '../contracts/errors.ts'

/** The part of RegExp's interface that plugins use, on the linear-time engine. Stateless: no lastIndex. */
export interface SafeRegex {
  readonly source: string
  /** The flags it was compiled with, as JavaScript spells them (`i`, `m`, `s`). */
  readonly flags: string
  /** Whether the pattern matches anywhere in `text`. */
  test(text: string): boolean
  /** The first match, shaped like RegExp.prototype.exec's, or null. */
  exec(text: string): RegExpExecArray | null
  /** Every match, left to right, never overlapping. */
  matchAll(text: string): IterableIterator<RegExpMatchArray>
  /** `text` with every match replaced by what `replacer` returns for it. */
  replace(text: string, replacer: (match: RegExpMatchArray) => string): string
}

const FlagBits: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL }

/**
 * The largest compiled program accepted. Linear time is per character of input times the size of the
 * program: a pattern like `(?:.?){1000}` three times compiles to ~7,000 instructions and spends 166 us
 * a character. Real patterns (citations, ids, card numbers) compile to under a hundred.
 */
export const MaxRegexProgram = 2000

/**
 * Compile `source` for the linear-time engine. JavaScript flags `i`, `m` and `s` are honoured; `g` and
 * `u` are accepted and change nothing (every method here sees all matches; the engine is Unicode-aware).
 * @throws CordageError `invalid_input`, saying what is wrong with the pattern and, for lookaround and
 * backreferences, why they are refused
 */
export function safeRegex(source: string, flags = ''): SafeRegex {
  if (typeof source !== 'string')
    throw new CordageError('invalid_input', `a regular expression must be a string, got ${source === null ? 'null' : typeof source}`)
  let bits = 0
  for (const flag of new Set(flags)) {
    if (flag === 'g' || flag === 'u') continue
    if (!(flag in FlagBits)) throw new CordageError('invalid_input', `regular expression flag "${flag}" is not supported; use i, m or s`)
    bits |= FlagBits[flag]
  }
  let re: RE2JS
  try {
    re = RE2JS.compile(source, bits)
  } catch (error) {
    const message = (error as Error).message
    const why = /\(\?[=!<]|\\[1-9]|invalid escape sequence: `\\\d`|Perl syntax/.test(message + source)
      ? ' (lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine, so that no input can stall the process); write the pattern without them'
      : ''
    throw new CordageError(
      'invalid_input',
      `/${source}/ is not a valid regular expression: ${message.replace(/^error parsing regexp: /, '')}${why}`,
    )
  }
  if (re.programSize() > MaxRegexProgram) {
    throw new CordageError(
      'invalid_input',
      `/${source.length > 80 ? `${source.slice(0, 80)}…` : source}/ is too large a pattern: it compiles to ${re.programSize()} instructions, more than ${MaxRegexProgram} (large repetition counts such as {1000} multiply it); matching costs time per character in proportion; write it with smaller repetition counts or fewer alternatives`,
    )
  }
  const shown = [...new Set(flags)]
    .filter((f) => f in FlagBits)
    .sort()
    .join('')
  return Object.freeze({
    source,
    flags: shown,
    test: (text: string) => re.test(text),
    exec: (text: string) => re.exec(text) as RegExpExecArray | null,
    matchAll: (text: string) => re.matchAll(text) as IterableIterator<RegExpMatchArray>,
    replace(text: string, replacer: (match: RegExpMatchArray) => string): string {
      let out = ''
      let at = 0
      for (const match of re.matchAll(text) as IterableIterator<RegExpMatchArray>) {
        out += text.slice(at, match.index) + replacer(match)
        at = match.index! + match[0].length
      }
      return out + text.slice(at)
    },
  })
}

/** What is wrong with a pattern for {@link safeRegex}, or undefined when it compiles. */
export function regexProblem(source: unknown, flags = ''): string | undefined {
  try {
    safeRegex(source as string, flags)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}
