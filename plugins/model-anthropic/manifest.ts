import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { AdapterSchema, type AdapterConfig } from 'cordage/wire'

export interface Config extends AdapterConfig {
  version: string
  maxTokens: number
  /** Extended thinking, off when absent. */
  thinking?: { budgetTokens: number }
  /** Mark the stable prefix for the API's prompt cache (cache.ts). */
  promptCache: boolean
  promptCacheTtl: '5m' | '1h'
}

/** The smallest thinking budget the API takes. */
export const MinThinkingBudget = 1024

export const DefaultBaseUrl = 'https://api.anthropic.com'

export default {
  name: 'model-anthropic',
  version: '1.1.0',
  description: 'Anthropic Messages API: streaming, tool_use blocks, extended thinking, prompt caching, usage and cost.',
  provides: { model: '1.3.0' },
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
    // A union, so that an absent `thinking` stays absent (thinking off) while one without a budget is refused.
    thinking: Schema.union([
      Schema.object({
        budgetTokens: Schema.natural()
          .required()
          .description(`Tokens the model may think for (budget_tokens): at least ${MinThinkingBudget}, and less than maxTokens.`),
      }),
    ]).description('Extended thinking, off when absent: { budgetTokens }. Its signed thinking blocks go back to the API with their turn.'),
    promptCache: Schema.boolean()
      .default(true)
      .description(
        'Mark the system prompt, tools and conversation so far for the prompt cache (cache_control): later steps read them back at the cache price.',
      ),
    promptCacheTtl: Schema.union(['5m', '1h'])
      .default('5m')
      .description('How long a cached prefix lives: 5m (the API default), or 1h, whose writes cost more (set cacheWritePerMTok to match).'),
    askUser: AdapterSchema.askUser,
    prices: AdapterSchema.prices,
    extraBody: Schema.dict(Schema.any()).default({}).description('Extra request fields (for example metadata or tool_choice).'),
  }),
} satisfies Manifest
