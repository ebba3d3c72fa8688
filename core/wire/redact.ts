/**
 * @module wire/redact
 * Secrets (API keys) must not reach events, logs or error messages, even when a provider echoes them
 * back in an error body. Every text an adapter lets out goes through {@link Redactor.text}.
 */
import { CordageError } from '../contracts/errors.ts'

export class Redactor {
  private secrets: string[]

  constructor(secrets: (string | undefined)[]) {
    // Very short values would blank out ordinary words; no real key is that short.
    this.secrets = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8)
  }

  text(value: string): string {
    let out = value
    for (const secret of this.secrets) out = out.split(secret).join('[redacted]')
    return out
  }

  /** The same error with secrets taken out of its message (anything that is not a CordageError passes as it is). */
  error(error: unknown): unknown {
    if (!CordageError.is(error)) return error
    const message = this.text(error.message)
    return message === error.message ? error : new CordageError(error.code, message, { data: error.data })
  }
}
