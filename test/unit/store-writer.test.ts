/**
 * core/store-writer.ts and assertKernelWriter (core/services/store.ts): run stores take writes from the
 * kernel's writer only, compared by identity.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KernelWriter } from '../../core/store-writer.ts'
import { assertKernelWriter } from '../../core/services/store.ts'

describe('the kernel writer', () => {
  it('is frozen, and names itself', () => {
    assert.ok(Object.isFrozen(KernelWriter))
    assert.deepEqual({ ...KernelWriter }, { writer: 'cordage-kernel' })
  })

  it('is accepted by assertKernelWriter', () => {
    assert.doesNotThrow(() => assertKernelWriter(KernelWriter, 'append to run r1'))
  })

  it('is the only writer accepted: a copy, a look-alike, nothing, refused with store_write_refused', () => {
    for (const writer of [{ ...KernelWriter }, { writer: 'cordage-kernel' }, Object.create(KernelWriter), undefined, null, 'cordage-kernel']) {
      assert.throws(() => assertKernelWriter(writer, 'append to run r1'), {
        code: 'store_write_refused',
        message: 'append to run r1 refused: run stores take writes from the kernel only (a plugin may read runs, never write them); steer runs with the kernel\'s commands: approve, reject, resume, cancel',
      })
    }
  })
})
