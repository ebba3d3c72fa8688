import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { PricesSchema, type Prices } from 'cordage/wire'

export interface Config {
  model: string
  baseUrl?: string
  apiKeyEnv: string
  timeoutMs: number
  headers: Record<string, string>
  stream: boolean
  streamUsage: boolean
  maxTokens?: number
  temperature?: number
  askUser: boolean
  prices: Prices
  extraBody: Record<string, unknown>
}

export const DefaultBaseUrl = 'https://api.openai.com/v1'

export default {
  name: 'model-openai',
  version: '1.0.0',
  description: 'OpenAI Chat Completions and compatible servers (DeepSeek, vLLM, Ollama, llama.cpp): streaming, tool calls, usage and cost.',
  provides: { model: '1.1.0' },
  // The variable apiKeyEnv names holds the key: every run scrubs its value from what it records.
  secrets: ['apiKeyEnv'],
  config: Schema.object({
    model: Schema.string().required().description('Model name, for example gpt-4.1-mini (or what your compatible server calls it).'),
    baseUrl: Schema.string().description(`API base URL, up to and including /v1. Default: $OPENAI_BASE_URL, else ${DefaultBaseUrl}.`),
    apiKeyEnv: Schema.string()
      .default('OPENAI_API_KEY')
      .description('Name of the environment variable holding the API key. The key itself never goes in a preset.'),
    timeoutMs: Schema.natural()
      .min(1)
      .max(2_147_483_647)
      .default(60_000)
      .description('Give up on an attempt when the server sends nothing for this long (before the first byte or between stream chunks).'),
    headers: Schema.dict(Schema.string()).default({}).description('Extra HTTP headers, for example OpenAI-Organization.'),
    stream: Schema.boolean()
      .default(true)
      .description('Stream the answer (server-sent events). Listeners of model/delta see text as it arrives.'),
    streamUsage: Schema.boolean()
      .default(true)
      .description('Ask for usage at the end of a stream (stream_options.include_usage). Turn off for servers that refuse it.'),
    maxTokens: Schema.natural().min(1).description('Upper bound on output tokens per call (sent as max_completion_tokens).'),
    temperature: Schema.number().min(0).max(2).description('Sampling temperature.'),
    askUser: Schema.boolean()
      .default(true)
      .description('Offer the model an ask_user tool; calling it pauses the run until the user answers.'),
    prices: PricesSchema.description('Price table for the cost budget; without it the cost is 0.'),
    extraBody: Schema.dict(Schema.any())
      .default({})
      .description('Extra request fields for this server (for example reasoning_effort, or max_tokens for older servers).'),
  }),
} satisfies Manifest
