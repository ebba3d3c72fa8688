/**
 * @module secrets
 * Secrets never reach the record. A model server can echo its API key back in a completion or in a
 * tool call's arguments, and a tool can print a token it was given; whatever the loop records goes to
 * the store and to every listener. The recorder passes each event (and each ledger write) through a
 * {@link Scrubber}, which replaces every configured secret with `[redacted:NAME]` in every string and
 * object key, before the event is applied to run state, stored or dispatched. So run state, the
 * store, the model's next context and every reader see the same redacted record.
 *
 * A secret is found as written, in any letter case, base64 (standard and URL-safe, at any of the three
 * alignments it can have inside a longer base64 text), percent-encoded, and hex. Values shorter than
 * {@link MinSecretLength} are not scrubbed (they would match ordinary text); the host warns about them.
 */
import { CordageError } from '../contracts/errors.ts'

/** A value to keep out of the record, and the name it is shown under (`[redacted:NAME]`). */
export interface Secret {
  name: string
  value: string
}

/** Shorter values are not scrubbed: a secret of a few characters would match ordinary words. */
export const MinSecretLength = 8

/** Where a secret was found: the path in the value, the secret's name and how it was written. */
export interface SecretFinding {
  path: string
  name: string
  form: string
}

export class Scrubber {
  readonly names: readonly string[]
  readonly #pattern: RegExp | undefined
  readonly #byVariant = new Map<string, { name: string; form: string }>()
  #longest = 0

