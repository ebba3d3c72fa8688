/**
 * @module wire/endpoint
 * Where an adapter sends its requests and with which key, checked when the plugin starts so a wrong
 * preset fails at once with the fix, not at the first model call.
 */
import { CordageError } from '../contracts/errors.ts'

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

export interface Endpoint {
  baseUrl: string
  key?: string
  /** Where baseUrl came from, for messages: `the preset`, `$OPENAI_BASE_URL` or `the default`. */
  baseUrlFrom: string
  /** What to tell a user whose key the server refused. */
  authHint: string
}

const VariableName = /^[A-Za-z_][A-Za-z0-9_]*$/

export function endpoint(options: EndpointOptions): Endpoint {
  // An empty variable counts as unset, as in the providers' own SDKs.
  const envBaseUrl = options.env[options.baseUrlEnv]?.trim() || undefined
  const fromEnv = options.baseUrl === undefined && envBaseUrl !== undefined
  const baseUrl = options.baseUrl ?? envBaseUrl ?? options.defaultBaseUrl
  const baseUrlFrom = options.baseUrl !== undefined ? 'the preset' : fromEnv ? `$${options.baseUrlEnv}` : 'the default'
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new CordageError(
      'plugin_config_invalid',
      `${options.plugin}: baseUrl "${baseUrl}" (from ${baseUrlFrom}) is not a URL; write it in full, for example ${options.defaultBaseUrl}`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CordageError(
      'plugin_config_invalid',
      `${options.plugin}: baseUrl "${baseUrl}" (from ${baseUrlFrom}) must start with http:// or https://`,
    )
  // Never echo it: a value that is not a variable name may well be the key itself.
  if (!VariableName.test(options.apiKeyEnv)) {
    throw new CordageError(
      'plugin_config_invalid',
      `${options.plugin}: apiKeyEnv must be the name of an environment variable (letters, digits and _), such as ${defaultKeyEnv(options.plugin)}; the value given is not one. If you put the key itself there, remove it from the preset and rotate it.`,
    )
  }
  // Trimmed: fetch trims header values, and a provider echoing the key back echoes the trimmed one.
  const key = options.env[options.apiKeyEnv]?.trim() || undefined
  if (key && !/^[\x21-\x7e]+$/.test(key)) {
    throw new CordageError(
      'plugin_config_invalid',
      `${options.plugin}: the key in $${options.apiKeyEnv} holds characters an HTTP header cannot carry (a space, a line break or a non-ASCII character such as a typographic quote); set it again, copied exactly`,
    )
  }
  if (!key && url.hostname === new URL(options.defaultBaseUrl).hostname) {
    throw new CordageError(
      'plugin_config_invalid',
      `${options.plugin}: the environment variable ${options.apiKeyEnv} is not set. Set it to your API key (the plugin reads the key from the variable named in apiKeyEnv; it never goes in a preset), or point baseUrl at a server that needs no key.`,
    )
  }
  const authHint = key ? `check the key in $${options.apiKeyEnv}` : `no key was sent: $${options.apiKeyEnv} is not set`
  return { baseUrl, key, baseUrlFrom, authHint }
}

const defaultKeyEnv = (plugin: string) => (plugin.includes('anthropic') ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY')
