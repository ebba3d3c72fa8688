/**
 * A Chat Completions answer, assembled from stream chunks (or read from one completion body), checked
 * with zod at the trust boundary. Tool-call arguments are gathered per call index and parsed only once
 * the answer is complete.
 */
import { CordageError, type ModelDelta, type ModelResponse } from 'cordage'
import { costOf, decisionOf, type Prices, type ReceivedCall } from 'cordage/wire'
import { z } from 'zod'

// Lenient where compatible servers differ from OpenAI (nulls for absent fields, extra fields).
const Count = z.number().int().min(0).nullish()
const WireUsage = z.object({
  prompt_tokens: Count,
  completion_tokens: Count,
  prompt_tokens_details: z.object({ cached_tokens: Count }).nullish(),
  /** DeepSeek's name for cached input tokens. */
  prompt_cache_hit_tokens: Count,
})
const WireError = z.union([
  z.object({ message: z.string(), type: z.string().nullish() }),
  z.string().transform((message) => ({ message, type: undefined })),
])

const ToolCallDelta = z.object({
  index: z.number().int().min(0).optional(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
})
export const Chunk = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().int().optional(),
        delta: z
          .object({ content: z.string().nullish(), refusal: z.string().nullish(), tool_calls: z.array(ToolCallDelta).nullish() })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: WireUsage.nullish(),
  error: WireError.nullish(),
})
export const Completion = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z
            .array(z.object({ id: z.string().nullish(), function: z.object({ name: z.string(), arguments: z.string().nullish() }) }))
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: WireUsage.nullish(),
})

export class ChatAnswer {
  private text = ''
  private readonly calls: ReceivedCall[] = []
  private finish: string | undefined
  private usage: z.infer<typeof WireUsage> | undefined
  private model: string | undefined
  /** `data: [DONE]` arrived. */
  done = false
  /** A choice arrived: a stream of usage alone holds no answer at all. */
  private answered = false

  /** Take one stream chunk; pass text and argument pieces on as previews. */
  add(chunk: z.infer<typeof Chunk>, onDelta?: (delta: ModelDelta) => void): void {
    if (chunk.error) throw streamError(chunk.error)
    this.model ??= chunk.model ?? undefined
    if (chunk.usage) this.usage = chunk.usage
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0)
    if (!choice) return
    this.answered = true
    const delta = choice.delta
    const piece = (delta?.content ?? '') + (delta?.refusal ?? '')
    if (piece) {
      this.text += piece
      onDelta?.({ text: piece })
    }
    for (const call of delta?.tool_calls ?? []) {
      const index = call.index ?? this.unindexed(call)
      const known = (this.calls[index] ??= { name: '', argsText: '' })
      if (call.id) known.id = call.id
      // The name comes whole in one chunk; some servers repeat it in every chunk, so it is never appended.
      if (call.function?.name && !known.name) known.name = call.function.name
      if (call.function?.arguments) known.argsText += call.function.arguments
      onDelta?.({ toolCall: { index, name: call.function?.name ?? undefined, argsDelta: call.function?.arguments ?? undefined } })
    }
    if (choice.finish_reason) this.finish = choice.finish_reason
  }

  /**
   * Where a call without an index goes (some compatible servers send each call whole, unindexed): a new
   * call when it brings a new id, or a name while the last call already has one; else the last call.
   */
  private unindexed(call: z.infer<typeof ToolCallDelta>): number {
    const last = this.calls.length - 1
    const current = this.calls[last]
    const starts = !current || (call.id && call.id !== current.id) || (call.function?.name && current.name)
    return starts ? last + 1 : last
  }

  /** Take a whole (non-streamed) completion. */
  read(completion: z.infer<typeof Completion>): void {
    const choice = completion.choices[0]
    this.model = completion.model ?? undefined
    this.usage = completion.usage ?? undefined
    this.text = (choice.message.content ?? '') + (choice.message.refusal ?? '')
    for (const call of choice.message.tool_calls ?? [])
      this.calls.push({ id: call.id ?? undefined, name: call.function.name, argsText: call.function.arguments ?? '' })
    this.finish = choice.finish_reason ?? 'stop'
    this.done = true
    this.answered = true
  }

  /** The answer is whole: the stream said [DONE], or at least gave a finish reason before it closed. */
  get complete(): boolean {
    return this.done || this.finish !== undefined
  }

  result(prices: Prices, configuredModel: string, askUserOffered: boolean): ModelResponse {
    // Not an empty final answer: nothing was answered. Taken as a server's hiccup, like a stream cut short.
    if (!this.answered)
      throw new CordageError(
        'model_transient',
        'the stream ended without any choice (no text, tool call or finish_reason; usage alone at most), so there is no answer to take',
      )
    if (this.finish === 'content_filter')
      throw new CordageError('model_permanent', 'the provider withheld the answer (finish_reason content_filter)')
    if (this.finish === 'function_call')
      throw new CordageError(
        'model_invalid_response',
        'the server answered with a legacy function_call; Cordage sends `tools` and needs `tool_calls` (check the server supports tool calling)',
      )
    const calls = this.calls.filter((c) => c !== undefined)
    // A cut-off answer must not pass for a final one. Cut-off tool calls go on: their arguments fail to
    // parse, and the model hears about it.
    if (this.finish === 'length' && calls.length === 0)
      throw new CordageError(
        'model_permanent',
        'the answer was cut off at the output limit (finish_reason length); raise maxTokens, or ask for shorter answers',
      )
    if (calls.some((c) => !c.name)) throw new CordageError('model_invalid_response', 'a tool call arrived without a function name')
    const input = this.usage?.prompt_tokens ?? 0
    const cached = Math.min(input, this.usage?.prompt_tokens_details?.cached_tokens ?? this.usage?.prompt_cache_hit_tokens ?? 0)
    const output = this.usage?.completion_tokens ?? 0
    return {
      decision: decisionOf(this.text, calls, askUserOffered),
      usage: { inputTokens: input, outputTokens: output, costUsd: costOf({ input: input - cached, cachedInput: cached, output }, prices) },
      model: this.model ?? configuredModel,
    }
  }
}

/** An error the server sent inside the stream: a bad request will not pass on retry, anything else may. */
function streamError(error: z.infer<typeof WireError>): CordageError {
  const permanent = error.type === 'invalid_request_error'
  return new CordageError(
    permanent ? 'model_permanent' : 'model_transient',
    `the server reported an error mid-stream (${error.type ?? 'unknown type'}): ${error.message}`,
  )
}
