/**
 * @module hash
 * Canonical JSON and its hash. Approvals, tickets and idempotency keys are bound to the hash of the
 * arguments, so two spellings of the same object (`{a,b}` and `{b,a}`) must hash alike.
 */
import { hash } from 'node:crypto'

/** JSON with object keys sorted at every level; `undefined` members are dropped as JSON does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {}
      for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k]
      return sorted
    }
    return v
  }) ?? 'null'
}

const cache = new WeakMap<object, string>()

/**
 * `sha256:` and the first 32 hex digits of the SHA-256 of the canonical JSON. The hash of a frozen
 * object (the loop freezes proposed arguments) is remembered: it cannot change, and the loop and the ticket check
 * would otherwise hash the same arguments twice per call.
 */
export function hashArgs(value: unknown): string {
  const cached = typeof value === 'object' && value !== null ? cache.get(value) : undefined
  if (cached) return cached
  // crypto.hash (Node ≥ 20.12) is the one-shot form: about 2.5× cheaper than createHash for short input.
  const digest = 'sha256:' + hash('sha256', canonicalJson(value)).slice(0, 32)
  if (typeof value === 'object' && value !== null && Object.isFrozen(value)) cache.set(value, digest)
  return digest
}
