import assert from 'node:assert/strict'
import { KernelWriter } from '../../core/store-writer.ts'
import { after, describe, it } from 'node:test'
import { runEvents, runStoreContract } from '../../test/contracts/store.ts'
import { PostgresStore } from './postgres-store.ts'

/**
 * Needs a PostgreSQL server: CORDAGE_PG_URL (`.ci/run` starts one and sets it). Without it the tests
 * are skipped here, but never in CI, where a missing server is a failure.
 */
const url = process.env.CORDAGE_PG_URL
const skip = !url && !process.env.CI ? 'no PostgreSQL: set CORDAGE_PG_URL (bash .ci/run starts a server and sets it)' : false
const opened: PostgresStore[] = []
let n = 0
const open = async () => {
  if (!url) throw new Error('CORDAGE_PG_URL is not set; CI must provide a PostgreSQL server')
  const store = new PostgresStore(url, `t${process.pid}_${Date.now().toString(36)}_${n++}`, 4, 500)
  await store.start()
  opened.push(store)
  return store
}
after(async () => { for (const s of opened) await s.close() })

describe('store-postgres', { skip }, () => {
  runStoreContract('store-postgres', open)

  it('loads from the newest snapshot and the events after it', async () => {
    const store = await open()
    await store.append('r1', runEvents('r1', 1, 10), 0, { snapshot: { version: 1, state: { at: 10 } }, writer: KernelWriter })
    await store.append('r1', runEvents('r1', 11, 2), 10, { writer: KernelWriter })
    const run = await store.loadRun('r1')
    assert.deepEqual(run.snapshot, { seq: 10, version: 1, state: { at: 10 } })
    assert.deepEqual(run.events.map((e) => e.seq), [11, 12])
  })

  it('says which schema a run is missing from', async () => {
    const store = await open()
    await assert.rejects(store.load('nope'), { code: 'run_not_found', message: new RegExp(`no run nope in PostgreSQL schema ${store.schema}`) })
  })
})
