/**
 * @module wire/adapter-config
 * The config keys every HTTP model adapter takes, with one meaning and one default whoever the
 * provider is: the model, where the server is and which variable holds its key, how long it may stay
 * silent, extra headers and body fields, streaming, the ask_user tool and the price table. An adapter's
 * Config extends AdapterConfig, and its manifest takes these schemas for the keys that read the same.
 */
import { Schema } from 'cordis'
import { CordageError } from '../contracts/errors.ts'
import { MaxTimerMs } from './http.ts'
import { PricesSchema, type Prices } from './prices.ts'

export interface AdapterConfig {
  model: string
  /** From the preset; when absent, the adapter's base URL variable, then the provider's own API. */
  baseUrl?: string
  /** The name of the environment variable holding the key, never the key. */
  apiKeyEnv: string
  timeoutMs: number
  headers: Record<string, string>
  stream: boolean
  temperature?: number
  askUser: boolean
  prices: Prices
  extraBody: Record<string, unknown>
}

/** Schemas of the AdapterConfig keys whose meaning and default do not depend on the provider. */
export const AdapterSchema = {
  /** @param name the provider's usual variable, for example OPENAI_API_KEY */
  apiKeyEnv: (name: string) =>
    Schema.string()
      .default(name)
      .description('Name of the environment variable holding the API key. The key itself never goes in a preset.'),
  /** @param parts what the provider's stream is made of, for example "stream chunks" */
  timeoutMs: (parts: string) =>
    Schema.natural()
      .min(1)
      .max(MaxTimerMs)
      .default(60_000)
      .description(`Give up on an attempt when the server sends nothing for this long (before the first byte or between ${parts}).`),
  stream: Schema.boolean()
    .default(true)
    .description('Stream the answer (server-sent events). Listeners of model/delta see text as it arrives.'),
  askUser: Schema.boolean()
    .default(true)
    .description('Offer the model an ask_user tool; calling it pauses the run until the user answers.'),
  prices: PricesSchema.description('Price table for the cost budget; without it the cost is 0.'),
}

/**
 * Refuse, when the plugin starts, extraBody keys the adapter writes itself: merged last, they would
 * replace what the adapter sends behind its back (a second model name, messages the context never made,
 * a wider output cap than the config's).
 * @param owned keys the adapter always writes, with the config key or plugin that sets them instead
 * @param configured keys the adapter writes from a config key when that key is set: each with the
 *   config key's name and value (undefined when unset, and then extraBody may set the field)
 */
export function checkExtraBody(
  plugin: string,
  extraBody: Record<string, unknown> | undefined,
  owned: Record<string, string>,
  configured: Record<string, ConfiguredBodyKey> = {},
): void {
  for (const key of Object.keys(extraBody ?? {})) {
    if (Object.hasOwn(owned, key))
      throw new CordageError(
        'plugin_config_invalid',
        `${plugin}: extraBody.${key} is not taken, since the plugin sends ${key} itself; ${owned[key]}, and take ${key} out of extraBody.`,
      )
    const from = Object.hasOwn(configured, key) ? configured[key] : undefined
    if (from && from.value !== undefined)
      throw new CordageError(
        'plugin_config_invalid',
        `${plugin}: ${from.key} (${JSON.stringify(from.value)}) and extraBody.${key} (${JSON.stringify(extraBody?.[key])}) both set ${key} in the request, and extraBody's would silently replace the config's. Keep ${from.key} and take ${key} out of extraBody${from.instead ? `; ${from.instead}` : ''}.`,
      )
  }
}

/** A request field the adapter writes from a config key, when that key is set. */
export interface ConfiguredBodyKey {
  /** The config key, for example maxTokens. */
  key: string
  value: unknown
  /** When to keep the extraBody field instead (and leave the config key out). */
  instead?: string
}

/** extraBody keys every adapter writes itself, with what sets them instead. */
export const OwnedBodyKeys: Record<string, string> = {
  model: 'set the model key instead',
  messages: 'the context plugin makes the messages',
  tools: 'the tools plugins (and askUser) decide the tools',
  stream: 'set the stream key instead',
}
