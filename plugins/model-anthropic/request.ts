/**
 * The kernel's projection as a Messages API request. The API is stricter than the projection: the
 * system prompt is a top-level field, roles must alternate, every tool_use must be answered by a
 * tool_result in the next user message (results first), and text blocks must not be empty. So
 * consecutive messages of one role are merged, and a later system message becomes user text.
 */
import type { ContextMessage, ToolView } from 'cordage'
import { wireCallId } from 'cordage/wire'
import type { Config } from './manifest.ts'

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string }
interface Turn {
  role: 'user' | 'assistant'
  content: Block[]
}

export function messagesRequest(config: Config, messages: ContextMessage[], tools: ToolView[]): Record<string, unknown> {
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
      add('user', [{ type: 'tool_result', tool_use_id: wireCallId(m.actionId ?? ''), content: m.text || '(empty)' }])
      continue
    }
    if (m.role === 'assistant') {
      const calls = (m.calls ?? []).map(
        (c): Block => ({ type: 'tool_use', id: wireCallId(c.actionId), name: c.name, input: asObject(c.args) }),
      )
      add('assistant', [...textBlock(m.text), ...calls])
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
  const body: Record<string, unknown> = { model: config.model, max_tokens: config.maxTokens, messages: turns }
  const systemText = system.join('\n\n').trim()
  if (systemText) body.system = systemText
  if (tools.length)
    body.tools = tools.map((t) => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.inputSchema } }))
  if (config.temperature !== undefined) body.temperature = config.temperature
  if (config.stream) body.stream = true
  return { ...body, ...config.extraBody }
}

const textBlock = (text: string): Block[] => (text.trim() ? [{ type: 'text', text }] : [])

/** tool_use input must be an object: malformed arguments (kept as raw text) go back as an empty one. */
function asObject(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {}
}
