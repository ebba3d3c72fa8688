/**
 * The `model` service over the Anthropic Messages API. One `respond` is one HTTP attempt: the kernel
 * retries transient failures (with backoff, honouring Retry-After through `data.retryAfterMs`) and
 * records each attempt, so this class never loops.
 */
import { CordageError, type ModelRequest, type ModelResponse, type ModelService } from 'cordage'
import { endpoint, HttpCall, joinUrl, offeredTools, Redactor, shownUrl } from 'cordage/wire'
import { DefaultBaseUrl, type Config } from './manifest.ts'
import { messagesRequest } from './request.ts'
import { Message, MessageAnswer, StreamEvent } from './response.ts'

export class AnthropicMessagesModel implements ModelService {
  readonly baseUrl: string
  private readonly url: string
  private readonly headers: Record<string, string>
  private readonly redactor: Redactor
  private readonly label: string
  private readonly hints: { authHint: string; notFoundHint: string }

  constructor(
    private readonly config: Config,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const { baseUrl, key, baseUrlFrom, authHint } = endpoint({
      plugin: 'model-anthropic',
      baseUrl: config.baseUrl,
      baseUrlEnv: 'ANTHROPIC_BASE_URL',
      defaultBaseUrl: DefaultBaseUrl,
      apiKeyEnv: config.apiKeyEnv,
      env,
    })
    this.baseUrl = baseUrl
    this.url = joinUrl(this.baseUrl, 'v1/messages')
    this.headers = { ...config.headers, 'anthropic-version': config.version, ...(key ? { 'x-api-key': key } : {}) }
    this.redactor = new Redactor([key])
    this.label = `${config.model} at ${shownUrl(this.baseUrl)}`
    this.hints = {
      authHint,
      notFoundHint: `requested ${shownUrl(this.url)} (baseUrl from ${baseUrlFrom}); check the model name, and that an Anthropic baseUrl does not end in /v1`,
    }
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const { tools, askUserOffered } = offeredTools(request.tools, this.config.askUser && request.purpose !== 'summary')
    const call = new HttpCall({
      label: this.label,
      timeoutMs: this.config.timeoutMs,
      signal: request.signal,
      redactor: this.redactor,
      ...this.hints,
    })
    try {
      const response = await call.post(this.url, this.headers, messagesRequest(this.config, request.messages, tools))
      const answer = new MessageAnswer()
      if (!this.config.stream || response.headers.get('content-type')?.includes('application/json')) {
        const body = Message.safeParse(await call.json(response))
        if (!body.success)
          throw call.invalid(
            `a message that does not fit the Messages format: ${body.error.issues[0].path.join('.')}: ${body.error.issues[0].message}`,
          )
        answer.read(body.data)
      } else {
        for await (const message of call.events(response)) {
          let json: unknown
          try {
            json = JSON.parse(message.data)
          } catch {
            throw call.invalid(`a stream event that is not JSON: ${message.data.slice(0, 120)}`)
          }
          // Event types added to the API later are skipped, as the API's versioning policy asks of clients.
          if (!StreamEvent.options.some((o) => o.shape.type.value === (json as { type?: unknown })?.type)) continue
          const event = StreamEvent.safeParse(json)
          if (!event.success)
            throw call.invalid(
              `a ${message.event} event that does not fit the Messages format: ${event.error.issues[0].path.join('.')}: ${event.error.issues[0].message}`,
            )
          answer.add(event.data, request.onDelta)
          if (answer.complete) break
        }
        if (!answer.complete)
          throw new CordageError('model_transient', `${this.label}: the stream ended before the answer was complete`, {
            data: { reason: 'incomplete_stream' },
          })
      }
      return answer.result(this.config.prices, this.config.model, askUserOffered)
    } catch (error) {
      throw this.redactor.error(error)
    } finally {
      call.dispose()
    }
  }
}
