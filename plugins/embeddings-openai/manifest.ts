import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { AdapterSchema, OpenAIBaseUrl } from 'cordage/wire'

export const DefaultBaseUrl = OpenAIBaseUrl

export interface Config {
  model: string
  dimensions: number
  sendDimensions: boolean
  baseUrl?: string
  apiKeyEnv: string
  timeoutMs: number
  headers: Record<string, string>
  batchSize: number
}

export default {
  name: 'embeddings-openai',
  version: '1.0.0',
  description: 'The embeddings service over an OpenAI-compatible /v1/embeddings API (OpenAI, or a local server that speaks it).',
  provides: { embeddings: '1.0.0' },
  config: Schema.object({
    model: Schema.string()
      .required()
      .description('Embedding model, for example text-embedding-3-small (or what your compatible server calls it).'),
    dimensions: Schema.natural()
      .min(1)
      .max(65_536)
      .required()
      .description("Length of the model's vectors (1536 for text-embedding-3-small). An answer of another length is refused."),
    sendDimensions: Schema.boolean()
      .default(false)
      .description('Also send `dimensions` in the request, for models that can shorten their vectors (text-embedding-3-*).'),
    baseUrl: Schema.string().description(`API base URL, up to and including /v1. Default: $OPENAI_BASE_URL, else ${DefaultBaseUrl}.`),
    apiKeyEnv: AdapterSchema.apiKeyEnv('OPENAI_API_KEY'),
    timeoutMs: Schema.natural()
      .min(1)
      .max(600_000)
      .default(30_000)
      .description('Give up on a request when the server has not answered in this long.'),
    headers: Schema.dict(Schema.string()).default({}).description('Extra HTTP headers, for example OpenAI-Organization.'),
    batchSize: Schema.natural()
      .min(1)
      .max(2048)
      .default(256)
      .description('Texts sent in one request (the OpenAI API takes at most 2,048).'),
  }),
} satisfies Manifest
