/**
 * A Messages API answer, assembled from stream events (or read from one message body), checked with
 * zod at the trust boundary. Content blocks are gathered by index; a tool_use block's input arrives as
 * JSON pieces and is parsed only once the message is complete.
 */
import { CordageError, type ModelDelta, type ModelResponse } from 'cordage'
import { costOf, decisionOf, type Prices, type ReceivedCall } from 'cordage/wire'
import { z } from 'zod'

const WireUsage = z.object({
  input_tokens: z.number().int().min(0).nullish(),
  output_tokens: z.number().int().min(0).nullish(),
  cache_read_input_tokens: z.number().int().min(0).nullish(),
  cache_creation_input_tokens: z.number().int().min(0).nullish(),
})
const ContentBlock = z.object({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
})

export const StreamEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message_start'), message: z.object({ model: z.string().optional(), usage: WireUsage.optional() }) }),
  z.object({ type: z.literal('content_block_start'), index: z.number().int().min(0), content_block: ContentBlock }),
  z.object({
    type: z.literal('content_block_delta'),
    index: z.number().int().min(0),
    delta: z.object({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() }),
  }),
  z.object({ type: z.literal('content_block_stop'), index: z.number().int().min(0) }),
  z.object({ type: z.literal('message_delta'), delta: z.object({ stop_reason: z.string().nullish() }), usage: WireUsage.optional() }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) }),
])
export const Message = z.object({
  model: z.string().optional(),
  content: z.array(ContentBlock),
  stop_reason: z.string().nullish(),
  usage: WireUsage.optional(),
})

interface Gathered {
  type: string
  text: string
  id?: string
  name?: string
  json: string
  call?: number
}

/** Errors the API sends in a stream that may pass on another try. */
const TransientErrors = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error'])

export class MessageAnswer {
  private readonly blocks: Gathered[] = []
  private calls = 0
  private stop: string | undefined
  private usage: z.infer<typeof WireUsage> = {}
  private model: string | undefined
  /** message_stop arrived. */
  complete = false

  add(event: z.infer<typeof StreamEvent>, onDelta?: (delta: ModelDelta) => void): void {
    switch (event.type) {
      case 'message_start':
        this.model = event.message.model
        this.usage = { ...event.message.usage }
        return
      case 'content_block_start': {
        const b = event.content_block
        // Input normally starts empty and arrives as JSON pieces; take a complete one as it is.
        const json = b.input && typeof b.input === 'object' && Object.keys(b.input).length ? JSON.stringify(b.input) : ''
        const block: Gathered = { type: b.type, text: b.text ?? '', id: b.id, name: b.name, json }
        if (b.type === 'tool_use') {
          block.call = this.calls++
          onDelta?.({ toolCall: { index: block.call, name: b.name } })
        }
        this.blocks[event.index] = block
        if (block.text) onDelta?.({ text: block.text })
        return
      }
      case 'content_block_delta': {
        const block = this.blocks[event.index]
        if (!block) throw new CordageError('model_invalid_response', `a content_block_delta for block ${event.index}, which never started`)
        if (event.delta.type === 'text_delta' && event.delta.text) {
          block.text += event.delta.text
          onDelta?.({ text: event.delta.text })
        } else if (event.delta.type === 'input_json_delta' && event.delta.partial_json) {
          block.json += event.delta.partial_json
          // Only the model's own tool calls are previewed (not server tools such as web search).
          if (block.call !== undefined) onDelta?.({ toolCall: { index: block.call, argsDelta: event.delta.partial_json } })
        }
        return
      }
      case 'message_delta':
        if (event.delta.stop_reason) this.stop = event.delta.stop_reason
        // Usage in message_delta is cumulative.
        for (const [k, v] of Object.entries(event.usage ?? {})) if (v != null) (this.usage as Record<string, number>)[k] = v
        return
      case 'message_stop':
        this.complete = true
        return
      case 'error':
        throw new CordageError(
          TransientErrors.has(event.error.type) ? 'model_transient' : 'model_permanent',
          `the server reported an error mid-stream (${event.error.type}): ${event.error.message}`,
        )
      default:
      // content_block_stop and ping carry nothing to keep.
    }
  }

  read(message: z.infer<typeof Message>): void {
    this.model = message.model
    this.usage = { ...message.usage }
    this.stop = message.stop_reason ?? 'end_turn'
    for (const b of message.content)
      this.blocks.push({
        type: b.type,
        text: b.text ?? '',
        id: b.id,
        name: b.name,
        json: b.type === 'tool_use' ? JSON.stringify(b.input ?? {}) : '',
      })
    this.complete = true
  }

  result(prices: Prices, configuredModel: string, askUserOffered: boolean): ModelResponse {
    if (this.stop === 'refusal') throw new CordageError('model_permanent', 'the model declined to answer (stop_reason refusal)')
    if (this.stop === 'pause_turn')
      throw new CordageError(
        'model_permanent',
        'the API paused a long server-tool turn (stop_reason pause_turn), which this adapter does not continue; leave server tools out of extraBody',
      )
    const blocks = this.blocks.filter((b) => b !== undefined)
    const text = blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('')
    const calls: ReceivedCall[] = blocks
      .filter((b) => b.type === 'tool_use')
      .map((b) => ({ id: b.id, name: b.name ?? '', argsText: b.json }))
    // A cut-off answer must not pass for a final one. Cut-off tool calls go on: their input fails to
    // parse, and the model hears about it.
    if (this.stop === 'max_tokens' && calls.length === 0)
      throw new CordageError('model_permanent', 'the answer was cut off at max_tokens; raise maxTokens, or ask for shorter answers')
    if (calls.some((c) => !c.name)) throw new CordageError('model_invalid_response', 'a tool_use block arrived without a name')
    const input = this.usage.input_tokens ?? 0
    const cachedInput = this.usage.cache_read_input_tokens ?? 0
    const cacheWrite = this.usage.cache_creation_input_tokens ?? 0
    const output = this.usage.output_tokens ?? 0
    return {
      decision: decisionOf(text, calls, askUserOffered),
      usage: {
        inputTokens: input + cachedInput + cacheWrite,
        outputTokens: output,
        costUsd: costOf({ input, cachedInput, cacheWrite, output }, prices),
      },
      model: this.model ?? configuredModel,
    }
  }
}
