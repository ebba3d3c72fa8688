/**
 * Prompt caching. The API caches a request's prefix (tools, then system, then messages) up to a block
 * marked `cache_control`, and later requests that start with the same bytes read it back at a tenth of
 * the input price; nothing is cached without a mark. A request takes at most 4 marks, and thinking
 * blocks take none (CacheControlEphemeral on TextBlockParam, ToolUseBlockParam, ToolResultBlockParam,
 * Tool in @anthropic-ai/sdk). This plugin marks three places:
 * - the end of the system prompt, or the last tool when there is none: the prefix every step shares;
 * - the end of the last user turn before the final one: where the previous step's request ended, so
 *   the conversation so far is read back even when the new turn adds more than the API looks back over
 *   (20 blocks) from a mark;
 * - the end of the final turn: written now, read back by the next step.
 */
import type { Config } from './manifest.ts'

export interface CacheControl {
  type: 'ephemeral'
  ttl?: '5m' | '1h'
}

interface Markable {
  type: string
  cache_control?: CacheControl
}
interface Turn {
  role: 'user' | 'assistant'
  content: Markable[]
}

/** The mark to put on a block, or undefined when caching is off. The API's default TTL (5m) goes unsaid. */
export function cacheControl(config: Pick<Config, 'promptCache' | 'promptCacheTtl'>): CacheControl | undefined {
  if (!config.promptCache) return undefined
  return config.promptCacheTtl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }
}

/** Mark the request's stable prefix (see the module comment); at most three marks, in place. */
export function markCache(mark: CacheControl, body: { system?: Markable[]; tools?: Record<string, unknown>[]; messages: Turn[] }): void {
  const prefix = body.system?.at(-1) ?? body.tools?.at(-1)
  if (prefix) prefix.cache_control = mark
  const turns = body.messages
  const last = turns.length - 1
  markTurn(turns[last], mark)
  for (let i = last - 1; i >= 0; i--) {
    if (turns[i].role !== 'user') continue
    markTurn(turns[i], mark)
    break
  }
}

/** Mark a turn's last block that takes a mark (not a thinking block). */
function markTurn(turn: Turn | undefined, mark: CacheControl): void {
  const block = turn?.content.findLast((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking')
  if (block) block.cache_control = mark
}
