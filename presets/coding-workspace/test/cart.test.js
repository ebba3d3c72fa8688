import assert from 'node:assert/strict'
import { test } from 'node:test'
import { total } from '../src/cart.js'

test('adds up price times quantity', () => {
  assert.equal(total([{ price: 3, quantity: 2 }, { price: 4, quantity: 1 }]), 10)
})

test('takes a discount given in percent', () => {
  assert.equal(total([{ price: 10, quantity: 2 }], 10), 18)
})

test('refuses a discount over 100 percent', () => {
  assert.throws(() => total([], 150), RangeError)
})
