/**
 * The `model` service over Chat Completions. One `respond` is one HTTP attempt: the kernel retries
 * transient failures (with backoff, honouring Retry-After through `data.retryAfterMs`) and records each
 * attempt, so this class never loops.
 */
import type { ModelRequest, ModelResponse, ModelService } from 'cordage'
import { isJsonAnswer, offeredTools, openAICompatible, ProviderClient } from 'cordage/wire'
import type { Config } from './manifest.ts'
import { chatRequest, checkConfig } from './request.ts'
import { ChatAnswer, Chunk, Completion } from './response.ts'

export class OpenAIChatModel implements ModelService {
  readonly baseUrl: string
  private readonly client: ProviderClient

  constructor(
    private readonly config: Config,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    checkConfig(config)
    this.client = new ProviderClient(openAICompatible('model-openai', 'chat/completions'), config, env)
    this.baseUrl = this.client.baseUrl
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const { tools, askUserOffered } = offeredTools(request.tools, this.config.askUser && request.purpose !== 'summary')
    return this.client.post(chatRequest(this.config, request.messages, tools), request.signal, async (response, call) => {
      const answer = new ChatAnswer()
      // A server that ignores `stream` answers with one JSON body: read it as such.
      if (isJsonAnswer(response, this.config.stream)) {
        answer.read(call.checked(Completion, await call.json(response), 'a completion that does not fit the Chat Completions format'))
      } else {
        for await (const message of call.events(response)) {
          if (message.data === '[DONE]') {
            answer.done = true
            break
          }
          const json = call.parse(message.data, 'a stream chunk')
          answer.add(call.checked(Chunk, json, 'a stream chunk that does not fit the Chat Completions format'), request.onDelta)
        }
        if (!answer.complete) throw call.incomplete()
      }
      return answer.result(this.config.prices, this.config.model, askUserOffered)
    })
  }
}
