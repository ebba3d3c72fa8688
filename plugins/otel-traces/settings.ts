/**
 * @module otel-traces/settings
 * What the config says beyond its schema, checked when the plugin starts so a wrong preset fails at
 * once, naming the key and the fix, rather than every export failing later.
 */
import { CordageError } from 'cordage'
import type { Config } from './manifest.ts'

const VariableName = /^[A-Za-z_][A-Za-z0-9_]*$/
/** An HTTP header name (RFC 9110 token). */
const HeaderName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** What a header value may hold: visible ASCII and inner spaces. */
const HeaderValue = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/

/**
 * Header names that carry credentials (Authorization, X-API-Key, X-Honeycomb-Team, DD-API-KEY,
 * X-SF-Token, Cookie, ...): their values belong in the environment, never in a preset people read
 * and commit.
 */
const CredentialName = /auth|key|token|secret|passw|credential|cookie|session|signature|^x-honeycomb-team$/i

const invalid = (message: string) => new CordageError('plugin_config_invalid', `otel-traces: ${message}`)

/** Every header to send, the secret ones read from `env`. */
export function exportHeaders(config: Config, env: NodeJS.ProcessEnv): Record<string, string> {
  checkEndpoint(config.endpoint)
  if (Object.hasOwn(config.resource, 'service.name'))
    throw invalid('resource sets service.name; set it with the key serviceName instead (one place for it)')
  const headers: Record<string, string> = {}
  const seen = new Map<string, string>()
  const add = (key: string, name: string, value: string) => {
    if (!HeaderName.test(name)) throw invalid(`${key}: "${name}" is not an HTTP header name (letters, digits and -)`)
    const lower = name.toLowerCase()
    const before = seen.get(lower)
    if (before) throw invalid(`${key}: header ${name} is also given in ${before}; give each header once`)
    seen.set(lower, key)
    headers[name] = value
  }
  for (const [name, value] of Object.entries(config.headers)) {
    // Never echo the value: it is likely the credential itself.
    if (CredentialName.test(name))
      throw invalid(
        `headers.${name} looks like a credential, and a preset is read by people and kept in version control: put the value in an environment variable and name it in headersEnv instead (headersEnv: { ${name}: OTEL_EXPORTER_AUTH }); if the value was a real secret, rotate it`,
      )
    if (!HeaderValue.test(value))
      throw invalid(`headers.${name}: the value holds characters an HTTP header cannot carry (a line break, a non-ASCII character)`)
    add('headers', name, value)
  }
  for (const [name, variable] of Object.entries(config.headersEnv)) {
    // Never echo it: a value that is not a variable name may well be the secret itself.
    if (!VariableName.test(variable))
      throw invalid(
        `headersEnv.${name} must name an environment variable (letters, digits and _), such as OTEL_EXPORTER_TOKEN; the value given is not one. If you put the secret itself there, remove it from the preset and rotate it.`,
      )
    const value = env[variable]?.trim()
    if (!value)
      throw invalid(
        `headersEnv.${name}: the environment variable ${variable} is not set; set it to the header's value, or remove the header`,
      )
    if (!HeaderValue.test(value))
      throw invalid(`headersEnv.${name}: $${variable} holds characters an HTTP header cannot carry; set it again, copied exactly`)
    add('headersEnv', name, value)
  }
  return headers
}

function checkEndpoint(endpoint: string): void {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw invalid(`endpoint "${endpoint}" is not a URL; write it in full, for example http://localhost:4318/v1/traces`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(`endpoint "${endpoint.replace(/[?#].*$/, '')}" must start with http:// or https:// (this plugin speaks OTLP over HTTP)`)
  if (url.username || url.password)
    throw invalid('endpoint holds a user name or password; send credentials in a header named in headersEnv instead')
}
