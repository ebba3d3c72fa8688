/**
 * A local Messages API with extended thinking on, as the real API enforces it: the request must ask for
 * thinking (`{ type: 'enabled', budget_tokens }`, at least 1024 and under max_tokens); answers open with
 * signed `thinking` blocks (and `redacted_thinking` ones on demand), streamed or whole; and a tool-use
 * continuation is refused with a 400 `invalid_request_error` unless its last assistant turn opens with
 * the thinking blocks that turn was given, unchanged. Signatures are HMACs under a key of the server's
 * own, so a thinking text changed on the way back fails like a forged one.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isDeepStrictEqual } from 'node:util'
import { AnthropicProtocol } from './anthropic-wire.ts'
import { sse } from './protocol.ts'
import { pieces } from './reply.ts'

export interface ThinkingReply {
  /** The thinking block's text; every answer has one. */
  thinking: string
  /** A redacted_thinking block before it. */
  redacted?: boolean
  text?: string
  toolCalls?: { name: string; args: Record<string, unknown> }[]
}

type Block = Record<string, any>
interface Refusal {
  request: number
  message: string
}

export class ThinkingServer {
  readonly requests: { body: any }[] = []
  /** The 400s served, in order, with the message the API would give. */
  readonly refusals: Refusal[] = []
  private readonly key = randomBytes(32)
  private readonly redacted = new Set<string>()
  /** The reasoning blocks issued with each tool_use id: what its continuation must carry back. */
  private readonly issued = new Map<string, Block[]>()
  private served = 0

  private constructor(
    private readonly server: Server,
    private readonly apiKey: string,
    private readonly replies: ThinkingReply[],
  ) {}

