/**
 * @module hash
 * Canonical JSON and its hash. Approvals, grants, tickets and idempotency keys are bound to the hash of
 * the arguments, so the encoding must be one-to-one over JSON: two spellings of the same value
 * (`{a,b}` and `{b,a}`) hash alike, and two different values never do. The encoding is RFC 8785 (JSON
 * Canonicalization Scheme) through the `canonicalize` package: keys sorted by UTF-16 code unit, numbers
 * in their shortest round-trip form, and every own key kept as data, `__proto__` included (a
 * home-made version built a sorted copy by assignment, and `copy.__proto__ = v` set the prototype
 * instead of a key, so `{}` and `{"__proto__":{}}` hashed alike).
 */
import { hash } from 'node:crypto'
import canonicalize from 'canonicalize'
import { CordageError } from './errors.ts'
import { isDeepFrozen } from './freeze.ts'

/**
 * RFC 8785 canonical JSON. `undefined` members are dropped as JSON does.
 * @throws CordageError `invalid_input` for what JSON cannot carry faithfully: a lone surrogate in a
 * string, NaN or an infinite number, a cycle
 */
export function canonicalJson(value: unknown): string {
  try {
    return canonicalize(value) ?? 'null'
  } catch (error) {
    throw new CordageError('invalid_input', `the value has no canonical JSON form: ${(error as Error).message}`)
  }
}

const cache = new WeakMap<object, string>()

/**
 * `sha256:` and the first 32 hex digits of the SHA-256 of the canonical JSON. The hash of a deeply
 * frozen value (the loop freezes proposed arguments) is remembered: it cannot change, and the loop and
 * the ticket check would otherwise hash the same arguments twice per call. A value frozen only at the
 * top could still change inside, so it is never cached.
 * @throws CordageError `invalid_input` as {@link canonicalJson}
 */
export function hashArgs(value: unknown): string {
  const cacheable = typeof value === 'object' && value !== null && isDeepFrozen(value)
  if (cacheable) {
    const cached = cache.get(value)
    if (cached) return cached
  }
  // crypto.hash (Node ≥ 20.12) is the one-shot form: about 2.5× cheaper than createHash for short input.
  const digest = 'sha256:' + hash('sha256', canonicalJson(value)).slice(0, 32)
  if (cacheable) cache.set(value, digest)
  return digest
}
