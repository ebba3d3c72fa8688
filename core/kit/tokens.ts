/**
 * @module tokens
 * Token counts that context plugins share, so a projection and its compaction count alike. A model
 * plugin may count for itself (`ModelService.tokens`, contract 1.3.0: a tokenizer, or an estimate
 * calibrated on the provider's usage, token-calibration.ts); {@link counterOf} picks the agent model's
 * counter, or this file's estimate when it has none.
 *
 * The estimate reads text as the byte-pair tokenizers of the large providers cut it: a short word with
 * the space before it is one token and a long one a few, digits go in groups of three, a run of
 * punctuation merges in pairs or so (`{"`, `":`, `},`), a line break and the indentation after it are a
 * token or two, and a CJK character is most of a token. The rates were fitted on bench/tokens/tuning
 * against o200k_base and checked on a held-out set (`npm run bench:tokens`, docs/concepts/context.md).
 * Four tokens per message stand for the role frame; the JSON of an assistant message's calls counts as text.
 */
import type { ContextMessage } from '../contracts/services/context.ts'
import { CordageError } from '../contracts/errors.ts'
import type { ModelService, TokenCounter } from '../contracts/services/model.ts'

export const MessageOverhead = 4

/** The rates of {@link estimateTokens}: characters per token for each kind of run, tokens per CJK or other character. */
export interface EstimateRates {
  /** Letters of a word after its first `wordFree` (the first one is a token by itself). */
  word: number
  wordFree: number
  digits: number
  punctuation: number
  /** Spaces beyond the one that joins the next word. */
  spaces: number
  /** Tokens per line break run. */
  newline: number
  cjk: number
  other: number
}

export const Rates: Readonly<EstimateRates> = Object.freeze({
  word: 10,
  wordFree: 9,
  digits: 2,
  punctuation: 4,
  spaces: 8,
  newline: 0,
  cjk: 0.75,
  other: 2,
})

const enum Kind {
  None,
  Word,
  Digit,
  Punct,
  Space,
  Newline,
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x3000 && code <= 0x30ff) || // CJK punctuation, kana
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) || // Hangul syllables
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xff00 && code <= 0xffef) // full-width forms
  )
}

/** The estimate with the given rates (the tuning in bench/tokens.ts varies them); {@link estimateTokens} uses {@link Rates}. */
export function estimateWith(text: string, rates: Readonly<EstimateRates>): number {
  let tokens = 0
  let kind = Kind.None
  let run = 0
  const close = () => {
    if (kind === Kind.Word) tokens += 1 + Math.max(0, run - rates.wordFree) / rates.word
    else if (kind === Kind.Digit) tokens += Math.ceil(run / rates.digits)
    else if (kind === Kind.Punct) tokens += Math.ceil(run / rates.punctuation)
    else if (kind === Kind.Space) tokens += run > 1 ? Math.ceil((run - 1) / rates.spaces) : 0
    else if (kind === Kind.Newline) tokens += rates.newline
    kind = Kind.None
    run = 0
  }
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    let next: Kind
    if (code >= 128) {
      close()
      // The low half of a surrogate pair: the character was counted at its high half.
      if (code >= 0xdc00 && code <= 0xdfff) continue
      tokens += isCjk(code) ? rates.cjk : rates.other
      continue
    }
    if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90)) next = Kind.Word
    else if (code >= 48 && code <= 57) next = Kind.Digit
    else if (code === 32 || code === 9) next = Kind.Space
    else if (code === 10 || code === 13) next = Kind.Newline
    else next = Kind.Punct
    if (next !== kind) close()
    kind = next
    run++
  }
  close()
  return Math.ceil(tokens)
}

/**
 * Estimated tokens of `text`: {@link estimateWith} at the fitted {@link Rates}.
 * @example estimateTokens('Damaged items can be refunded within 30 days.') // → 9 (o200k_base: 11)
 */
export function estimateTokens(text: string): number {
  return estimateWith(text, Rates)
}

/** The counter of a model that has none of its own. */
export const EstimateCounter: TokenCounter = Object.freeze({ name: 'estimate', count: estimateTokens })

/** Tokens of one message: its frame, its text, and the JSON of its tool calls, counted by `counter` (default: the estimate). */
export function messageTokens(message: ContextMessage, counter: TokenCounter = EstimateCounter): number {
  const calls = message.calls?.length ? counter.count(JSON.stringify(message.calls)) : 0
  return MessageOverhead + counter.count(message.text) + calls
}

const checked = new WeakMap<TokenCounter, TokenCounter>()

/**
 * The most tokens a counter may count for a text: {@link MaxTokensPerUnit} per UTF-16 code unit, plus
 * {@link MaxTokensSlack}. A byte-level tokenizer emits at most one token per UTF-8 byte, which is at most
 * three per code unit, plus the few special tokens a format adds; the estimate counts at most two per
 * code unit, and calibration scales it by at most 2.5 (DefaultCalibration). A count above this is a
 * broken counter, and would make a projection look full (or a budget spent) for no reason.
 */
export const MaxTokensPerUnit = 8
export const MaxTokensSlack = 16
export const maxTokensFor = (text: string): number => text.length * MaxTokensPerUnit + MaxTokensSlack

/**
 * The counter context plugins count with for an agent: its model's own (`ModelService.tokens`), or the
 * estimate when the model has none (or no model is there yet). Fails closed: a counter that is not one,
 * or that answers with something other than a non-negative integer, or with more than
 * {@link maxTokensFor} the text, throws (the kernel fails the run
 * with `internal_error`) rather than let a projection be measured wrong.
 * @example const counter = counterOf(readService<ModelService>(ctx, 'model')?.value)
 */
export function counterOf(model: ModelService | undefined): TokenCounter {
  const own = model?.tokens
  if (own === undefined || own === null) return EstimateCounter
  let counter = checked.get(own)
  if (counter) return counter
  if (typeof own !== 'object' || typeof own.count !== 'function' || typeof own.name !== 'string')
    throw new CordageError(
      'internal_error',
      `the model's tokens is not a token counter ({ name: string, count(text): number }): ${typeof own}`,
    )
  counter = {
    name: own.name,
    get revision() {
      return own.revision
    },
    count(text: string) {
      const n = own.count(text)
      if (!Number.isInteger(n) || n < 0)
        throw new CordageError(
          'internal_error',
          `token counter ${own.name} counted ${String(n)} tokens for a text: not a non-negative integer`,
        )
      if (n > maxTokensFor(text))
        throw new CordageError(
          'internal_error',
          `token counter ${own.name} counted ${n} tokens for a text of ${text.length} characters: more than the ${maxTokensFor(text)} any tokenizer emits for it (${MaxTokensPerUnit} per character + ${MaxTokensSlack})`,
        )
      return n
    },
  }
  checked.set(own, counter)
  return counter
}
