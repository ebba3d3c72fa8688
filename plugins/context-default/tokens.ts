/**
 * Tokens are counted by the agent model's counter, or the kit's estimate when it has none
 * (core/kit/tokens.ts, shared with compaction-summary); this file adds what assembling under a budget
 * needs on top of it.
 */
import { EstimateCounter, type TokenCounter } from 'cordage'

export { estimateTokens, messageTokens, MessageOverhead } from 'cordage'

/**
 * The longest prefix of `text` that `counter` counts at most `tokens`, cut at a character boundary.
 * A binary search over the length: any counter will do, a tokenizer included, in a few dozen counts.
 */
export function prefixWithin(text: string, tokens: number, counter: TokenCounter = EstimateCounter): string {
  if (counter.count(text) <= tokens) return text
  const fits = (end: number) => counter.count(text.slice(0, end)) <= tokens
  let lo = 0
  let hi = text.length
  // A long text is mostly cut far below its end: no token spans 16 characters of ordinary text.
  const bound = Math.max(0, tokens) * 16
  if (bound < hi && !fits(bound)) hi = bound
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1
    if (fits(mid)) lo = mid
    else hi = mid
  }
  // Never split a surrogate pair.
  const code = text.charCodeAt(lo - 1)
  return text.slice(0, code >= 0xd800 && code < 0xdc00 ? lo - 1 : lo)
}