  constructor(secrets: readonly Secret[]) {
    const usable = secrets.filter((s) => typeof s.value === 'string' && s.value.length >= MinSecretLength)
    for (const s of usable) {
      if (!/^[A-Za-z0-9_.-]+$/.test(s.name))
        throw new CordageError('invalid_input', `a secret's name must be letters, digits, "_", "." or "-", got ${JSON.stringify(s.name)}`)
      for (const [form, variant] of variants(s.value)) {
        const key = variant.toLowerCase()
        if (variant.length >= MinSecretLength && !this.#byVariant.has(key)) {
          this.#byVariant.set(key, { name: s.name, form })
          this.#longest = Math.max(this.#longest, key.length)
        }
      }
    }
    this.names = [...new Set(usable.map((s) => s.name))]
    // Longest first, so a variant that contains another is replaced whole. Literal alternatives only:
    // the pattern cannot backtrack beyond the length of the longest variant.
    const alternatives = [...this.#byVariant.keys()].sort((a, b) => b.length - a.length).map(escapeRegex)
    this.#pattern = alternatives.length ? new RegExp(alternatives.join('|'), 'gi') : undefined
  }

  /** True when there is anything to scrub. */
  get active(): boolean {
    return this.#pattern !== undefined
  }

  /** The text with every secret replaced by `[redacted:NAME]`. */
  scrubText(text: string): string {
    const pattern = this.#pattern
    if (!pattern) return text
    pattern.lastIndex = 0
    if (!pattern.test(text)) return text
    pattern.lastIndex = 0
    return text.replace(pattern, (found) => `[redacted:${this.#byVariant.get(found.toLowerCase())!.name}]`)
  }

  /**
   * A copy of `value` with every secret scrubbed from its strings and keys; `value` itself when it
   * holds none (no copy is made then, and frozen values stay frozen).
   */
  scrub<T>(value: T): T {
    if (!this.#pattern) return value
    return this.#walk(value) as T
  }

  /** Where secrets occur in a value (for `cordage scan`), without changing it. */
  find(value: unknown, path = '$'): SecretFinding[] {
    const found: SecretFinding[] = []
    const pattern = this.#pattern
    if (!pattern) return found
    const visit = (v: unknown, at: string) => {
      if (typeof v === 'string') {
        for (const hit of this.locate(v)) found.push({ path: at, name: hit.name, form: hit.form })
      } else if (Array.isArray(v)) {
        v.forEach((item, i) => visit(item, `${at}[${i}]`))
      } else if (v !== null && typeof v === 'object') {
        for (const [k, item] of Object.entries(v)) {
          visit(k, `${at}{key}`)
          visit(item, `${at}.${k}`)
        }
      }
    }
    visit(value, path)
    return found
  }

  /**
   * Where secrets occur in one text, each with the index (UTF-16 units) it starts at, so a long text
   * (an artifact's) can say where; without changing it.
   */
  locate(text: string): { index: number; name: string; form: string }[] {
    const pattern = this.#pattern
    if (!pattern) return []
    pattern.lastIndex = 0
    const found: { index: number; name: string; form: string }[] = []
    for (const match of text.matchAll(pattern)) {
      const hit = this.#byVariant.get(match[0].toLowerCase())!
      found.push({ index: match.index, name: hit.name, form: hit.form })
    }
    return found
  }

  /**
   * How many characters at the end of `text` could be the beginning of a secret (in any form): what a
   * stream must hold back until more arrives. Usually none: ordinary text rarely ends like a key.
   */
  pending(text: string): number {
    const tail = text.slice(-this.#longest).toLowerCase()
    let most = 0
    for (const variant of this.#byVariant.keys()) {
      for (let k = Math.min(variant.length - 1, tail.length); k > most; k--) {
        if (variant.startsWith(tail.slice(tail.length - k))) {
          most = k
          break
        }
      }
    }
    return most
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.scrubText(value)
    if (Array.isArray(value)) {
      let changed = false
      const out = value.map((item) => {
        const next = this.#walk(item)
        if (next !== item) changed = true
        return next
      })
      return changed ? out : value
    }
    if (value !== null && typeof value === 'object') {
      let changed = false
      const out: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(value)) {
        const k = this.scrubText(key)
        const next = this.#walk(item)
        if (k !== key || next !== item) changed = true
        // A scrubbed key could collide with another; keep both rather than lose one.
        Object.defineProperty(out, Object.hasOwn(out, k) ? `${k}#${key.length}` : k, {
          value: next,
          enumerable: true,
          writable: true,
          configurable: true,
        })
      }
      return changed ? out : value
    }
    return value
  }
}

/**
 * Scrubbing a text that arrives in pieces (a model's streamed answer): a secret may be split across two
 * pieces, so the last `longest - 1` characters are held back until the next piece (or the end) shows
 * whether they begin one. Each piece given out is scrubbed.
 */
export class StreamScrubber {
  #held = ''
  constructor(private readonly scrubber: Scrubber) {}

  /** What may be shown now of the text so far. */
  push(piece: string): string {
    // A secret not complete yet is a tail of the text that begins one of its forms: hold that back,
    // and scrub it again with what comes next.
    const text = this.scrubber.scrubText(this.#held + piece)
    const keep = this.scrubber.pending(text)
    this.#held = text.slice(text.length - keep)
    return text.slice(0, text.length - keep)
  }

  /** The rest, once the stream ended. */
  end(): string {
    const rest = this.scrubber.scrubText(this.#held)
    this.#held = ''
    return rest
  }
}

/** The forms a secret can take in text. */
function variants(value: string): [string, string][] {
  const bytes = Buffer.from(value, 'utf8')
  const out: [string, string][] = [
    ['as written', value],
    ['percent-encoded', encodeURIComponent(value)],
    ['hex', bytes.toString('hex')],
  ]
  // Inside a longer base64 text the secret starts at byte offset 0, 1 or 2 of a 3-byte group. Encode
  // it after k filler bytes and keep only the characters that depend on the secret alone.
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    const start = k === 0 ? 0 : Math.ceil((k * 8) / 6)
    const end = Math.floor(((k + bytes.length) * 8) / 6)
    const core = encoded.slice(start, end)
    out.push(
      [`base64${k ? ` (offset ${k})` : ''}`, core],
      [`base64url${k ? ` (offset ${k})` : ''}`, core.replaceAll('+', '-').replaceAll('/', '_')],
    )
  }
  return out
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
