/**
 * The token estimate is the kernel's documented one (core/kit/tokens.ts, shared with compaction-summary);
 * this file adds what assembling under a budget needs on top of it.
 */
export { estimateTokens, messageTokens, MessageOverhead } from 'cordage'

/** The longest prefix of `text` whose estimate is at most `tokens`, cut at a character boundary. */
export function prefixWithin(text: string, tokens: number): string {
  let ascii = 0
  let other = 0
  let end = 0
  while (end < text.length) {
    const code = text.charCodeAt(end)
    const pair = code >= 0xd800 && code < 0xdc00 && end + 1 < text.length
    const nextAscii = code < 128 ? ascii + 1 : ascii
    const nextOther = code < 128 ? other : other + 1
    if (Math.ceil(nextAscii / 4) + nextOther > tokens) break
    ascii = nextAscii
    other = nextOther
    end += pair ? 2 : 1
  }
  return text.slice(0, end)
}
