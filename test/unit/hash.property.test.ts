/**
 * Properties of the canonical hash over random JSON (fast-check): different values never share a
 * hash, equal values always do whatever the key order, and the cache of hashes never changes an answer.
 * Keys include `__proto__`, `constructor`, `prototype`, the empty string, digits and unicode; values
 * nest arrays and objects with the same entries.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { deepFreeze } from '../../core/kit/freeze.ts'
import { canonicalJson, hashArgs, jsonProblem } from '../../core/kit/hash.ts'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const SpecialKeys = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
  '0',
  '1',
  '10',
  'a',
  'b',
  'é',
  'e\u0301',
  '\u{1F600}',
  '\uFFFF',
  'A',
  'ä',
]
const key = fc.oneof(fc.constantFrom(...SpecialKeys), fc.string({ maxLength: 4 }), fc.string({ unit: 'grapheme', maxLength: 3 }))

/** An own-property object from entries, `__proto__` kept as a key (never the prototype). */
function objectOf(entries: [string, Json][]): { [key: string]: Json } {
  const out: { [key: string]: Json } = {}
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  return out
}

const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -3, max: 3 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom('', '0', '1', 'null', 'true', '__proto__', 'é', 'e\u0301'),
    fc.string({ unit: 'grapheme', maxLength: 5 }),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.uniqueArray(fc.tuple(key, tie('json')), { maxLength: 4, selector: ([k]) => k }).map(objectOf),
    // An array and an object with the same entries.
    fc.array(tie('json'), { maxLength: 3 }).map((items) => objectOf(items.map((v, i) => [String(i), v]))),
  ),
}))

/** JSON equality: key order does not count, arrays are not objects, 0 and -0 are one number. */
function jsonEqual(a: Json, b: Json): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object')
    return a === b || (typeof a === 'number' && typeof b === 'number' && a === b)
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  const ob = b as { [key: string]: Json }
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as { [key: string]: Json })[k], ob[k]))
}

/** The same value with every object's keys in another order (a permutation drawn from `seed`). */
function reorder(value: Json, seed: number): Json {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((v, i) => reorder(v, seed + i + 1))
  const entries = Object.entries(value)
  let s = seed >>> 0
  for (let i = entries.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    const j = s % (i + 1)
    ;[entries[i], entries[j]] = [entries[j], entries[i]]
  }
  return objectOf(entries.map(([k, v], i) => [k, reorder(v, seed * 31 + i)]))
}

/** A value close to `value`: one leaf changed, an array turned into an object with the same entries, a key renamed. */
function nudge(value: Json, choice: number): Json {
  if (value === null || typeof value !== 'object') {
    const others: Json[] = [null, 0, 1, '', '0', 'null', true, false, [], {}]
    return others.find((o) => !jsonEqual(o, value))!
  }
  if (Array.isArray(value)) {
    if (!value.length || choice % 3 === 0) return objectOf(value.map((v, i) => [String(i), v]))
    const at = choice % value.length
    return value.map((v, i) => (i === at ? nudge(v, choice >> 2) : v))
  }
  const entries = Object.entries(value)
  if (!entries.length || choice % 3 === 0) return entries.map(([, v]) => v)
  const at = choice % entries.length
  if (choice % 3 === 1) {
    const renamed = entries[at][0] + '_'
    if (!Object.hasOwn(value, renamed)) return objectOf(entries.map(([k, v], i) => [i === at ? renamed : k, v]))
  }
  return objectOf(entries.map(([k, v], i) => [k, i === at ? nudge(v, choice >> 2) : v]))
}

const runs = { numRuns: 300 }

describe('canonical hashing, on random JSON', () => {
  it('the kernel accepts every generated value as plain JSON, except one with a key __proto__', () => {
    const hasProto = (v: Json): boolean =>
      v !== null &&
      typeof v === 'object' &&
      (Array.isArray(v) ? v.some(hasProto) : Object.hasOwn(v, '__proto__') || Object.values(v).some(hasProto))
    fc.assert(
      fc.property(json, (v) => (jsonProblem(v) === undefined) === !hasProto(v)),
      runs,
    )
  })

  it('canonical JSON parses back to the same value, __proto__ keys included', () => {
    fc.assert(
      fc.property(json, (v) => jsonEqual(JSON.parse(canonicalJson(v)), v)),
      runs,
    )
  })

  it('two values share a hash exactly when they are equal JSON (random pairs)', () => {
    fc.assert(
      fc.property(json, json, (a, b) => (hashArgs(a) === hashArgs(b)) === jsonEqual(a, b)),
      runs,
    )
  })

  it('a value and a near neighbour never share a hash', () => {
    fc.assert(
      fc.property(json, fc.nat(), (a, choice) => {
        const b = nudge(a, choice)
        assert.equal(jsonEqual(a, b), false, 'the neighbour differs')
        assert.notEqual(hashArgs(a), hashArgs(b))
      }),
      runs,
    )
  })

  it('equal values hash alike whatever the key order', () => {
    fc.assert(
      fc.property(json, fc.nat(), (v, seed) => {
        const shuffled = reorder(v, seed)
        assert.equal(hashArgs(shuffled), hashArgs(v))
        assert.equal(canonicalJson(shuffled), canonicalJson(v))
      }),
      runs,
    )
  })

  it('a deeply frozen value hashes as its mutable copy does, before and after its hash is cached', () => {
    fc.assert(
      fc.property(json, (v) => {
        const copy = JSON.parse(canonicalJson(v)) as Json
        const frozen = deepFreeze(JSON.parse(canonicalJson(v)) as Json)
        const first = hashArgs(frozen)
        assert.equal(first, hashArgs(copy))
        assert.equal(hashArgs(frozen), first)
      }),
      runs,
    )
  })
})
