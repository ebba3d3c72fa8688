/**
 * A Messages API answer, assembled from stream events (or read from one message body), checked with
 * zod at the trust boundary. Content blocks are gathered by index; a tool_use block's input arrives as
 * JSON pieces and is parsed only once the message is complete. Thinking and redacted thinking blocks
 * are kept whole, signature included, as the answer's `reasoning` (thinking.ts).
 */
import { CordageError, type ModelDelta, type ModelResponse } from 'cordage'
import { costOf, decisionOf, type Prices, type ReceivedCall } from 'cordage/wire'
import { z } from 'zod'
import { reasoningOf, type ReasoningBlock } from './thinking.ts'

const WireUsage = z.object({
  input_tokens: z.number().int().min(0).nullish(),
  output_tokens: z.number().int().min(0).nullish(),
  cache_read_input_tokens: z.number().int().min(0).nullish(),
  cache_creation_input_tokens: z.number().int().min(0).nullish(),
})
const Block = z.object({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  thinking: z.string().optional(),
  signature: z.string().optional(),
  data: z.string().optional(),
})
/**
 * Thinking blocks must arrive whole: they go back to the API as they came, and it checks them. A block
 * that opens a stream has its signature still to come (signature_delta); a block in a message has it.
 */
const thinkingShape =
  (whole: boolean) =>
  (b: z.infer<typeof Block>, ctx: z.RefinementCtx): void => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message })
    if (b.type === 'thinking') {
      if (b.thinking === undefined) issue('thinking', 'a thinking block without its thinking text')
      if (whole && !b.signature) issue('signature', 'a thinking block without its signature')
    } else if (b.type === 'redacted_thinking' && !b.data) issue('data', 'a redacted_thinking block without its data')
  }
const ContentBlock = Block.superRefine(thinkingShape(true))
const StartBlock = Block.superRefine(thinkingShape(false))
const Delta = z
  .object({
    type: z.string(),
    text: z.string().optional(),
    partial_json: z.string().optional(),
    thinking: z.string().optional(),
    signature: z.string().optional(),
  })
  .superRefine((d, ctx) => {
    if (d.type === 'thinking_delta' && d.thinking === undefined)
      ctx.addIssue({ code: 'custom', path: ['thinking'], message: 'a thinking_delta without thinking text' })
    if (d.type === 'signature_delta' && !d.signature)
      ctx.addIssue({ code: 'custom', path: ['signature'], message: 'a signature_delta without a signature' })
  })

export const StreamEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message_start'), message: z.object({ model: z.string().optional(), usage: WireUsage.optional() }) }),
  z.object({ type: z.literal('content_block_start'), index: z.number().int().min(0), content_block: StartBlock }),
  z.object({ type: z.literal('content_block_delta'), index: z.number().int().min(0), delta: Delta }),
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
  thinking?: string
  signature?: string
  data?: string
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
        const block: Gathered = { type: b.type, text: b.text ?? '', id: b.id, name: b.name, json, ...reasoningFields(b) }
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
        } else if (event.delta.type === 'thinking_delta' || event.delta.type === 'signature_delta') {
          if (block.type !== 'thinking')
            throw new CordageError(
              'model_invalid_response',
              `a ${event.delta.type} for block ${event.index}, which is a ${block.type} block`,
            )
          if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking!
          // The signature arrives whole, just before the block stops (the SDK takes it the same way).
          else block.signature = event.delta.signature
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
        ...reasoningFields(b),
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
    if (this.stop === 'model_context_window_exceeded' && calls.length === 0)
      throw new CordageError(
        'model_permanent',
        "the answer was cut off at the model's context window (stop_reason model_context_window_exceeded); give the context a smaller budget",
      )
    if (calls.some((c) => !c.name)) throw new CordageError('model_invalid_response', 'a tool_use block arrived without a name')
    const reasoning = reasoningOf(blocks.flatMap(reasoningBlock))
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
      ...(reasoning ? { reasoning } : {}),
    }
  }
}

const reasoningFields = (b: z.infer<typeof Block>): Partial<Gathered> =>
  b.type === 'thinking'
    ? { thinking: b.thinking ?? '', ...(b.signature ? { signature: b.signature } : {}) }
    : b.type === 'redacted_thinking'
      ? { data: b.data }
      : {}

/** A gathered block in the exact shape the API takes back, or nothing when it is no thinking block. */
function reasoningBlock(b: Gathered): ReasoningBlock[] {
  if (b.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: b.data! }]
  if (b.type !== 'thinking') return []
  if (!b.signature)
    throw new CordageError(
      'model_invalid_response',
      'a thinking block ended without its signature, so it could not be sent back to the API',
    )
  return [{ type: 'thinking', thinking: b.thinking ?? '', signature: b.signature }]
}
