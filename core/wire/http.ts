/**
 * @module wire/http
 * One HTTP request to a model provider, with the guarantees every adapter owes the kernel: the caller's
 * signal aborts it, silence for `timeoutMs` (before the headers or between two stream chunks) ends it,
 * and every failure comes out as a classified CordageError with secrets redacted.
 */
import { CordageError } from '../contracts/errors.ts'
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
  /** Added to a 401/403 message, for example which variable the key came from. */
  authHint?: string
  /** Added to a 404 message, for example the URL requested and how the base URL is meant to end. */
  notFoundHint?: string
}

/** What {@link HttpCall.checked} checks a payload with: a zod schema, or anything with its `safeParse`. */
export interface WireSchema<T> {
  safeParse(
    value: unknown,
  ): { success: true; data: T } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } }
}

/** Status codes worth trying again: the set the official OpenAI and Anthropic SDKs retry. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/** setTimeout takes at most this; more silently becomes 1 ms. */
export const MaxTimerMs = 2_147_483_647

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
      // A redirect is not followed: the key would go along to wherever it points.
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: this.controller.signal,
        redirect: 'manual',
      })
    } catch (error) {
      throw this.failure(error)
    }
    this.touch()
    if (!response.ok) {
      const error = await this.statusError(response)
      throw this.options.signal.aborted ? this.options.signal.reason : error
    }
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
    let text = ''
    try {
      // Read piece by piece, so a slow body that keeps arriving is not taken for silence.
      const decoder = new TextDecoder()
      if (response.body)
        for await (const chunk of this.touching(response.body as unknown as AsyncIterable<Uint8Array>))
          text += decoder.decode(chunk, { stream: true })
      text += decoder.decode()
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

  /** `text` (a stream event's data) read as JSON; `what` names it for the error, for example "a stream chunk". */
  parse(text: string, what: string): unknown {
    try {
      return JSON.parse(text)
    } catch {
      throw this.invalid(`${what} that is not JSON: ${text.slice(0, 120)}`)
    }
  }

  /**
   * `value` as `schema` reads it, or model_invalid_response naming the first place it does not fit;
   * `what` says what it should have been, for example "a completion that does not fit the Chat
   * Completions format".
   */
  checked<T>(schema: WireSchema<T>, value: unknown, what: string): T {
    const result = schema.safeParse(value)
    if (result.success) return result.data
    const issue = result.error.issues[0]
    throw this.invalid(`${what}: ${issue.path.map(String).join('.')}: ${issue.message}`)
  }

  /** A stream that closed before the answer in it was whole: another attempt may get all of it. */
  incomplete(): CordageError {
    return new CordageError('model_transient', `${this.options.label}: the stream ended before the answer was complete`, {
      data: { reason: 'incomplete_stream' },
    })
  }

  /** What to throw for an exception from fetch or from reading the body. */
  failure(error: unknown): unknown {
    if (this.options.signal.aborted) return this.options.signal.reason
    if (CordageError.is(error)) return error
    if (this.timedOut)
      return new CordageError('model_transient', `${this.options.label} sent nothing for ${this.options.timeoutMs} ms`, {
        data: { reason: 'timeout' },
      })
    const cause = (error as { cause?: { code?: string; message?: string } })?.cause
    // fetch refuses a request it cannot build (a header value it cannot carry) with a bare TypeError:
    // sending it again fails the same way.
    if (error instanceof TypeError && !cause)
      return new CordageError(
        'model_permanent',
        this.options.redactor.text(`${this.options.label}: the request could not be sent (${error.message})`),
      )
    const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))
    return new CordageError('model_transient', this.options.redactor.text(`${this.options.label}: the connection failed (${why})`), {
      data: { reason: 'network' },
    })
  }

  dispose(): void {
    clearTimeout(this.timer)
    this.options.signal.removeEventListener('abort', this.onAbort)
  }

  private touch(): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(
      () => {
        this.timedOut = true
        this.controller.abort(new Error('timeout'))
      },
      Math.min(this.options.timeoutMs, MaxTimerMs),
    )
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
    // The server may say outright whether a retry can help (x-should-retry, as the official SDKs honour).
    const should = response.headers.get('x-should-retry')
    const transient = should === 'true' ? true : should === 'false' ? false : isTransientStatus(status)
    const detail =
      status >= 300 && status < 400
        ? `a redirect to ${response.headers.get('location') ?? '(no location)'}, which is not followed; set baseUrl to where it points`
        : providerMessage(text)
    const hint =
      status === 401 || status === 403
        ? ` (${this.options.authHint ?? 'check the API key'})`
        : status === 404
          ? ` (${this.options.notFoundHint ?? 'check baseUrl and model'})`
          : ''
    const message = this.options.redactor.text(`${this.options.label} answered ${status}${detail ? `: ${detail}` : ''}${hint}`)
    return new CordageError(transient ? 'model_transient' : 'model_permanent', message, {
      data: { status, retryAfterMs: transient ? retryAfterMs(response.headers) : undefined },
    })
  }
}

/** The human part of an error body, in the shapes providers use (OpenAI, Anthropic, vLLM, FastAPI). */
export function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown }
    const candidate = typeof body.error === 'object' ? body.error?.message : (body.error ?? body.message ?? body.detail)
    if (typeof candidate === 'string') return candidate.slice(0, 500)
  } catch {
    // Not JSON: show the start of it.
  }
  return text.trim().slice(0, 300)
}

/** `path` appended to the path of `base` with exactly one slash; a query on `base` stays a query. */
export function joinUrl(base: string, path: string): string {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
  return url.toString()
}

/** A URL fit for messages: no user, password or query (any may hold a secret). */
export function shownUrl(value: string): string {
  const url = new URL(value)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}
