import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { AdapterSchema, type AdapterConfig } from 'cordage/wire'

export interface Config extends AdapterConfig {
  version: string
  maxTokens: number
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
    apiKeyEnv: AdapterSchema.apiKeyEnv('ANTHROPIC_API_KEY'),
    version: Schema.string().default('2023-06-01').description('The anthropic-version header.'),
    maxTokens: Schema.natural()
      .min(1)
      .default(4096)
      .description('Upper bound on output tokens per call (max_tokens; the API requires one).'),
    timeoutMs: AdapterSchema.timeoutMs('stream events'),
    headers: Schema.dict(Schema.string()).default({}).description('Extra HTTP headers, for example anthropic-beta.'),
    stream: AdapterSchema.stream,
    temperature: Schema.number().min(0).max(1).description('Sampling temperature.'),
    askUser: AdapterSchema.askUser,
    prices: AdapterSchema.prices,
    extraBody: Schema.dict(Schema.any()).default({}).description('Extra request fields (for example metadata or tool_choice).'),
  }),
} satisfies Manifest
