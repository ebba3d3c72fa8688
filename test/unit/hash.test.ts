/**
 * core/kit/hash.ts: the canonical JSON that approvals, grants, tickets and idempotency keys are bound to,
 * its hash and the cache of hashes, and what keeps a value from being plain JSON.
 */
import assert from 'node:assert/strict'
import { hash } from 'node:crypto'
import { describe, it } from 'node:test'
import { deepFreeze } from '../../core/kit/freeze.ts'
import { canonicalJson, hashAnyway, hashArgs, jsonProblem, MaxJsonDepth } from '../../core/kit/hash.ts'

const sha = (text: string) => 'sha256:' + hash('sha256', text).slice(0, 32)

describe('canonicalJson', () => {
  it('sorts keys, keeps special keys as data, and writes numbers in their shortest form', () => {
    assert.equal(canonicalJson({ b: 1, a: [2, { d: 1e21, c: 0.1 }] }), '{"a":[2,{"c":0.1,"d":1e+21}],"b":1}')
    assert.equal(canonicalJson(JSON.parse('{"__proto__":{"x":1},"constructor":2}')), '{"__proto__":{"x":1},"constructor":2}')
  })

  it('writes undefined as null, and drops undefined members', () => {
    assert.equal(canonicalJson(undefined), 'null')
    assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}')
  })

  it('refuses what JSON cannot carry with invalid_input', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    for (const value of [NaN, Infinity, 10n, '\ud800', cycle]) {
      assert.throws(() => canonicalJson(value), { code: 'invalid_input', message: /^the value has no canonical JSON form: \S/ })
    }
  })
})

describe('hashArgs', () => {
  it('is sha256: and the first 32 hex digits of the SHA-256 of the canonical JSON', () => {
    assert.equal(hashArgs({ b: 2, a: 1 }), sha('{"a":1,"b":2}'))
    assert.match(hashArgs([]), /^sha256:[0-9a-f]{32}$/)
  })

  it('hashes the same value alike whatever the key order', () => {
    assert.equal(hashArgs({ a: 1, b: { c: [1, 2], d: null } }), hashArgs({ b: { d: null, c: [1, 2] }, a: 1 }))
  })

  it('tells an array from an object with the same entries', () => {
    assert.notEqual(hashArgs(['x', 'y']), hashArgs({ 0: 'x', 1: 'y' }))
    assert.notEqual(hashArgs([]), hashArgs({}))
    assert.notEqual(hashArgs([[]]), hashArgs([{}]))
    assert.notEqual(hashArgs({ a: [1] }), hashArgs({ a: { 0: 1 } }))
  })

  it('tells a key __proto__ from no key, and a string from a number', () => {
    assert.notEqual(hashArgs(JSON.parse('{"__proto__":{}}')), hashArgs({}))
    assert.notEqual(hashArgs({ a: '1' }), hashArgs({ a: 1 }))
    assert.notEqual(hashArgs(null), hashArgs('null'))
  })

  it('sees a change to a mutable value: only deeply frozen values have a remembered hash', () => {
    const args: { path: string; opts: { force: boolean } } = { path: '/tmp/a', opts: { force: false } }
    const before = hashArgs(args)
    args.opts.force = true
    assert.notEqual(hashArgs(args), before)
    const top = Object.freeze({ opts: { force: false } })
    const first = hashArgs(top)
    top.opts.force = true
    assert.notEqual(hashArgs(top), first, 'frozen at the top only: the inside may change, so no cached hash')
  })

  it('remembers the hash of a deeply frozen value: it is computed once', () => {
    let reads = 0
    const value = deepFreeze({
      get a() {
        reads++
        return 1
      },
      b: [1],
    })
    const first = hashArgs(value)
    const readsAfterFirst = reads
    assert.ok(readsAfterFirst > 0)
    assert.equal(hashArgs(value), first)
    assert.equal(reads, readsAfterFirst, 'the second hash came from the cache')
    assert.equal(first, sha('{"a":1,"b":[1]}'))
  })

  it('does not remember the hash of a mutable object with a getter', () => {
    let reads = 0
    const value = {
      get a() {
        reads++
        return reads
      },
    }
    assert.notEqual(hashArgs(value), hashArgs(value))
  })

  it('throws invalid_input for values without a canonical form', () => {
    assert.throws(() => hashArgs({ n: NaN }), { code: 'invalid_input' })
  })
})