  static async start(apiKey: string, replies: ThinkingReply[]): Promise<ThinkingServer> {
    const server = createServer()
    const api = new ThinkingServer(server, apiKey, [...replies])
    server.on('request', (req, res) => void api.handle(req, res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return api
  }

  get baseUrl(): string {
    const { address, port } = this.server.address() as AddressInfo
    return `http://${address}:${port}`
  }

  queue(...replies: ThinkingReply[]): this {
    this.replies.push(...replies)
    return this
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  sign(thinking: string): string {
    return createHmac('sha256', this.key).update(thinking).digest('base64')
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    if (req.method !== 'POST' || req.url !== '/v1/messages') return send(res, 404, error('not_found_error', `Not found: ${req.url}`))
    let body: any
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      return send(res, 400, error('invalid_request_error', 'We could not parse the JSON body of your request.'))
    }
    this.requests.push({ body })
    const refused = AnthropicProtocol.authenticate(req.headers, this.apiKey)
    if (refused) return send(res, refused.status, refused.body)
    const problem = this.check(body) ?? AnthropicProtocol.check(withoutReasoning(body), req.headers)
    if (problem) {
      this.refusals.push({ request: this.requests.length, message: problem })
      return send(res, 400, error('invalid_request_error', problem))
    }
    const reply = this.replies.shift()
    if (!reply) return send(res, 400, error('invalid_request_error', `scripted server: no reply left for request ${this.requests.length}`))
    const n = ++this.served
    const reasoning: Block[] = []
    if (reply.redacted) {
      const data = randomBytes(48).toString('base64')
      this.redacted.add(data)
      reasoning.push({ type: 'redacted_thinking', data })
    }
    reasoning.push({ type: 'thinking', thinking: reply.thinking, signature: this.sign(reply.thinking) })
    const uses = (reply.toolCalls ?? []).map((c, i) => ({ type: 'tool_use', id: `toolu_${n}${i}`, name: c.name, input: c.args }))
    for (const u of uses) this.issued.set(u.id, reasoning)
    const content = [...reasoning, ...(reply.text ? [{ type: 'text', text: reply.text }] : []), ...uses]
    const stop = uses.length ? 'tool_use' : 'end_turn'
    const usage = { input_tokens: 100, output_tokens: 20 }
    if (!body.stream)
      return send(res, 200, { id: `msg_${n}`, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stop, usage })
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    const message = { id: `msg_${n}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, usage }
    res.write(sse({ type: 'message_start', message }, 'message_start'))
    for (const [index, block] of content.entries()) res.write(streamed(block, index).join(''))
    res.write(
      sse({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }, 'message_delta'),
    )
    res.end(sse({ type: 'message_stop' }, 'message_stop'))
  }

  /** What the API says of a request with thinking on, or undefined when it takes it. */
  private check(body: any): string | undefined {
    const t = body?.thinking
    if (t?.type !== 'enabled' || !Number.isInteger(t.budget_tokens)) return 'thinking: this model is served with thinking enabled only'
    if (t.budget_tokens < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
    if (t.budget_tokens >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`'
    const messages: any[] = Array.isArray(body.messages) ? body.messages : []
    for (const [i, m] of messages.entries())
      for (const [j, b] of (Array.isArray(m.content) ? m.content : []).entries()) {
        const where = `messages.${i}.content.${j}`
        if (b.type === 'thinking') {
          const extra = Object.keys(b).find((k) => !['type', 'thinking', 'signature'].includes(k))
          if (extra) return `${where}.thinking.${extra}: Extra inputs are not permitted`
          if (typeof b.signature !== 'string' || b.signature !== this.sign(String(b.thinking)))
            return `${where}: Invalid \`signature\` in \`thinking\` block`
        } else if (b.type === 'redacted_thinking') {
          if (!this.redacted.has(b.data)) return `${where}: Invalid \`data\` in \`redacted_thinking\` block`
        }
      }
    // A tool-use continuation: the last assistant turn must open with the thinking it was given.
    const i = messages.length - 2
    const last = messages[i]
    const results = (messages.at(-1)?.content ?? []).filter?.((b: Block) => b.type === 'tool_result') ?? []
    if (last?.role !== 'assistant' || results.length === 0) return undefined
    const content: Block[] = Array.isArray(last.content) ? last.content : []
    const first = content[0]?.type
    if (first !== 'thinking' && first !== 'redacted_thinking')
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`
    const use = content.find((b) => b.type === 'tool_use')
    const given = use && this.issued.get(use.id)
    const sent = content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking')
    if (given && !isDeepStrictEqual(sent, given))
      return `messages.${i}: the thinking blocks of this turn are not the ones the model gave with ${use.id}`
    return undefined
  }
}

/** The request with thinking blocks taken out, for the Messages rules that do not concern them. */
function withoutReasoning(body: any): any {
  const messages = body.messages.map((m: any) =>
    Array.isArray(m.content)
      ? { ...m, content: m.content.filter((b: Block) => b.type !== 'thinking' && b.type !== 'redacted_thinking') }
      : m,
  )
  return { ...body, messages }
}

/** One content block as stream events, the way the API streams each type. */
function streamed(block: Block, index: number): string[] {
  const start = (content_block: Block) => sse({ type: 'content_block_start', index, content_block }, 'content_block_start')
  const delta = (d: Block) => sse({ type: 'content_block_delta', index, delta: d }, 'content_block_delta')
  const out: string[] = []
  if (block.type === 'redacted_thinking') out.push(start(block))
  else if (block.type === 'thinking') {
    out.push(start({ type: 'thinking', thinking: '', signature: '' }))
    for (const piece of pieces(block.thinking, 12)) out.push(delta({ type: 'thinking_delta', thinking: piece }))
    out.push(delta({ type: 'signature_delta', signature: block.signature }))
  } else if (block.type === 'text') {
    out.push(start({ type: 'text', text: '' }))
    for (const piece of pieces(block.text, 12)) out.push(delta({ type: 'text_delta', text: piece }))
  } else {
    out.push(start({ type: 'tool_use', id: block.id, name: block.name, input: {} }))
    for (const piece of pieces(JSON.stringify(block.input), 7)) out.push(delta({ type: 'input_json_delta', partial_json: piece }))
  }
  out.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'))
  return out
}

const error = (type: string, message: string) => ({ type: 'error', error: { type, message } })

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}
