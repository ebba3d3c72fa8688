/**
 * core/kit/freeze.ts: what is on record cannot change, and only what deepFreeze froze all the way down
 * counts as deeply frozen (the hash cache relies on it).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { deepFreeze, isDeepFrozen } from '../../core/kit/freeze.ts'

describe('deepFreeze', () => {
  it('freezes every object and array inside, and returns the value itself', () => {
    const value = { a: { b: [1, { c: 2 }] }, d: 'x' }
    assert.equal(deepFreeze(value), value)
    for (const part of [value, value.a, value.a.b, value.a.b[1]]) assert.ok(Object.isFrozen(part))
    for (const part of [value, value.a, value.a.b, value.a.b[1] as object]) assert.ok(isDeepFrozen(part))
  })

  it('walks a value that was frozen at the top only, and freezes its members', () => {
    const inner = { x: 1 }
    const top = Object.freeze({ inner })
    deepFreeze(top)
    assert.ok(Object.isFrozen(inner))
    assert.ok(isDeepFrozen(top))
  })

  it('ends on a cycle', () => {
    const a: Record<string, unknown> = { n: 1 }
    a.self = a
    a.list = [a]
    deepFreeze(a)
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a.list))
  })

  it('leaves primitives as they are', () => {
    assert.equal(deepFreeze(3), 3)
    assert.equal(deepFreeze(null), null)
    assert.equal(deepFreeze('s'), 's')
  })
})

describe('isDeepFrozen', () => {
  it('is false for a value frozen by Object.freeze alone, or not frozen', () => {
    assert.equal(isDeepFrozen(Object.freeze({ a: {} })), false)
    assert.equal(isDeepFrozen({}), false)
    assert.equal(isDeepFrozen(Object.freeze([])), false)
  })
})
