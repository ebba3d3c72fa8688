/**
 * The token estimate of the compacted projection, the same documented estimate as context-default (see
 * its tokens.ts and docs/context.md): ASCII at four characters per token, any other character as one
 * token, four per message, tool calls counted as their JSON. Kept here so this plugin works with any
 * context provider.
 */
import type { ContextMessage } from 'cordage'

export const MessageOverhead = 4

export function estimateTokens(text: string): number {
  let ascii = 0
  let other = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 128) ascii++
    else if (code < 0xdc00 || code > 0xdfff) other++
  }
  return Math.ceil(ascii / 4) + other
}

export function messageTokens(message: ContextMessage): number {
  const calls = message.calls?.length ? estimateTokens(JSON.stringify(message.calls)) : 0
  return MessageOverhead + estimateTokens(message.text) + calls
}

export function sumTokens(messages: readonly ContextMessage[]): number {
  return messages.reduce((n, m) => n + messageTokens(m), 0)
}

/** `text` shortened to about `chars` characters, marked when cut. */
export function shorten(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= chars ? flat : `${flat.slice(0, Math.max(0, chars - 1)).trimEnd()}…`
}
