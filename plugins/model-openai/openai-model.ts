/**
 * The `model` service over Chat Completions. One `respond` is one HTTP attempt: the kernel retries
 * transient failures (with backoff, honouring Retry-After through `data.retryAfterMs`) and records each
 * attempt, so this class never loops.
 */
import { CordageError, type ModelRequest, type ModelResponse, type ModelService } from 'cordage'
import { endpoint, HttpCall, joinUrl, offeredTools, Redactor, shownUrl } from 'cordage/wire'
import { DefaultBaseUrl, type Config } from './manifest.ts'
import { chatRequest } from './request.ts'
import { ChatAnswer, Chunk, Completion } from './response.ts'

export class OpenAIChatModel implements ModelService {
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
      plugin: 'model-openai',
      baseUrl: config.baseUrl,
      baseUrlEnv: 'OPENAI_BASE_URL',
      defaultBaseUrl: DefaultBaseUrl,
      apiKeyEnv: config.apiKeyEnv,
      env,
    })
    this.baseUrl = baseUrl
    this.url = joinUrl(this.baseUrl, 'chat/completions')
    this.headers = { ...config.headers, ...(key ? { authorization: `Bearer ${key}` } : {}) }
    this.redactor = new Redactor([key])
    this.label = `${config.model} at ${shownUrl(this.baseUrl)}`
    this.hints = {
      authHint,
      notFoundHint: `requested ${shownUrl(this.url)} (baseUrl from ${baseUrlFrom}); check the model name, and that an OpenAI-compatible baseUrl usually ends in /v1`,
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
      const response = await call.post(this.url, this.headers, chatRequest(this.config, request.messages, tools))
      const answer = new ChatAnswer()
      // A server that ignores `stream` answers with one JSON body: read it as such.
      if (!this.config.stream || response.headers.get('content-type')?.includes('application/json')) {
        const body = Completion.safeParse(await call.json(response))
        if (!body.success)
          throw call.invalid(
            `a completion that does not fit the Chat Completions format: ${body.error.issues[0].path.join('.')}: ${body.error.issues[0].message}`,
          )
        answer.read(body.data)
      } else {
        for await (const message of call.events(response)) {
          if (message.data === '[DONE]') {
            answer.done = true
            break
          }
          let json: unknown
          try {
            json = JSON.parse(message.data)
          } catch {
            throw call.invalid(`a stream chunk that is not JSON: ${message.data.slice(0, 120)}`)
          }
          const chunk = Chunk.safeParse(json)
          if (!chunk.success)
            throw call.invalid(
              `a stream chunk that does not fit the Chat Completions format: ${chunk.error.issues[0].path.join('.')}: ${chunk.error.issues[0].message}`,
            )
          answer.add(chunk.data, request.onDelta)
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
