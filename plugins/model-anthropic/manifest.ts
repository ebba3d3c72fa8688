import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { PricesSchema, type Prices } from 'cordage/wire'

export interface Config {
  model: string
  baseUrl?: string
  apiKeyEnv: string
  version: string
  maxTokens: number
  timeoutMs: number
  headers: Record<string, string>
  stream: boolean
  temperature?: number
  askUser: boolean
  prices: Prices
  extraBody: Record<string, unknown>
}

export const DefaultBaseUrl = 'https://api.anthropic.com'

export default {
  name: 'model-anthropic',
  version: '1.0.0',
  description: 'Anthropic Messages API: streaming, tool_use blocks, usage and cost.',
  provides: { model: '1.1.0' },
  // The variable apiKeyEnv names holds the key: every run scrubs its value from what it records.
  secrets: ['apiKeyEnv'],
  config: Schema.object({
    model: Schema.string().required().description('Model name, for example claude-sonnet-4-5.'),
    baseUrl: Schema.string().description(`API base URL, without /v1. Default: $ANTHROPIC_BASE_URL, else ${DefaultBaseUrl}.`),
    apiKeyEnv: Schema.string()
      .default('ANTHROPIC_API_KEY')
      .description('Name of the environment variable holding the API key. The key itself never goes in a preset.'),
    version: Schema.string().default('2023-06-01').description('The anthropic-version header.'),
    maxTokens: Schema.natural()
      .min(1)
      .default(4096)
      .description('Upper bound on output tokens per call (max_tokens; the API requires one).'),
    timeoutMs: Schema.natural()
      .min(1)
      .max(2_147_483_647)
      .default(60_000)
      .description('Give up on an attempt when the server sends nothing for this long (before the first byte or between stream events).'),
    headers: Schema.dict(Schema.string()).default({}).description('Extra HTTP headers, for example anthropic-beta.'),
    stream: Schema.boolean()
      .default(true)
      .description('Stream the answer (server-sent events). Listeners of model/delta see text as it arrives.'),
    temperature: Schema.number().min(0).max(1).description('Sampling temperature.'),
    askUser: Schema.boolean()
      .default(true)
      .description('Offer the model an ask_user tool; calling it pauses the run until the user answers.'),
    prices: PricesSchema.description('Price table for the cost budget; without it the cost is 0.'),
    extraBody: Schema.dict(Schema.any()).default({}).description('Extra request fields (for example metadata or tool_choice).'),
  }),
} satisfies Manifest
