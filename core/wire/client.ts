/**
 * @module wire/client
 * An adapter's client of its provider's HTTP API: what it works out once, when the plugin starts (the
 * endpoint, checked; the URL it posts to; the key in the headers and in nothing it lets out; a label and
 * hints for messages), and the frame of every call (one HttpCall, disposed however it ends, whatever it
 * throws classified and redacted). What the body says and how the answer is read stay the adapter's.
 */
import type { AdapterConfig } from './adapter-config.ts'
import { endpoint } from './endpoint.ts'
import { HttpCall, type HttpCallOptions, joinUrl, shownUrl } from './http.ts'
import { Redactor } from './redact.ts'

/** What a provider's API is, whichever preset uses it. */
export interface ProviderApi {
  /** The plugin name, for messages. */
  plugin: string
  /** The variable read when the preset gives no baseUrl, for example OPENAI_BASE_URL. */
  baseUrlEnv: string
  /** The provider's own API; it needs a key, a local compatible server may not. */
  defaultBaseUrl: string
  /** Where requests go, below the base URL: `chat/completions`, `v1/messages`. */
  path: string
  /** The headers that carry the key, when there is one, for example `{ authorization: 'Bearer …' }`. */
  auth: (key: string) => Record<string, string>
  /** Headers the API wants on every request besides the preset's and the key, for example anthropic-version. */
  headers?: Record<string, string>
  /** How a base URL for this API ends, told with a 404: "an OpenAI-compatible baseUrl usually ends in /v1". */
  baseUrlShape: string
}

/** OpenAI's own API; OpenAI-compatible servers are reached through the preset's baseUrl or OPENAI_BASE_URL. */
export const OpenAIBaseUrl = 'https://api.openai.com/v1'

/**
 * An OpenAI-compatible API at `path` below the base URL (`chat/completions`, `embeddings`): a bearer
 * key, OPENAI_BASE_URL, base URLs that end in /v1. One description for every adapter of that API.
 */
export function openAICompatible(plugin: string, path: string): ProviderApi {
  return {
    plugin,
    baseUrlEnv: 'OPENAI_BASE_URL',
    defaultBaseUrl: OpenAIBaseUrl,
    path,
    auth: (key: string) => ({ authorization: `Bearer ${key}` }),
    baseUrlShape: 'an OpenAI-compatible baseUrl usually ends in /v1',
  }
}

/** The preset's part of the connection. */
export type ConnectionConfig = Pick<AdapterConfig, 'model' | 'baseUrl' | 'apiKeyEnv' | 'timeoutMs' | 'headers'>

export class ProviderClient {
  readonly baseUrl: string
  /** Where every call posts. */
  readonly url: string
  private readonly headers: Record<string, string>
  private readonly redactor: Redactor
  private readonly call: Omit<HttpCallOptions, 'signal'>

  /** Checks the endpoint (see `endpoint`): a wrong preset fails here, when the plugin starts. */
  constructor(api: ProviderApi, config: ConnectionConfig, env: NodeJS.ProcessEnv = process.env) {
    const { baseUrl, key, baseUrlFrom, authHint } = endpoint({
      plugin: api.plugin,
      baseUrl: config.baseUrl,
      baseUrlEnv: api.baseUrlEnv,
      defaultBaseUrl: api.defaultBaseUrl,
      apiKeyEnv: config.apiKeyEnv,
      env,
    })
    this.baseUrl = baseUrl
    this.url = joinUrl(baseUrl, api.path)
    this.headers = { ...config.headers, ...api.headers, ...(key ? api.auth(key) : {}) }
    this.redactor = new Redactor([key])
    this.call = {
      label: `${config.model} at ${shownUrl(baseUrl)}`,
      timeoutMs: config.timeoutMs,
      redactor: this.redactor,
      authHint,
      notFoundHint: `requested ${shownUrl(this.url)} (baseUrl from ${baseUrlFrom}); check the model name, and that ${api.baseUrlShape}`,
    }
  }

  /**
   * POST `body` and give the 2xx response to `read`, with the call to read it through. A failure,
   * `read`'s included, comes out with the key redacted; the call is disposed either way.
   */
  async post<T>(body: unknown, signal: AbortSignal, read: (response: Response, call: HttpCall) => Promise<T>): Promise<T> {
    const call = new HttpCall({ ...this.call, signal })
    try {
      return await read(await call.post(this.url, this.headers, body), call)
    } catch (error) {
      throw this.redactor.error(error)
    } finally {
      call.dispose()
    }
  }
}

/**
 * Whether to read the response as one JSON body rather than as a stream of events: when streaming is
 * off, or when a server that ignores `stream` answered with JSON anyway.
 */
export function isJsonAnswer(response: Response, stream: boolean): boolean {
  return !stream || response.headers.get('content-type')?.includes('application/json') === true
}
