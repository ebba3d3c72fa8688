/**
 * The kernel's projection as a Chat Completions request body. Past tool calls get ids derived from
 * their action ids, so every `tool` message names the call it answers.
 */
import { CordageError, type ContextMessage, type ToolView } from 'cordage'
import { checkExtraBody, OwnedBodyKeys, wireCallId } from 'cordage/wire'
import type { Config } from './manifest.ts'

type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant'
      content: string | null
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[]
    }
  | { role: 'tool'; tool_call_id: string; content: string }

export function chatMessages(messages: ContextMessage[]): ChatMessage[] {
  const out: ChatMessage[] = []
  // Tool messages must follow the assistant message with the calls they answer, all of them, before
  // anything else: a note that arrived while calls were open (a user's input during an approval wait)
  // waits until the last of them is answered.
  const open = new Set<string>()
  let held: ChatMessage[] = []
  for (const m of messages) {
    if (m.role === 'tool') {
      const id = wireCallId(m.actionId ?? '')
      out.push({ role: 'tool', tool_call_id: id, content: m.text })
      open.delete(id)
      if (open.size === 0) {
        out.push(...held)
        held = []
      }
      continue
    }
    const message = chatMessage(m)
    if (open.size) {
      held.push(message)
      continue
    }
    out.push(message)
    if (m.role === 'assistant') for (const c of m.calls ?? []) open.add(wireCallId(c.actionId))
  }
  return [...out, ...held]
}

function chatMessage(m: ContextMessage): ChatMessage {
  if (m.role === 'assistant' && m.calls?.length) {
    return {
      role: 'assistant',
      content: m.text || null,
      // Malformed arguments were kept as their raw text: send back exactly what the model wrote.
      tool_calls: m.calls.map((c) => ({
        id: wireCallId(c.actionId),
        type: 'function',
        function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}) },
      })),
    }
  }
  return { role: m.role as 'system' | 'user' | 'assistant', content: m.text }
}

export function chatRequest(config: Config, messages: ContextMessage[], tools: ToolView[]): Record<string, unknown> {
  const body: Record<string, unknown> = { model: config.model, messages: chatMessages(messages) }
  if (tools.length)
    body.tools = tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }))
  // One cap, one field: OpenAI refuses a body with both (400). extraBody's max_tokens, for a server
  // that does not know max_completion_tokens, stands in for it (checkConfig: only without maxTokens).
  if (config.maxTokens !== undefined) body.max_completion_tokens = config.maxTokens
  if (config.temperature !== undefined) body.temperature = config.temperature
  if (config.stream) {
    body.stream = true
    if (config.streamUsage) body.stream_options = { include_usage: true }
  }
  const merged = { ...body, ...config.extraBody }
  // The API refuses tool_choice and parallel_tool_calls without tools (400): a request that offers none
  // (a compactor's summary) goes without them, so extraBody's apply only where there are tools to choose.
  if (!tools.length) {
    delete merged.tool_choice
    delete merged.parallel_tool_calls
  }
  return merged
}

/** A config whose request the API would refuse, or that the adapter would not honour, refused at start. */
export function checkConfig(config: Config): void {
  checkExtraBody(
    'model-openai',
    config.extraBody,
    {
      ...OwnedBodyKeys,
      stream_options: 'set streamUsage instead',
      // The legacy forms of tools and tool_choice: sent beside tools, the model would see two tool lists.
      functions: 'the tools plugins (and askUser) decide the tools',
      function_call: 'use tool_choice in extraBody instead',
    },
    {
      max_completion_tokens: { key: 'maxTokens', value: config.maxTokens },
      max_tokens: {
        key: 'maxTokens',
        value: config.maxTokens,
        instead: 'or, for a server that does not know max_completion_tokens, keep extraBody.max_tokens and take maxTokens out',
      },
      temperature: { key: 'temperature', value: config.temperature },
    },
  )
  const extra = config.extraBody
  if ('max_tokens' in extra && 'max_completion_tokens' in extra)
    throw new CordageError(
      'plugin_config_invalid',
      'model-openai: extraBody has both max_tokens and max_completion_tokens, and OpenAI refuses a request with both; keep one (max_tokens only for a server that does not know max_completion_tokens).',
    )
}
