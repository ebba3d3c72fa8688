/**
 * A local HTTP server that speaks a model provider's real wire protocol (OpenAI Chat Completions or
 * Anthropic Messages) and answers from a script, with faults on demand. The adapters are tested against
 * it exactly as they would talk to the provider: same paths, headers, bodies, streams and error shapes.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AnthropicProtocol } from './anthropic-wire.ts'
import { OpenAIProtocol } from './openai-wire.ts'
import type { Protocol } from './protocol.ts'
import type { Fault, ScriptedReply } from './reply.ts'

export type { ScriptedReply, Fault } from './reply.ts'

export interface ProviderServerOptions {
  protocol: 'openai' | 'anthropic'
  /** Requests must carry this key (as the provider expects it), or get the provider's 401. */
  apiKey?: string
  port?: number
  host?: string
  replies?: ScriptedReply[]
  /** Keep answering with the last reply once the script is used up (default: refuse with a 400). */
  repeatLast?: boolean
  /** Start the script over once it is used up: one scripted run after another (the dev tool does). */
  loop?: boolean
}

export interface RecordedRequest {
  path: string
  headers: IncomingHttpHeaders
  body: any
}

const protocols: Record<ProviderServerOptions['protocol'], Protocol> = { openai: OpenAIProtocol, anthropic: AnthropicProtocol }

export class ProviderServer {
  readonly requests: RecordedRequest[] = []
  /** Responses the client hung up on before they were finished (it was cancelled or timed out). */
  hangups = 0
  private readonly replies: ScriptedReply[]
  private served = 0

  private constructor(
    private readonly server: Server,
    private readonly protocol: Protocol,
    private readonly options: ProviderServerOptions,
  ) {
    this.replies = [...(options.replies ?? [])]
  }

  static async start(options: ProviderServerOptions): Promise<ProviderServer> {
    const server = createServer()
    const provider = new ProviderServer(server, protocols[options.protocol], options)
    server.on('request', (req, res) => void provider.handle(req, res))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve)
    })
    return provider
  }

  get origin(): string {
    const { address, port } = this.server.address() as AddressInfo
    return `http://${address}:${port}`
  }

  /** The base URL as the provider's clients take it: OpenAI's includes /v1, Anthropic's does not. */
  get baseUrl(): string {
    return this.protocol.name === 'openai' ? `${this.origin}/v1` : this.origin
  }

  /** Add answers to the end of the script. */
  queue(...replies: ScriptedReply[]): this {
    this.replies.push(...replies)
    return this
  }

  /** Answers not served yet. */
  get pending(): number {
    return this.replies.length
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const p = this.protocol
    res.on('close', () => {
      if (!res.writableFinished) this.hangups++
    })
    const text = await readBody(req)
    if (req.method !== 'POST' || req.url?.split('?')[0] !== p.path)
      return send(res, 404, p.error(404, `Not found: ${req.method} ${req.url}`))
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      return send(res, 400, p.error(400, 'We could not parse the JSON body of your request.'))
    }
    this.requests.push({ path: req.url, headers: req.headers, body })
    if (this.options.apiKey !== undefined) {
      const refused = p.authenticate(req.headers, this.options.apiKey)
      if (refused) return send(res, refused.status, refused.body)
    }
    const problem = p.check(body, req.headers)
    if (problem) return send(res, 400, p.error(400, problem))
    if (this.options.loop && this.replies.length === 0) this.replies.push(...(this.options.replies ?? []))
    const reply = this.replies.length > 1 || !this.options.repeatLast ? this.replies.shift() : this.replies[0]
    if (!reply) return send(res, 400, p.error(400, `scripted server: no reply left for request ${this.requests.length}`))
    const n = ++this.served
    const fault: Fault = reply.fault ?? {}
    if (fault.dropBeforeHeaders) return void req.socket.destroy()
    if (fault.firstByteDelayMs) await delay(fault.firstByteDelayMs, res)
    if (res.destroyed) return
    if (fault.status) {
      return send(
        res,
        fault.status,
        p.error(fault.status, fault.message ?? `scripted fault ${fault.status}`, fault),
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      )
    }
    if (!body.stream || reply.ignoreStream) {
      const json = JSON.stringify(p.json(reply, body, n))
      if (fault.dropAfter !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(json)) })
        res.write(json.slice(0, Math.floor(json.length / 2)))
        return void setTimeout(() => res.socket?.destroy(), 5)
      }
      return send(res, 200, JSON.parse(json))
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' })
    res.flushHeaders()
    const messages = p.stream(reply, body, n)
    for (const [i, message] of messages.entries()) {
      if (fault.dropAfter === i) return void res.socket?.destroy()
      if (fault.streamErrorAfter === i) return void res.end(p.streamError(fault))
      if (fault.corruptAfter === i) return void res.end('data: {"choices": [ this is not json\n\n')
      if (res.destroyed) return
      res.write(message)
      // Separate writes so the client sees pieces arrive, as from a real server.
      await new Promise((r) => setImmediate(r))
      if (fault.gapMs) await delay(fault.gapMs, res)
      if (fault.stallAfter === i + 1 && fault.stallMs) await delay(fault.stallMs, res)
    }
    res.end()
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', () => resolve(''))
  })
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** Wait, but stop early when the client hangs up (it timed out or was cancelled). */
function delay(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    res.once('close', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}
