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
import { CordageError } from '../contracts/errors.ts'
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
  const digest = digestArgs(value)
  if (cacheable) cache.set(value, digest)
  return digest
}

/**
 * {@link hashArgs} without the cache: for a value hashed once (the loop hashes each proposed call's
 * arguments once, and a ticket is checked against the very object it was issued for). Remembering
 * costs a WeakMap entry per value, which the collector pays for again and again.
 */
export function digestArgs(value: unknown): string {
  // crypto.hash (Node ≥ 20.12) is the one-shot form: about 2.5× cheaper than createHash for short input.
  return 'sha256:' + hash('sha256', canonicalJson(value)).slice(0, 32)
}

/** Arguments nested deeper than this are refused: no tool needs it, and deep values cost stack everywhere. */
export const MaxJsonDepth = 64

/**
 * What keeps a value from being plain JSON that every reader sees alike, or undefined when it is fine.
 * Refused: a key `__proto__` (JavaScript code downstream — a schema library copying keys, a tool, an
 * SDK — may take it for the prototype and see other arguments than policy judged), a getter (each
 * reader could see another value, and the hash of a frozen value is remembered), a lone surrogate,
 * NaN or an infinite number, anything JSON has no form for (undefined in an array, functions, symbols,
 * bigints, cycles), and nesting deeper than {@link MaxJsonDepth}. `constructor` and `prototype` are
 * ordinary keys and are kept.
 */
export function jsonProblem(value: unknown, path = '$', depth = 0, seen = new Set<object>()): string | undefined {
  switch (typeof value) {
    case 'string':
      return wellFormed(value) ? undefined : `${path} holds a lone surrogate (not valid Unicode)`
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON cannot carry`
    case 'boolean':
      return undefined
    case 'object': {
      if (value === null) return undefined
      if (depth >= MaxJsonDepth) return `${path} is nested more than ${MaxJsonDepth} levels deep`
      if (seen.has(value)) return `${path} refers back to itself (a cycle)`
      seen.add(value)
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            if (isAccessor(value, i)) return `${path}[${i}] is a getter, not a value: arguments are plain data, read once`
            const problem = value[i] === undefined ? `${path}[${i}] is undefined` : jsonProblem(value[i], `${path}[${i}]`, depth + 1, seen)
            if (problem) return problem
          }
          return undefined
        }
        const proto = Object.getPrototypeOf(value)
        if (proto !== Object.prototype && proto !== null)
          return `${path} is a ${proto?.constructor?.name ?? 'non-plain'} object, not plain JSON`
        for (const key of Object.keys(value)) {
          if (key === '__proto__')
            return `${path} has a key "__proto__", which is refused: JavaScript code may take it for the prototype and see other arguments than policy judged`
          if (!wellFormed(key)) return `${path} has a key with a lone surrogate (not valid Unicode)`
          if (isAccessor(value, key)) return `${path}.${key} is a getter, not a value: arguments are plain data, read once`
          const member = (value as Record<string, unknown>)[key]
          if (member === undefined) continue
          const problem = jsonProblem(member, `${path}.${key}`, depth + 1, seen)
          if (problem) return problem
        }
        return undefined
      } finally {
        seen.delete(value)
      }
    }
    default:
      return `${path} is a ${typeof value}, which JSON cannot carry`
  }
}

/**
 * A hash for anything, for the record of arguments that will be refused ({@link jsonProblem}): the
 * canonical hash when there is one, else a hash of a lossy rendering, marked so it never equals a
 * canonical one.
 */
export function hashAnyway(value: unknown): string {
  try {
    return hashArgs(value)
  } catch {
    let text: string
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = String(value)
    }
    return 'sha256:' + hash('sha256', `unrepresentable:${text}`).slice(0, 32)
  }
}

/**
 * A property computed on each read. Refused: policy, the ticket's hash and the tool would each read it
 * and could each see another value, and the hash of a frozen value is remembered ({@link hashArgs}).
 */
function isAccessor(value: object, key: string | number): boolean {
  const descriptor = Object.getOwnPropertyDescriptor(value, key)
  return descriptor !== undefined && !('value' in descriptor)
}

/** String.prototype.isWellFormed (Node 20), which TypeScript's ES2023 library does not declare yet. */
function wellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed()
}
