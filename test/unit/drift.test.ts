/**
 * core/kit/drift.ts: which plugins differ from those a run started with, and the decision for each.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { driftChanges, type DriftRules } from '../../core/kit/drift.ts'

const agent = (over: Partial<DriftRules> = {}): DriftRules => ({
  plugins: { a: '1.0.0', b: '2.0.0' },
  hashes: { a: 'h-a', b: 'h-b' },
  pinned: {},
  driftPolicies: {},
  ...over,
})

describe('driftChanges', () => {
  it('finds nothing when versions and hashes match, or a hash is unknown on either side', () => {
    assert.deepEqual(driftChanges({ plugins: { a: '1.0.0', b: '2.0.0' }, hashes: { a: 'h-a', b: 'h-b' } }, agent(), false), [])
    assert.deepEqual(driftChanges({ plugins: { a: '1.0.0', b: '2.0.0' } }, agent(), false), [])
    assert.deepEqual(driftChanges({ plugins: { a: '1.0.0', b: '2.0.0' }, hashes: { a: 'h-a' } }, agent({ hashes: {} }), false), [])
  })

  it('refuses by default a version changed, a plugin added or removed, and other content at one version', () => {
    const changes = driftChanges({ plugins: { a: '0.9.0', b: '2.0.0', c: '1.0.0' }, hashes: { a: 'h-a', b: 'old' } }, agent(), false)
    assert.deepEqual(
      changes.map((c) => [c.plugin, c.from, c.to, c.decision]),
      [
        ['a', '0.9.0', '1.0.0', 'refused'],
        ['b', '2.0.0', '2.0.0', 'refused'],
        ['c', '1.0.0', undefined, 'refused'],
      ],
    )
    assert.deepEqual([changes[1].fromHash, changes[1].toHash], ['old', 'h-b'])
    assert.equal(Object.hasOwn(changes[2], 'fromHash'), false, 'no hash keys when neither side has one')
  })

  it('accepts what --accept-drift or onDrift: accept says, pins what the runtime pins, and notes a pin it cannot honour', () => {
    const recorded = { plugins: { a: '0.9.0', b: '1.0.0' } }
    assert.deepEqual(
      driftChanges(recorded, agent(), true).map((c) => c.decision),
      ['accepted', 'accepted'],
    )
    const mixed = driftChanges(recorded, agent({ driftPolicies: { a: 'accept', b: 'pin' }, pinned: {} }), false)
    assert.deepEqual(
      mixed.map((c) => [c.plugin, c.decision]),
      [
        ['a', 'accepted'],
        ['b', 'refused'],
      ],
    )
    assert.match(mixed[1].note ?? '', /^cannot pin: b@1\.0\.0 is not installed here$/)
    const pinned = driftChanges(recorded, agent({ pinned: { a: { version: '0.9.0', hash: 'h-old' } } }), false)
    assert.deepEqual(pinned[0], { plugin: 'a', from: '0.9.0', to: '0.9.0', fromHash: undefined, toHash: 'h-old', decision: 'pinned' })
  })

  it('reads pins and policies as own keys: a plugin named like an Object method is refused, not pinned or accepted', () => {
    const changes = driftChanges({ plugins: { constructor: '1.0.0', toString: '1.0.0' } }, agent(), false)
    assert.deepEqual(
      changes.filter((c) => c.plugin === 'constructor' || c.plugin === 'toString').map((c) => c.decision),
      ['refused', 'refused'],
    )
    // What it reports is the record's own: absent on the side that does not have it, not Object's method.
    const only = changes.find((c) => c.plugin === 'constructor')!
    assert.deepEqual([only.from, only.to], ['1.0.0', undefined])
    const added = driftChanges(
      { plugins: { a: '1.0.0', b: '2.0.0' } },
      agent({ plugins: { a: '1.0.0', b: '2.0.0', valueOf: '1.0.0' } }),
      false,
    )
    assert.deepEqual(
      added.map((c) => [c.plugin, c.from, c.to]),
      [['valueOf', undefined, '1.0.0']],
    )
  })
})
