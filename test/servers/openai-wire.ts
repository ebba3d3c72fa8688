/**
 * The OpenAI Chat Completions wire format (POST /v1/chat/completions), as the API serves it: request
 * checks the real API enforces, `chat.completion` bodies, and `chat.completion.chunk` streams ending with
 * `data: [DONE]`.
 */
import { z } from 'zod'
import { argsText, pieces, type ScriptedReply } from './reply.ts'
import { issuesText, sse, type Protocol } from './protocol.ts'

const ToolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
})
const Content = z.union([z.string(), z.array(z.object({ type: z.string() }).passthrough())])
const Message = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: Content }),
  z.object({ role: z.literal('user'), content: Content }),
  z.object({ role: z.literal('assistant'), content: Content.nullish(), tool_calls: z.array(ToolCall).min(1).optional() }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: Content }),
])
const Request = z
  .object({
    model: z.string().min(1),
    messages: z.array(Message).min(1),
    tools: z
      .array(
        z.object({
          type: z.literal('function'),
          function: z.object({
            name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
            description: z.string().optional(),
            parameters: z.record(z.string(), z.unknown()).optional(),
          }),
        }),
      )
      .optional(),
    tool_choice: z.unknown().optional(),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).optional(),
    max_completion_tokens: z.number().int().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).optional(),
  })
  .passthrough()

/** Tool messages must answer the calls of the assistant message right before them, every one of them. */
function checkPairing(messages: z.infer<typeof Message>[]): string | undefined {
  let open: Set<string> | undefined
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      if (!open?.has(m.tool_call_id))
        return `messages.${i}: a message with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id ${m.tool_call_id} is not one of them)`
      open.delete(m.tool_call_id)
      continue
    }
    if (open?.size)
      return `messages.${i}: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: ${[...open].join(', ')}`
    open = m.role === 'assistant' && m.tool_calls ? new Set(m.tool_calls.map((c) => c.id)) : undefined
  }
  return undefined
}

const usageOf = (reply: ScriptedReply) => {
  const input = reply.usage?.input ?? 50
  const output = reply.usage?.output ?? 10
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: reply.usage?.cachedInput ?? 0 },
  }
}
const finishOf = (reply: ScriptedReply) => reply.stopReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop')
const callId = (n: number, i: number) => `call_${n}_${i}`

export const OpenAIProtocol: Protocol = {
  name: 'openai',
  path: '/v1/chat/completions',

  authenticate(headers, apiKey) {
    const sent = /^Bearer (.*)$/.exec(headers.authorization ?? '')?.[1]
    if (sent === apiKey) return undefined
    // The real API echoes (part of) the key it got: the adapter must not let it out.
    const message = sent
      ? `Incorrect API key provided: ${sent}. You can find your API key at https://platform.openai.com/account/api-keys.`
      : "You didn't provide an API key."
    return { status: 401, body: { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } }
  },

  check(body) {
    const parsed = Request.safeParse(body)
    if (!parsed.success) return issuesText(parsed.error.issues)
    if (parsed.data.stream_options && !parsed.data.stream) return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    if (parsed.data.max_tokens !== undefined && parsed.data.max_completion_tokens !== undefined)
      return 'max_tokens and max_completion_tokens cannot both be set; use max_completion_tokens'
    return checkPairing(parsed.data.messages)
  },

  stream(reply, request, n) {
    const q = reply.quirks ?? {}
    const usage = request.stream_options?.include_usage
    const base = {
      id: `chatcmpl-${n}`,
      object: 'chat.completion.chunk',
      created: 1764400000 + n,
      model: request.model,
      system_fingerprint: 'fp_scripted',
    }
    const chunk = (delta: unknown, finish: string | null = null) =>
      sse({
        ...base,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(usage && q.nullUsage ? { usage: null } : {}),
        ...(q.unknownEvent ? { service_tier: 'default', obfuscation: 'x1y2' } : {}),
      })
    if (q.usageOnly) return [sse({ ...base, choices: [], usage: usageOf(reply) }), sse('[DONE]')]
    const out = [chunk({ role: 'assistant', content: '', refusal: null })]
    if (reply.text) for (const piece of pieces(reply.text, reply.chunkChars)) out.push(chunk({ content: piece }))
    for (const [i, call] of (reply.toolCalls ?? []).entries()) {
      if (q.noIndex) {
        out.push(chunk({ tool_calls: [{ id: callId(n, i), type: 'function', function: { name: call.name, arguments: argsText(call) } }] }))
        continue
      }
      out.push(chunk({ tool_calls: [{ index: i, id: callId(n, i), type: 'function', function: { name: call.name, arguments: '' } }] }))
      for (const piece of pieces(argsText(call), reply.chunkChars))
        out.push(chunk({ tool_calls: [{ index: i, function: { ...(q.repeatNames ? { name: call.name } : {}), arguments: piece } }] }))
    }
    out.push(chunk({}, finishOf(reply)))
    if (usage) out.push(sse({ ...base, choices: [], usage: usageOf(reply) }))
    out.push(sse('[DONE]'))
    return out
  },

  json(reply, request, n) {
    const calls = reply.toolCalls?.map((call, i) => ({
      id: callId(n, i),
      type: 'function',
      function: { name: call.name, arguments: argsText(call) },
    }))
    return {
      id: `chatcmpl-${n}`,
      object: 'chat.completion',
      created: 1764400000 + n,
      model: request.model,
      system_fingerprint: 'fp_scripted',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: reply.text ?? null, refusal: null, ...(calls?.length ? { tool_calls: calls } : {}) },
          logprobs: null,
          finish_reason: finishOf(reply),
        },
      ],
      usage: usageOf(reply),
    }
  },

  error(status, message, fault) {
    const type = fault?.errorType ?? (status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error')
    return { error: { message, type, param: null, code: null } }
  },

  streamError(fault) {
    return sse({
      error: {
        message: fault.message ?? 'The server had an error while processing your request.',
        type: fault.errorType ?? 'server_error',
        param: null,
        code: null,
      },
    })
  },
}
