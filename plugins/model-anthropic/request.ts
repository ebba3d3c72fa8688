/**
 * The kernel's projection as a Messages API request. The API is stricter than the projection: the
 * system prompt is a top-level field, roles must alternate, every tool_use must be answered by a
 * tool_result in the next user message (results first), and text blocks must not be empty. So
 * consecutive messages of one role are merged, and a later system message becomes user text. With
 * extended thinking on, an assistant message's thinking blocks (its `reasoning`) open its content,
 * unchanged: the API checks their signatures (thinking.ts).
 */
import { CordageError, FailedResultMark, type ContextMessage, type ToolView } from 'cordage'
import { wireCallId } from 'cordage/wire'
import { cacheControl, markCache, type CacheControl } from './cache.ts'
import type { Config } from './manifest.ts'
import { blocksBack, thinkingParam, type ReasoningBlock } from './thinking.ts'

type Block = (
  | ReasoningBlock
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true }
) & { cache_control?: CacheControl }
interface Turn {
  role: 'user' | 'assistant'
  content: Block[]
}

/**
 * @param historyTools definitions for the tools the history calls, by name, when `tools` is empty and
 *   the history holds tool blocks (history-tools.ts)
 */
export function messagesRequest(
  config: Config,
  messages: ContextMessage[],
  tools: ToolView[],
  historyTools: (names: string[]) => ToolView[] = () => [],
): Record<string, unknown> {
  const system: string[] = []
  const turns: Turn[] = []
  const add = (role: Turn['role'], blocks: Block[]) => {
    const last = turns.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else turns.push({ role, content: blocks })
  }
  for (const m of messages) {
    if (m.role === 'system' && turns.length === 0) {
      system.push(m.text)
      continue
    }
    if (m.role === 'tool') {
      // The flag says it failed: the mark that says so in text for providers without one goes.
      const text = m.isError && m.text.startsWith(FailedResultMark) ? m.text.slice(FailedResultMark.length) : m.text
      const failed = m.isError ? { is_error: true as const } : {}
      add('user', [{ type: 'tool_result', tool_use_id: wireCallId(m.actionId ?? ''), content: text || '(empty)', ...failed }])
      continue
    }
    if (m.role === 'assistant') {
      const calls = (m.calls ?? []).map(
        (c): Block => ({ type: 'tool_use', id: wireCallId(c.actionId), name: c.name, input: asObject(c.args) }),
      )
      // Thinking off, the blocks stay home: a request without thinking needs none back.
      const thinking = config.thinking ? blocksBack(m.reasoning, m.source) : []
      add('assistant', [...thinking, ...textBlock(m.text), ...calls])
      continue
    }
    add('user', textBlock(m.role === 'system' ? `[system] ${m.text}` : m.text))
  }
  for (const turn of turns) {
    // Results must open their message; text that landed before them (merged turns) moves after.
    if (turn.role === 'user') turn.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'))
    if (turn.content.length === 0) turn.content.push({ type: 'text', text: '(empty)' })
  }
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ type: 'text', text: '(continue)' }] })
  if (config.thinking) checkContinuation(turns)
  const body: Record<string, unknown> = { model: config.model, max_tokens: config.maxTokens, messages: turns }
  const systemText = system.join('\n\n').trim()
  const mark = cacheControl(config)
  // As blocks when caching, so the system prompt can carry its mark; as the plain string otherwise.
  if (systemText) body.system = mark ? [{ type: 'text', text: systemText }] : systemText
  const used = turns.flatMap((t) => t.content.flatMap((b) => (b.type === 'tool_use' ? [b.name] : [])))
  const defined = tools.length ? tools : historyTools(used)
  if (defined.length) body.tools = defined.map(toolParam)
  if (!tools.length && defined.length) body.tool_choice = { type: 'none' }
  if (mark) markCache(mark, body as Parameters<typeof markCache>[1])
  if (config.temperature !== undefined) body.temperature = config.temperature
  const thinking = thinkingParam(config)
  if (thinking) body.thinking = thinking
  if (config.stream) body.stream = true
  const merged = { ...body, ...config.extraBody }
  // A request that offers no tools but must define its history's answers in text: a tool_choice from
  // extraBody (any, or a named tool) would have the model call a tool it was not offered.
  if (body.tool_choice) merged.tool_choice = body.tool_choice
  return merged
}

/**
 * With thinking on, the API refuses a tool-use continuation whose assistant turn does not open with
 * thinking blocks. Refused here, with the reasons it can have, rather than by the API with its own.
 */
function checkContinuation(turns: Turn[]): void {
  const [assistant, results] = turns.slice(-2)
  if (assistant?.role !== 'assistant' || !results?.content.some((b) => b.type === 'tool_result')) return
  const first = assistant.content[0]?.type
  if (first === 'thinking' || first === 'redacted_thinking') return
  throw new CordageError(
    'model_permanent',
    'model-anthropic: extended thinking is on, and the assistant turn whose tool calls this request answers has no thinking blocks to send back, which the API refuses. Either that turn was answered with thinking off (turn thinking on or off only between turns, not within a tool-use loop), or its thinking held a secret value and was left out of the record.',
  )
}

const toolParam = (t: ToolView) => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.inputSchema } })

const textBlock = (text: string): Block[] => (text.trim() ? [{ type: 'text', text }] : [])

/** tool_use input must be an object: malformed arguments (kept as raw text) go back as an empty one. */
function asObject(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {}
}
