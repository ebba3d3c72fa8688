import assert from 'node:assert/strict'
import { KernelWriter } from '../../core/store-writer.ts'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { runEvents, runStoreContract } from '../../test/contracts/store.ts'
import { tempDir } from '../../test/helpers.ts'
import { SqliteStore } from './sqlite-store.ts'
import { SchemaVersion } from './schema.ts'

const open = (file = join(tempDir(), 'runs.db')) => new SqliteStore(file, { synchronous: 'full', snapshotEvery: 500, busyTimeoutMs: 2000 })

runStoreContract('store-sqlite', () => open())

describe('store-sqlite', () => {
  it('keeps everything across a close and a reopen (another process would see the same)', async () => {
    const file = join(tempDir(), 'runs.db')
    const first = open(file)
    await first.append('r1', runEvents('r1', 1, 3), 0, { writer: KernelWriter })
    first.close()
    const second = open(file)
    assert.deepEqual((await second.load('r1')).map((e) => e.seq), [1, 2, 3])
    assert.equal((await second.list())[0].lastSeq, 3)
    second.close()
  })

  it('loads a long run from its newest snapshot and the events after it', async () => {
    const store = open()
    await store.append('r1', runEvents('r1', 1, 10), 0, { writer: KernelWriter })
    await store.append('r1', runEvents('r1', 11, 5), 10, { snapshot: { version: 1, state: { at: 15 } }, writer: KernelWriter })
    await store.append('r1', runEvents('r1', 16, 3), 15, { writer: KernelWriter })
    const run = await store.loadRun('r1')
    assert.deepEqual(run.snapshot, { seq: 15, version: 1, state: { at: 15 } })
    assert.deepEqual(run.events.map((e) => e.seq), [16, 17, 18])
    assert.equal((await store.load('r1')).length, 18, 'the log itself is complete')
  })

  it('records its schema version, and refuses a database from a newer store-sqlite', () => {
    const file = join(tempDir(), 'runs.db')
    open(file).close()
    const db = new Database(file)
    assert.equal((db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value, String(SchemaVersion))
    db.prepare("UPDATE meta SET value = '99' WHERE key = 'schema_version'").run()
    db.close()
    assert.throws(() => open(file), { code: 'plugin_start_failed', message: /schema version 99; this store-sqlite knows up to 2/ })
  })

  it('grows with the events, not with a copy of the state per step', async () => {
    const store = open()
    await store.append('r1', runEvents('r1', 1, 1), 0, { writer: KernelWriter })
    for (let seq = 2; seq <= 2000; seq++) await store.append('r1', runEvents('r1', seq, 1), seq - 1, seq % 500 === 0 ? { snapshot: { version: 1, state: { seq } }, writer: KernelWriter } : { writer: KernelWriter })
    const db = new Database(store.file, { readonly: true })
    assert.equal((db.prepare('SELECT count(*) AS n FROM snapshots').get() as { n: number }).n, 1, 'one snapshot per run, replaced')
    db.close()
  })
})