describe('jsonProblem', () => {
  it('passes plain JSON, constructor and prototype keys, null-prototype objects, and skipped undefined members', () => {
    for (const ok of [
      null,
      1,
      'a',
      true,
      [],
      {},
      { constructor: 1, prototype: { a: [1, null] } },
      Object.create(null),
      { a: undefined },
      [1, 'x', { y: [false] }],
    ]) {
      assert.equal(jsonProblem(ok), undefined, JSON.stringify(ok))
    }
  })

  it('refuses a key __proto__, naming the path', () => {
    assert.match(
      jsonProblem({ a: JSON.parse('{"__proto__":1}') }) ?? '',
      /^\$\.a has a key "__proto__", which is refused: JavaScript code may take it for the prototype/,
    )
  })

  it('refuses lone surrogates in values and keys', () => {
    assert.equal(jsonProblem(['ok', 'x\udc00']), '$[1] holds a lone surrogate (not valid Unicode)')
    assert.equal(jsonProblem({ 'k\ud800': 1 }), '$ has a key with a lone surrogate (not valid Unicode)')
    assert.equal(jsonProblem('\ud83d\ude00'), undefined, 'a proper pair is fine')
  })

  it('refuses numbers JSON cannot carry', () => {
    assert.equal(jsonProblem({ a: { b: NaN } }), '$.a.b is NaN, which JSON cannot carry')
    assert.equal(jsonProblem([-Infinity]), '$[0] is -Infinity, which JSON cannot carry')
  })

  it('refuses undefined in an array, functions, symbols and bigints', () => {
    assert.equal(jsonProblem([1, undefined]), '$[1] is undefined')
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested
    assert.equal(jsonProblem([, 1]), '$[0] is undefined', 'a hole is no value either')
    assert.equal(jsonProblem({ f: () => 1 }), '$.f is a function, which JSON cannot carry')
    assert.equal(jsonProblem(Symbol('s')), '$ is a symbol, which JSON cannot carry')
    assert.equal(jsonProblem([[10n]]), '$[0][0] is a bigint, which JSON cannot carry')
    assert.equal(jsonProblem(undefined), '$ is a undefined, which JSON cannot carry')
  })

  it('refuses objects that are not plain', () => {
    assert.equal(jsonProblem({ when: new Date(0) }), '$.when is a Date object, not plain JSON')
    assert.equal(jsonProblem(Object.create(Object.create(null))), '$ is a non-plain object, not plain JSON')
    assert.equal(jsonProblem([new Map()]), '$[0] is a Map object, not plain JSON')
  })

  it('refuses a cycle, but not the same object twice side by side', () => {
    const shared = { x: 1 }
    assert.equal(jsonProblem({ a: shared, b: [shared, shared] }), undefined)
    const cycle: Record<string, unknown> = { a: [] }
    ;(cycle.a as unknown[]).push(cycle)
    assert.equal(jsonProblem(cycle), '$.a[0] refers back to itself (a cycle)')
  })

  it(`refuses nesting deeper than ${MaxJsonDepth} levels, and accepts ${MaxJsonDepth}`, () => {
    assert.equal(MaxJsonDepth, 64)
    const nest = (levels: number, inner: (v: unknown) => unknown): unknown => {
      let v: unknown = 1
      for (let i = 0; i < levels; i++) v = inner(v)
      return v
    }
    assert.equal(jsonProblem(nest(64, (v) => [v])), undefined)
    assert.equal(jsonProblem(nest(64, (v) => ({ k: v }))), undefined)
    assert.match(jsonProblem(nest(65, (v) => [v])) ?? '', /^\$(\[0\]){64} is nested more than 64 levels deep$/)
    assert.match(jsonProblem(nest(65, (v) => ({ k: v }))) ?? '', /^\$(\.k){64} is nested more than 64 levels deep$/)
  })

  it('refuses a getter, in an object or an array: a value read twice must be the same value', () => {
    let reads = 0
    const args = {
      path: '/tmp/a',
      get cmd() {
        return reads++ < 3 ? 'ls' : 'rm -rf /'
      },
    }
    assert.equal(jsonProblem(args), '$.cmd is a getter, not a value: arguments are plain data, read once')
    const list = ['ls']
    Object.defineProperty(list, 0, { get: () => 'ls', enumerable: true })
    assert.equal(jsonProblem({ a: list }), '$.a[0] is a getter, not a value: arguments are plain data, read once')
    assert.equal(reads, 0, 'checking does not call the getter')
  })

  it('lets no getter keep a stale remembered hash: deeply frozen arguments with a getter are refused', () => {
    let reads = 0
    const args = deepFreeze({
      get cmd() {
        return reads++ < 2 ? 'ls' : 'rm -rf /'
      },
    })
    assert.notEqual(jsonProblem(args), undefined)
  })

  it('reports the first problem in order', () => {
    assert.equal(jsonProblem({ a: 1, b: NaN, c: () => 1 }), '$.b is NaN, which JSON cannot carry')
    assert.equal(jsonProblem([NaN, 10n]), '$[0] is NaN, which JSON cannot carry')
  })
})

describe('hashAnyway', () => {
  it('is the canonical hash when there is one', () => {
    assert.equal(hashAnyway({ b: 1, a: 2 }), hashArgs({ a: 2, b: 1 }))
  })

  it('hashes a lossy rendering otherwise, marked so it never equals a canonical hash', () => {
    assert.equal(hashAnyway(NaN), sha('unrepresentable:null'))
    assert.notEqual(hashAnyway(NaN), hashArgs(null))
    assert.equal(hashAnyway({ n: 10n }), sha('unrepresentable:[object Object]'))
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    assert.equal(hashAnyway(cycle), sha('unrepresentable:[object Object]'))
    assert.equal(hashAnyway(10n), sha('unrepresentable:10'))
  })
})
