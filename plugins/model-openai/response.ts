/**
 * A Chat Completions answer, assembled from stream chunks (or read from one completion body), checked
 * with zod at the trust boundary. Tool-call arguments are gathered per call index and parsed only once
 * the answer is complete.
 */
import { CordageError, type ModelDelta, type ModelResponse } from 'cordage'
import { costOf, decisionOf, type Prices, type ReceivedCall } from 'cordage/wire'
import { z } from 'zod'

const WireUsage = z.object({
  prompt_tokens: z.number().int().min(0).default(0),
  completion_tokens: z.number().int().min(0).default(0),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int().min(0).nullish() }).nullish(),
})
const WireError = z.object({ message: z.string(), type: z.string().nullish() })

const ToolCallDelta = z.object({
  index: z.number().int().min(0).optional(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
})
export const Chunk = z.object({
  model: z.string().optional(),
  choices: z.array(z.object({
    index: z.number().int().optional(),
    delta: z.object({ content: z.string().nullish(), refusal: z.string().nullish(), tool_calls: z.array(ToolCallDelta).nullish() }).nullish(),
    finish_reason: z.string().nullish(),
  })).default([]),
  usage: WireUsage.nullish(),
  error: WireError.optional(),
})
export const Completion = z.object({
  model: z.string().optional(),
  choices: z.array(z.object({
    message: z.object({
      content: z.string().nullish(),
      refusal: z.string().nullish(),
      tool_calls: z.array(z.object({ id: z.string().nullish(), function: z.object({ name: z.string(), arguments: z.string().nullish() }) })).nullish(),
    }),
    finish_reason: z.string().nullish(),
  })).min(1),
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

  /** Take one stream chunk; pass text and argument pieces on as previews. */
  add(chunk: z.infer<typeof Chunk>, onDelta?: (delta: ModelDelta) => void): void {
    if (chunk.error) throw streamError(chunk.error)
    this.model ??= chunk.model
    if (chunk.usage) this.usage = chunk.usage
    const choice = chunk.choices.find((c) => (c.index ?? 0) === 0)
    if (!choice) return
    const delta = choice.delta
    const piece = (delta?.content ?? '') + (delta?.refusal ?? '')
    if (piece) {
      this.text += piece
      onDelta?.({ text: piece })
    }
    for (const [position, call] of (delta?.tool_calls ?? []).entries()) {
      // Some compatible servers leave out the index when they send each call whole.
      const index = call.index ?? position
      const known = (this.calls[index] ??= { name: '', argsText: '' })
      if (call.id) known.id = call.id
      if (call.function?.name) known.name += call.function.name
      if (call.function?.arguments) known.argsText += call.function.arguments
      onDelta?.({ toolCall: { index, name: call.function?.name ?? undefined, argsDelta: call.function?.arguments ?? undefined } })
    }
    if (choice.finish_reason) this.finish = choice.finish_reason
  }

  /** Take a whole (non-streamed) completion. */
  read(completion: z.infer<typeof Completion>): void {
    const choice = completion.choices[0]
    this.model = completion.model
    this.usage = completion.usage ?? undefined
    this.text = (choice.message.content ?? '') + (choice.message.refusal ?? '')
    for (const call of choice.message.tool_calls ?? []) this.calls.push({ id: call.id ?? undefined, name: call.function.name, argsText: call.function.arguments ?? '' })
    this.finish = choice.finish_reason ?? 'stop'
    this.done = true
  }

  /** The answer is whole: the stream said [DONE], or at least gave a finish reason before it closed. */
  get complete(): boolean {
    return this.done || this.finish !== undefined
  }

  result(prices: Prices, configuredModel: string, askUserOffered: boolean): ModelResponse {
    if (this.finish === 'content_filter') throw new CordageError('model_permanent', 'the provider withheld the answer (finish_reason content_filter)')
    const calls = this.calls.filter((c) => c !== undefined)
    if (calls.some((c) => !c.name)) throw new CordageError('model_invalid_response', 'a tool call arrived without a function name')
    const input = this.usage?.prompt_tokens ?? 0
    const cached = this.usage?.prompt_tokens_details?.cached_tokens ?? 0
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
  return new CordageError(permanent ? 'model_permanent' : 'model_transient', `the server reported an error mid-stream (${error.type ?? 'unknown type'}): ${error.message}`)
}
