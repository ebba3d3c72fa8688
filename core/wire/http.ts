/**
 * @module wire/http
 * One HTTP request to a model provider, with the guarantees every adapter owes the kernel: the caller's
 * signal aborts it, silence for `timeoutMs` (before the headers or between two stream chunks) ends it,
 * and every failure comes out as a classified CordageError with secrets redacted.
 */
import { CordageError } from '../errors.ts'
import type { Redactor } from './redact.ts'
import { retryAfterMs } from './retry-after.ts'
import { readSse, type SseMessage } from './sse.ts'

export interface HttpCallOptions {
  /** Who we talk to, for messages, for example "OpenAI-compatible server at http://127.0.0.1:4010/v1". */
  label: string
  timeoutMs: number
  /** The kernel's signal: cancellation and the run deadline. */
  signal: AbortSignal
  redactor: Redactor
}

/** Status codes worth trying again: the same set the official SDKs retry. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500
}

export class HttpCall {
  private readonly controller = new AbortController()
  private timer: NodeJS.Timeout | undefined
  private timedOut = false
  private readonly onAbort = () => this.controller.abort(this.options.signal.reason)

  constructor(private readonly options: HttpCallOptions) {
    if (options.signal.aborted) this.onAbort()
    else options.signal.addEventListener('abort', this.onAbort, { once: true })
  }

  /** POST a JSON body. Resolves with a 2xx response; anything else rejects, classified. */
  async post(url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
    this.touch()
    let response: Response
    try {
      response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: this.controller.signal })
    } catch (error) {
      throw this.failure(error)
    }
    this.touch()
    if (!response.ok) throw await this.statusError(response)
    return response
  }

  /** The server-sent events of a streamed response. Rejects, classified, when the connection breaks. */
  async *events(response: Response): AsyncGenerator<SseMessage> {
    if (!response.body) throw new CordageError('model_transient', `${this.options.label} sent an empty body`)
    try {
      for await (const message of readSse(this.touching(response.body as unknown as AsyncIterable<Uint8Array>))) yield message
    } catch (error) {
      throw this.failure(error)
    }
  }

  /** The JSON body of a non-streamed response. */
  async json(response: Response): Promise<unknown> {
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      throw this.failure(error)
    }
    try {
      return JSON.parse(text)
    } catch {
      throw this.invalid(`a body that is not JSON: ${text.slice(0, 200)}`)
    }
  }

  /** A response the adapter cannot read: the provider broke its own protocol. */
  invalid(what: string): CordageError {
    return new CordageError('model_invalid_response', this.options.redactor.text(`${this.options.label} sent ${what}`))
  }

  /** What to throw for an exception from fetch or from reading the body. */
  failure(error: unknown): unknown {
    if (this.options.signal.aborted) return this.options.signal.reason
    if (CordageError.is(error)) return error
    if (this.timedOut) return new CordageError('model_transient', `${this.options.label} sent nothing for ${this.options.timeoutMs} ms`, { data: { reason: 'timeout' } })
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause
    const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
    return new CordageError('model_transient', this.options.redactor.text(`${this.options.label}: the connection failed (${why})`), { data: { reason: 'network' } })
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.options.signal.removeEventListener('abort', this.onAbort)
  }

  private touch(): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timedOut = true
      this.controller.abort(new Error('timeout'))
    }, this.options.timeoutMs)
  }

  private async *touching(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of source) {
      this.touch()
      yield chunk
    }
  }

  private async statusError(response: Response): Promise<CordageError> {
    let text = ''
    try {
      text = await response.text()
    } catch {
      // The status says enough.
    }
    const status = response.status
    const transient = isTransientStatus(status)
    const detail = providerMessage(text)
    const hint = status === 401 || status === 403 ? ' (check the API key: the plugin reads it from the variable named in apiKeyEnv)'
      : status === 404 ? ' (check baseUrl and model)'
      : ''
    const message = this.options.redactor.text(`${this.options.label} answered ${status}${detail ? `: ${detail}` : ''}${hint}`)
    return new CordageError(transient ? 'model_transient' : 'model_permanent', message, { data: { status, retryAfterMs: transient ? retryAfterMs(response.headers) : undefined } })
  }
}

/** The human part of an error body, in the shapes providers use (OpenAI, Anthropic, vLLM, FastAPI). */
export function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown }
    const candidate = typeof body.error === 'object' ? body.error?.message : body.error ?? body.message ?? body.detail
    if (typeof candidate === 'string') return candidate.slice(0, 500)
  } catch {
    // Not JSON: show the start of it.
  }
  return text.trim().slice(0, 300)
}

/** `base` and `path` joined with exactly one slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
}
