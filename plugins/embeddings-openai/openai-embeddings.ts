/**
 * @module embeddings-openai/openai-embeddings
 * The `embeddings` service over POST {baseUrl}/embeddings. The body is what the official SDK sends for
 * `embeddings.create({ model, input, encoding_format: 'float' })`; the answer is checked (shape, one
 * vector per input, the configured length) and refused whole otherwise.
 */
import { CordageError, checkVectors, type EmbedOptions, type EmbeddingsService } from 'cordage'
import { openAICompatible, ProviderClient } from 'cordage/wire'
import type { Config } from './manifest.ts'
import { EmbeddingList, vectorsOf } from './response.ts'

export class OpenAIEmbeddings implements EmbeddingsService {
  readonly model: string
  readonly dimensions: number
  readonly baseUrl: string
  private readonly client: ProviderClient

  constructor(
    private readonly config: Config,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.model = `openai:${config.model}`
    this.dimensions = config.dimensions
    this.client = new ProviderClient(openAICompatible('embeddings-openai', 'embeddings'), config, env)
    this.baseUrl = this.client.baseUrl
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const signal = options.signal ?? new AbortController().signal
    const out: Float32Array[] = []
    for (let at = 0; at < texts.length; at += this.config.batchSize) {
      if (signal.aborted) throw new CordageError('cancelled', 'embedding was cancelled by its caller')
      out.push(...(await this.batch(texts.slice(at, at + this.config.batchSize), signal)))
    }
    return out
  }

  private batch(input: readonly string[], signal: AbortSignal): Promise<Float32Array[]> {
    const body: Record<string, unknown> = { model: this.config.model, input, encoding_format: 'float' }
    if (this.config.sendDimensions) body.dimensions = this.config.dimensions
    return this.client.post(body, signal, async (response, call) => {
      const list = call.checked(EmbeddingList, await call.json(response), 'an answer that does not fit the embeddings format')
      return checkVectors(vectorsOf(list, input.length), input.length, this.dimensions, `embeddings-openai (${this.config.model})`)
    })
  }
}
