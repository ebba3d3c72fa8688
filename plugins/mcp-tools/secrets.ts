/**
 * `${VAR}` in a server's args, env, url and headers: read from Cordage's environment when the plugin
 * starts, so tokens stay out of the preset. Every value read that way is a secret: it is cut out of
 * every message, log line and tool result this plugin produces, whatever the server echoes back.
 */
const Placeholder = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** Shorter values would mangle ordinary text and protect nothing. */
const MinSecretLength = 4

export const Redacted = '[redacted]'

export class Secrets {
  private values: string[] = []

  constructor(private env: NodeJS.ProcessEnv) {}

  /** `value` with each `${VAR}` replaced; names that are not set are added to `missing`. */
  expand(value: string, missing: string[]): string {
    return value.replace(Placeholder, (_, name: string) => {
      const found = this.env[name]
      if (found === undefined) {
        missing.push(name)
        return ''
      }
      if (found.length >= MinSecretLength && !this.values.includes(found)) {
        this.values.push(found)
        // Longest first, so a secret that contains another is cut out whole.
        this.values.sort((a, b) => b.length - a.length)
      }
      return found
    })
  }

  redact(text: string): string {
    let out = text
    for (const secret of this.values) out = out.split(secret).join(Redacted)
    return out
  }

  /** A copy of a JSON value with every string redacted. */
  redactDeep<T>(value: T): T {
    if (this.values.length === 0) return value
    return walk(value, (s) => this.redact(s)) as T
  }
}

function walk(value: unknown, fix: (s: string) => string): unknown {
  if (typeof value === 'string') return fix(value)
  if (Array.isArray(value)) return value.map((v) => walk(v, fix))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [fix(k), walk(v, fix)]))
  }
  return value
}
