/**
 * @module tokens
 * The documented token estimate context plugins share, so a projection and its compaction count alike.
 * No tokenizer ships with Cordage, and each provider counts differently, so it errs high rather than
 * low: ASCII text at four characters per token (the usual rate for English and code in BPE
 * vocabularies), every other character as one token of its own (CJK text runs close to that; accented
 * Latin is overcounted), four tokens per message for the role frame, and the JSON of the message's
 * tool calls counted like text. The provider's real count comes back in the model usage.
 */
import type { ContextMessage } from '../contracts/services/context.ts'

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
