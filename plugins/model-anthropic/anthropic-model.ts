/**
 * The `model` service over the Anthropic Messages API. One `respond` is one HTTP attempt: the kernel
 * retries transient failures (with backoff, honouring Retry-After through `data.retryAfterMs`) and
 * records each attempt, so this class never loops.
 */
import type { ModelRequest, ModelResponse, ModelService } from 'cordage'
import { checkExtraBody, isJsonAnswer, offeredTools, OwnedBodyKeys, ProviderClient } from 'cordage/wire'
import { OfferedTools } from './history-tools.ts'
import { DefaultBaseUrl, type Config } from './manifest.ts'
import { messagesRequest } from './request.ts'
import { Message, MessageAnswer, StreamEvent } from './response.ts'
import { checkThinking } from './thinking.ts'

export class AnthropicMessagesModel implements ModelService {
  readonly baseUrl: string
  private readonly client: ProviderClient
  private readonly offered = new OfferedTools()

  constructor(
    private readonly config: Config,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const api = {
      plugin: 'model-anthropic',
      baseUrlEnv: 'ANTHROPIC_BASE_URL',
      defaultBaseUrl: DefaultBaseUrl,
      path: 'v1/messages',
      auth: (key: string) => ({ 'x-api-key': key }),
      headers: { 'anthropic-version': config.version },
      baseUrlShape: 'an Anthropic baseUrl does not end in /v1',
    }
    checkThinking(config)
    checkExtraBody(
      'model-anthropic',
      config.extraBody,
      { ...OwnedBodyKeys, system: 'the context plugin makes the system prompt', max_tokens: 'set maxTokens instead' },
      { temperature: { key: 'temperature', value: config.temperature } },
    )
    this.client = new ProviderClient(api, config, env)
    this.baseUrl = this.client.baseUrl
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const { tools, askUserOffered } = offeredTools(request.tools, this.config.askUser && request.purpose !== 'summary')
    this.offered.remember(tools)
    const body = messagesRequest(this.config, request.messages, tools, (names) => this.offered.definitions(names))
    return this.client.post(body, request.signal, async (response, call) => {
      const answer = new MessageAnswer()
      if (isJsonAnswer(response, this.config.stream)) {
        answer.read(call.checked(Message, await call.json(response), 'a message that does not fit the Messages format'))
      } else {
        for await (const message of call.events(response)) {
          const json = call.parse(message.data, 'a stream event')
          // Event types added to the API later are skipped, as the API's versioning policy asks of clients.
          if (!StreamEvent.options.some((o) => o.shape.type.value === (json as { type?: unknown })?.type)) continue
          answer.add(call.checked(StreamEvent, json, `a ${message.event} event that does not fit the Messages format`), request.onDelta)
          if (answer.complete) break
        }
        if (!answer.complete) throw call.incomplete()
      }
      return answer.result(this.config.prices, this.config.model, askUserOffered)
    })
  }
}
