import assert from 'node:assert/strict'
import { KernelWriter } from '../../../core/kernel/store-writer.ts'
import { it } from 'node:test'
import { runEvents, runStoreContract } from '../../../test/contracts/store.ts'
import { MemoryStore } from '../memory-store.ts'

runStoreContract('store-memory', () => new MemoryStore(1_000_000))

it('store-memory refuses appends beyond maxEventsPerRun', async () => {
  const store = new MemoryStore(3)
  await store.append('r', runEvents('r', 1, 3), 0, { writer: KernelWriter })
  await assert.rejects(async () => store.append('r', runEvents('r', 4, 1), 3, { writer: KernelWriter }), {
    code: 'invalid_event',
    message: /more than 3 events/,
  })
})
