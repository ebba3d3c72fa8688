/**
 * The token estimate of the compacted projection: the kernel's documented estimate (core/kit/tokens.ts),
 * the one context-default counts with too, so this plugin works with any context provider.
 */
import { messageTokens, type ContextMessage } from 'cordage'

export { estimateTokens, messageTokens, MessageOverhead } from 'cordage'

export function sumTokens(messages: readonly ContextMessage[]): number {
  return messages.reduce((n, m) => n + messageTokens(m), 0)
}

/** `text` shortened to about `chars` characters, marked when cut. */
export function shorten(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= chars ? flat : `${flat.slice(0, Math.max(0, chars - 1)).trimEnd()}…`
}
