/**
 * core/kernel/store-writer.ts and assertKernelWriter (core/contracts/services/store.ts): run stores take writes from the
 * kernel's writer only, compared by identity.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as writerModule from '../../core/kernel/store-writer.ts'
import { KernelWriter } from '../../core/kernel/store-writer.ts'
import type { StoreService } from '../../core/contracts/services/store.ts'
import { assertKernelWriter } from '../../core/kernel/store-writer.ts'

describe('the kernel writer', () => {
  it('is frozen, and names itself', () => {
    assert.ok(Object.isFrozen(KernelWriter))
    assert.deepEqual({ ...KernelWriter }, { writer: 'cordage-kernel' })
  })

  it('is accepted by assertKernelWriter', () => {
    assert.doesNotThrow(() => assertKernelWriter(KernelWriter, 'append to run r1'))
  })

  it('is the only writer accepted: a copy, a look-alike, nothing, refused with store_write_refused', () => {
    for (const writer of [
      { ...KernelWriter },
      { writer: 'cordage-kernel' },
      Object.create(KernelWriter),
      undefined,
      null,
      'cordage-kernel',
    ]) {
      assert.throws(() => assertKernelWriter(writer, 'append to run r1'), {
        code: 'store_write_refused',
        message:
          "append to run r1 refused: run stores take writes from the kernel only (a plugin may read runs, never write them); steer runs with the kernel's commands: approve, reject, resume, cancel",
      })
    }
  })
})

/** guardStore (since the red-team fixes): the kernel writes only through a store's own, frozen code. */
const guardStore = (writerModule as { guardStore?: <S extends StoreService>(store: S) => S }).guardStore
describe('guardStore', { skip: guardStore === undefined ? 'guardStore is not in core/kernel/store-writer.ts' : false }, () => {
  const Methods = ['append', 'claim', 'renew', 'release', 'claimNext', 'requestCancel', 'putGrant', 'revokeGrant']
  class Sealed {
    append() {}
    claim() {}
    renew() {}
    release() {}
    claimNext() {}
    requestCancel() {}
  }
  Object.freeze(Sealed.prototype)
  class Open {
    append() {}
  }

  it('passes an instance of a frozen class, and a frozen object, twice alike', () => {
    const store = new Sealed() as unknown as StoreService
    assert.equal(guardStore!(store), store)
    const frozen = Object.freeze({ append() {}, claim() {} }) as unknown as StoreService
    assert.equal(guardStore!(frozen), frozen)
    assert.equal(guardStore!(frozen), frozen)
    const frozenInstance = Object.freeze(new Open()) as unknown as StoreService
    assert.equal(guardStore!(frozenInstance), frozenInstance, 'a frozen object is its own code, whatever its class')
  })

  it('refuses a write method set on the store object, naming it', () => {
    for (const method of Methods) {
      // Plain assignment fails over a frozen prototype's method; defineProperty is what an attacker uses.
      const store = new Sealed() as unknown as Record<string, unknown>
      Object.defineProperty(store, method, { value: () => {}, enumerable: true, configurable: true, writable: true })
      assert.throws(
        () => guardStore!(store as unknown as StoreService),
        {
          code: 'store_write_refused',
          message: `the store's ${method} is a property set on the store object, not the store's own method: something replaced it (a plugin catching the kernel's writer?); the kernel writes nothing through it`,
        },
        method,
      )
    }
  })

  it('refuses a store whose class prototype is not frozen, or that has none', () => {
    const message =
      "the store's class prototype is not frozen, so anyone holding the store could replace its write methods: a store plugin freezes its class (Object.freeze(MyStore.prototype)) or provides a frozen object"
    assert.throws(() => guardStore!(new Open() as unknown as StoreService), { code: 'store_write_refused', message })
    assert.throws(() => guardStore!(Object.create(null) as StoreService), { code: 'store_write_refused', message })
  })

  it('lets other own properties be', () => {
    const store = Object.assign(new Sealed(), { file: 'runs.db', snapshotEvery: 5 }) as unknown as StoreService
    assert.equal(guardStore!(store), store)
  })
})
