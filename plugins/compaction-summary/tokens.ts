/**
 * Tokens of the compacted projection, by the agent model's counter or else the kit's estimate
 * (core/kit/tokens.ts, `counterOf`): the counter the context plugins count with too, so this plugin's
 * figures match the projection's whatever the context provider.
 */
import { EstimateCounter, messageTokens, type ContextMessage, type TokenCounter } from 'cordage'

export { estimateTokens, messageTokens, MessageOverhead } from 'cordage'

export function sumTokens(messages: readonly ContextMessage[], counter: TokenCounter = EstimateCounter): number {
  return messages.reduce((n, m) => n + messageTokens(m, counter), 0)
}

/** `text` shortened to about `chars` characters, marked when cut. */
export function shorten(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length <= chars ? flat : `${flat.slice(0, Math.max(0, chars - 1)).trimEnd()}…`
}
