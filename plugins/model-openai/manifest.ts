import { Schema } from 'cordis'
import type { Manifest } from 'cordage'
import { AdapterSchema, type AdapterConfig, OpenAIBaseUrl } from 'cordage/wire'
import type { TokenizerChoice } from './tokens.ts'

export interface Config extends AdapterConfig {
  streamUsage: boolean
  maxTokens?: number
  tokenizer: TokenizerChoice
}

export const DefaultBaseUrl = OpenAIBaseUrl

export default {
  name: 'model-openai',
  version: '1.1.0',
  description: 'OpenAI Chat Completions and compatible servers (DeepSeek, vLLM, Ollama, llama.cpp): streaming, tool calls, usage and cost.',
  provides: { model: '1.3.0' },
  // The variable apiKeyEnv names holds the key: every run scrubs its value from what it records.
  secrets: ['apiKeyEnv'],
  config: Schema.object({
    model: Schema.string().required().description('Model name, for example gpt-4.1-mini (or what your compatible server calls it).'),
    baseUrl: Schema.string().description(`API base URL, up to and including /v1. Default: $OPENAI_BASE_URL, else ${DefaultBaseUrl}.`),
    apiKeyEnv: AdapterSchema.apiKeyEnv('OPENAI_API_KEY'),
    timeoutMs: AdapterSchema.timeoutMs('stream chunks'),
    headers: Schema.dict(Schema.string()).default({}).description('Extra HTTP headers, for example OpenAI-Organization.'),
    stream: AdapterSchema.stream,
    streamUsage: Schema.boolean()
      .default(true)
      .description('Ask for usage at the end of a stream (stream_options.include_usage). Turn off for servers that refuse it.'),
    maxTokens: Schema.natural()
      .min(1)
      .description(
        'Upper bound on output tokens per call (sent as max_completion_tokens; for an older server, leave it out and set extraBody.max_tokens).',
      ),
    temperature: Schema.number().min(0).max(2).description('Sampling temperature.'),
    tokenizer: Schema.union(['auto', 'o200k_base', 'cl100k_base', 'estimate'])
      .default('auto')
      .description(
        "How context plugins count this model's tokens: auto (o200k_base or cl100k_base by the model's name, else estimate), an encoding, or estimate (calibrated on the usage the server reports).",
      ),
    askUser: AdapterSchema.askUser,
    prices: AdapterSchema.prices,
    extraBody: Schema.dict(Schema.any())
      .default({})
      .description(
        'Extra request fields for this server (for example reasoning_effort, or max_tokens for older servers, without maxTokens); not the fields the plugin sends itself, nor one a set config key sends (max_completion_tokens, max_tokens, temperature).',
      ),
  }),
} satisfies Manifest
