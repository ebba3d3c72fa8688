/**
 * The token estimate. No tokenizer ships with Cordage, and each provider counts differently, so this is
 * a documented estimate that errs high rather than low: ASCII text at four characters per token (the
 * usual rate for English and code in BPE vocabularies), every other character as one token of its own
 * (CJK text runs close to that; accented Latin is overcounted), four tokens per message for the role
 * frame, and the JSON of the message's tool calls counted like text. The provider's real count comes
 * back in the model usage.
 */
import type { ContextMessage } from 'cordage'

export const MessageOverhead = 4

export function estimateTokens(text: string): number {
  let ascii = 0
  let other = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 128) ascii++
    // The low half of a surrogate pair: the character was counted at its high half.
    else if (code < 0xdc00 || code > 0xdfff) other++
  }
  return Math.ceil(ascii / 4) + other
}

export function messageTokens(message: ContextMessage): number {
  const calls = message.calls?.length ? estimateTokens(JSON.stringify(message.calls)) : 0
  return MessageOverhead + estimateTokens(message.text) + calls
}

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
