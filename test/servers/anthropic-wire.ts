/**
 * The Anthropic Messages wire format (POST /v1/messages), as the API serves it: the headers and request
 * rules the real API enforces (alternating roles, tool_result answering the tool_use blocks just before,
 * non-empty text), `message` bodies, and streams of message_start / content_block_* / message_delta /
 * message_stop events with pings between.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { z } from 'zod'
import { argsText, pieces, type ScriptedReply } from './reply.ts'
import { issuesText, sse, type Protocol } from './protocol.ts'

const Text = z.object({ type: z.literal('text'), text: z.string().regex(/\S/, 'text content blocks must contain non-whitespace text') })
const ToolUse = z.object({
  type: z.literal('tool_use'),
  id: z.string().regex(/^[a-zA-Z0-9_-]+$/),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
})
const ToolResult = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(Text)]).optional(),
  is_error: z.boolean().optional(),
})
const Block = z.discriminatedUnion('type', [Text, ToolUse, ToolResult, z.object({ type: z.literal('image') }).passthrough()])
const Message = z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string().min(1), z.array(Block).min(1)]) })
const Request = z
  .object({
    model: z.string().min(1),
    max_tokens: z.number().int().positive(),
    messages: z.array(Message).min(1),
    system: z.union([z.string(), z.array(Text)]).optional(),
    tools: z
      .array(
        z.object({
          name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/),
          description: z.string().optional(),
          input_schema: z.object({ type: z.literal('object') }).passthrough(),
        }),
      )
      .optional(),
    tool_choice: z.unknown().optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(1).optional(),
  })
  .passthrough()

type Msg = z.infer<typeof Message>
const blocksOf = (m: Msg) => (typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content)

/** Conversation rules: user first, roles alternate, tool results answer exactly the previous turn's tool uses, first. */
function checkTurns(messages: Msg[]): string | undefined {
  if (messages[0].role !== 'user') return 'messages: first message must use the "user" role'
  for (const [i, m] of messages.entries()) {
    if (i > 0 && messages[i - 1].role === m.role)
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`
    const blocks = blocksOf(m)
    const results = blocks.filter((b) => b.type === 'tool_result') as z.infer<typeof ToolResult>[]
    if (m.role === 'assistant' && results.length) return `messages.${i}: tool_result blocks are only allowed in user messages`
    const uses = i > 0 ? (blocksOf(messages[i - 1]).filter((b) => b.type === 'tool_use') as z.infer<typeof ToolUse>[]) : []
    if (m.role === 'user' && uses.length) {
      const answered = new Set(results.map((r) => r.tool_use_id))
      const missing = uses.filter((u) => !answered.has(u.id)).map((u) => u.id)
      if (missing.length)
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
      const firstOther = blocks.findIndex((b) => b.type !== 'tool_result')
      if (firstOther >= 0 && firstOther < results.length) return `messages.${i}: tool_result blocks must come before any other content`
    }
    const known = new Set(uses.map((u) => u.id))
    for (const r of results)
      if (!known.has(r.tool_use_id))
        return `messages.${i}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${r.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
  }
  return undefined
}

/** Prompt-cache marks: at most 4 in a request, none on a thinking block, and only the TTLs the API knows. */
function checkCacheMarks(body: Record<string, any>): string | undefined {
  const marked: { type?: string; cache_control?: { type?: unknown; ttl?: unknown } }[] = [
    ...(Array.isArray(body.system) ? body.system : []),
    ...(body.tools ?? []),
    ...body.messages.flatMap((m: Msg) => (typeof m.content === 'string' ? [] : m.content)),
  ].filter((b) => b?.cache_control != null)
  if (body.cache_control != null) marked.push(body)
  if (marked.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marked.length}.`
  for (const b of marked) {
    if (b.type === 'thinking' || b.type === 'redacted_thinking') return `${b.type}.cache_control: Extra inputs are not permitted`
    if (b.cache_control!.type !== 'ephemeral' || ![undefined, '5m', '1h'].includes(b.cache_control!.ttl as string))
      return `cache_control: Input should be {"type": "ephemeral", "ttl": "5m" | "1h"}`
  }
  return undefined
}

const usageOf = (reply: ScriptedReply) => ({
  input_tokens: reply.usage?.input ?? 50,
  cache_creation_input_tokens: reply.usage?.cacheWrite ?? 0,
  cache_read_input_tokens: reply.usage?.cachedInput ?? 0,
  output_tokens: reply.usage?.output ?? 10,
})
const stopOf = (reply: ScriptedReply) => reply.stopReason ?? (reply.toolCalls?.length ? 'tool_use' : 'end_turn')
const toolUseId = (n: number, i: number) => `toolu_${String(n).padStart(4, '0')}${i}`

export const AnthropicProtocol: Protocol = {
  name: 'anthropic',
  path: '/v1/messages',

  authenticate(headers, apiKey) {
    const sent = headers['x-api-key']
    if (sent === apiKey) return undefined
    return {
      status: 401,
      body: {
        type: 'error',
        error: { type: 'authentication_error', message: sent ? `invalid x-api-key: ${sent}` : 'x-api-key header is required' },
      },
    }
  },

  check(body, headers: IncomingHttpHeaders) {
    if (!headers['anthropic-version']) return 'anthropic-version: header is required'
    const parsed = Request.safeParse(body)
    if (!parsed.success) return issuesText(parsed.error.issues)
    const blocks = parsed.data.messages.flatMap(blocksOf)
    if (!parsed.data.tools?.length && blocks.some((b) => b.type === 'tool_use' || b.type === 'tool_result'))
      return 'Requests which include `tool_use` or `tool_result` blocks must define tools.'
    return checkCacheMarks(body as Record<string, any>) ?? checkTurns(parsed.data.messages)
  },

  stream(reply, request, n) {
    const usage = usageOf(reply)
    const out = [
      sse(
        {
          type: 'message_start',
          message: {
            id: `msg_${n}`,
            type: 'message',
            role: 'assistant',
            model: request.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...usage, output_tokens: 1 },
          },
        },
        'message_start',
      ),
    ]
    let index = 0
    const q = reply.quirks ?? {}
    if (q.unknownEvent) out.push(sse({ type: 'message_annotation', annotation: { kind: 'from-a-newer-api' } }, 'message_annotation'))
    if (q.thinking) {
      out.push(sse({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '' } }, 'content_block_start'))
      out.push(sse({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: q.thinking } }, 'content_block_delta'))
      out.push(
        sse({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' } }, 'content_block_delta'),
      )
      out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'))
      index++
    }
    if (reply.text) {
      out.push(sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start'))
      out.push(sse({ type: 'ping' }, 'ping'))
      for (const piece of pieces(reply.text, reply.chunkChars))
        out.push(sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }, 'content_block_delta'))
      out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'))
      index++
    }
    for (const [i, call] of (reply.toolCalls ?? []).entries()) {
      out.push(
        sse(
          { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolUseId(n, i), name: call.name, input: {} } },
          'content_block_start',
        ),
      )
      for (const piece of pieces(argsText(call), reply.chunkChars))
        out.push(
          sse({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }, 'content_block_delta'),
        )
      out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'))
      index++
    }
    out.push(
      sse(
        {
          type: 'message_delta',
          delta: { stop_reason: stopOf(reply), stop_sequence: null },
          usage: { output_tokens: usage.output_tokens },
        },
        'message_delta',
      ),
    )
    out.push(sse({ type: 'message_stop' }, 'message_stop'))
    return out
  },

  json(reply, request, n) {
    const content: unknown[] = []
    if (reply.text) content.push({ type: 'text', text: reply.text })
    for (const [i, call] of (reply.toolCalls ?? []).entries())
      content.push({ type: 'tool_use', id: toolUseId(n, i), name: call.name, input: call.args ?? {} })
    return {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      model: request.model,
      content,
      stop_reason: stopOf(reply),
      stop_sequence: null,
      usage: usageOf(reply),
    }
  },

  error(status, message, fault) {
    const type =
      fault?.errorType ??
      (status === 429
        ? 'rate_limit_error'
        : status === 529
          ? 'overloaded_error'
          : status >= 500
            ? 'api_error'
            : status === 401
              ? 'authentication_error'
              : status === 404
                ? 'not_found_error'
                : 'invalid_request_error')
    return { type: 'error', error: { type, message } }
  },

  streamError(fault) {
    return sse({ type: 'error', error: { type: fault.errorType ?? 'overloaded_error', message: fault.message ?? 'Overloaded' } }, 'error')
  },
}
