/**
 * @module wire/endpoint
 * Where an adapter sends its requests and with which key, checked when the plugin starts so a wrong
 * preset fails at once with the fix, not at the first model call.
 */
import { CordageError } from '../errors.ts'

export interface EndpointOptions {
  /** The plugin name, for messages. */
  plugin: string
  /** From the preset; wins over the environment. */
  baseUrl?: string
  /** The environment variable read when the preset gives no baseUrl, for example OPENAI_BASE_URL. */
  baseUrlEnv: string
  /** The provider's own API; it needs a key, a local compatible server may not. */
  defaultBaseUrl: string
  apiKeyEnv: string
  env: NodeJS.ProcessEnv
}

export function endpoint(options: EndpointOptions): { baseUrl: string; key?: string } {
  const baseUrl = options.baseUrl ?? options.env[options.baseUrlEnv] ?? options.defaultBaseUrl
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new CordageError('plugin_config_invalid', `${options.plugin}: baseUrl "${baseUrl}" is not a URL; write it in full, for example ${options.defaultBaseUrl}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CordageError('plugin_config_invalid', `${options.plugin}: baseUrl "${baseUrl}" must start with http:// or https://`)
  const key = options.env[options.apiKeyEnv] || undefined
  if (!key && url.hostname === new URL(options.defaultBaseUrl).hostname) {
    throw new CordageError('plugin_config_invalid', `${options.plugin}: the environment variable ${options.apiKeyEnv} is not set. Set it to your API key (the plugin reads the key from the variable named in apiKeyEnv; it never goes in a preset), or point baseUrl at a server that needs no key.`)
  }
  return { baseUrl, key }
}
