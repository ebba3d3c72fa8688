/**
 * @module hash
 * Canonical JSON and its hash. Approvals, tickets and idempotency keys are bound to the hash of the
 * arguments, so two spellings of the same object (`{a,b}` and `{b,a}`) must hash alike.
 */
import { createHash } from 'node:crypto'

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

/** `sha256:` and the first 32 hex digits of the SHA-256 of the canonical JSON. */
export function hashArgs(value: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 32)
}
