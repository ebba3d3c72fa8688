import assert from 'node:assert/strict'
import { KernelWriter } from '../../../core/kernel/store-writer.ts'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { runEvents, runStoreContract } from '../../../test/contracts/store.ts'
import { tempDir } from '../../../test/temp.ts'
import { SqliteStore } from '../sqlite-store.ts'
import { migrations, SchemaVersion } from '../schema.ts'
import type { StoreService } from 'cordage'

const open = (file = join(tempDir(), 'runs.db'), chainKey?: string) =>
  new SqliteStore(file, { synchronous: 'full', snapshotEvery: 500, busyTimeoutMs: 2000, chainKey })

/** SQL run on a store's file by another connection: damage, or an edit made behind the store's back. */
function damage(store: StoreService, sql: string) {
  const db = new Database((store as SqliteStore).file)
  try {
    db.exec(sql)
  } finally {
    db.close()
  }
}

runStoreContract('store-sqlite', (options) => open(undefined, options?.chainKey), { damage, link: (hex) => `X'${hex}'` })

describe('store-sqlite', () => {
  it('keeps everything across a close and a reopen (another process would see the same)', async () => {
    const file = join(tempDir(), 'runs.db')
    const first = open(file)
    await first.append('r1', runEvents('r1', 1, 3), 0, { writer: KernelWriter })
    first.close()
    const second = open(file)
    assert.deepEqual(
      (await second.load('r1')).map((e) => e.seq),
      [1, 2, 3],
    )
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
    assert.deepEqual(
      run.events.map((e) => e.seq),
      [16, 17, 18],
    )
    assert.equal((await store.load('r1')).length, 18, 'the log itself is complete')
  })

  it('records its schema version, and refuses a database from a newer store-sqlite', () => {
    const file = join(tempDir(), 'runs.db')
    open(file).close()
    const db = new Database(file)
    assert.equal(
      (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value,
      String(SchemaVersion),
    )
    db.prepare("UPDATE meta SET value = '99' WHERE key = 'schema_version'").run()
    db.close()
    assert.throws(() => open(file), {
      code: 'plugin_start_failed',
      message: new RegExp(`schema version 99; this store-sqlite knows up to ${SchemaVersion}`),
    })
  })

  it('migrates a database of store-sqlite 1.2.0: its runs read, verify as not chained, and chain from where they continue', async () => {
    const file = join(tempDir(), 'runs.db')
    const old = new Database(file)
    old.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
    migrations[0](old)
    migrations[1](old)
    old.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', '2')").run()
    old
      .prepare(
        "INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at) VALUES ('r1', 'a', 'task of r1', 'RUNNING', 3, 1000, 1003)",
      )
      .run()
    for (const event of runEvents('r1', 1, 3))
      old
        .prepare('INSERT INTO events (run_id, seq, type, body) VALUES (?, ?, ?, ?)')
        .run('r1', event.seq, event.type, JSON.stringify(event))
    old
      .prepare(
        "INSERT INTO effects (key, run_id, action_id, tool, args_hash, policy_version, status, attempts, output, started_at) VALUES ('k', 'r1', 's2.a1', 't', 'h', 'p', 'committed', 1, '{\"ok\":true}', 2)",
      )
      .run()
    old.close()

    const store = open(file)
    assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 3))
    assert.deepEqual((await store.effect('k'))?.output, { ok: true })
    assert.equal((await store.effect('k'))?.observation, undefined)
    assert.deepEqual(await store.verify('r1'), { runId: 'r1', events: 3, chained: true, keyed: false, unchainedUpTo: 3 })
    await store.append('r1', runEvents('r1', 4, 2), 3, { writer: KernelWriter })
    const check = await store.verify('r1')
    assert.deepEqual([check.events, check.unchainedUpTo, check.firstBad], [5, 3, undefined])
    assert.match(check.head ?? '', /^[0-9a-f]{64}$/)
    store.close()
  })

  it('reads while another process appends: the link a read starts from is read after its rows, so no read is refused', async () => {
    const file = join(tempDir(), 'runs.db')
    const store = open(file)
    await store.append('r1', runEvents('r1', 1, 1), 0, { writer: KernelWriter })
    const writer = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `
      import { SqliteStore } from './plugins/store-sqlite/sqlite-store.ts'
      import { KernelWriter } from './core/kernel/store-writer.ts'
      import { runEvents } from './test/contracts/store.ts'
      const store = new SqliteStore(${JSON.stringify(file)}, { synchronous: 'normal', snapshotEvery: 500, busyTimeoutMs: 5000 })
      for (let seq = 2; seq <= 1500; seq++) store.append('r1', runEvents('r1', seq, 1), seq - 1, { writer: KernelWriter })
      store.close()
    `,
      ],
      { stdio: 'inherit' },
    )
    let done = false
    const exited = new Promise((resolve) =>
      writer.on('exit', (code) => {
        done = true
        resolve(code)
      }),
    )
    let reads = 0
    while (!done) {
      // Just beyond the head: the event a read starts after is often appended while it reads.
      const after = (await store.list())[0].lastSeq + 1
      for (const events of [await store.read('r1', { after }), await store.read('r1', { after, limit: 1 })])
        events.forEach((e, i) => assert.equal(e.seq, after + i + 1))
      reads++
      await new Promise((resolve) => setImmediate(resolve))
    }
    assert.equal(await exited, 0)
    assert.ok(reads > 10, `${reads} reads while it appended`)
    assert.equal((await store.load('r1')).length, 1500)
    store.close()
  })

  it('drops the snapshots of a database of store-sqlite 1.3.0 (they have no link): its runs load from their events', async () => {
    const file = join(tempDir(), 'runs.db')
    const old = new Database(file)
    old.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
    for (const migration of migrations.slice(0, 3)) migration(old)
    old.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', '3')").run()
    old.close()
    const first = open(file)
    await first.append('r1', runEvents('r1', 1, 3), 0, { writer: KernelWriter })
    first.close()
    // As 1.3.0 kept it: a snapshot without a link.
    const db = new Database(file)
    db.exec(
      "DELETE FROM snapshots; UPDATE meta SET value = '3' WHERE key = 'schema_version'; ALTER TABLE snapshots DROP COLUMN chain; " +
        // and without what schema 5 added (threads, artifacts)
        'DROP INDEX runs_thread_turn; ALTER TABLE runs DROP COLUMN thread_id; ALTER TABLE runs DROP COLUMN turn; DROP TABLE threads; DROP TABLE artifact_blobs; DROP TABLE artifact_listings',
    )
    db.prepare('INSERT INTO snapshots (run_id, seq, version, state) VALUES (?, ?, ?, ?)').run('r1', 3, 1, '{"at":3}')
    db.close()
    const store = open(file)
    assert.deepEqual(await store.loadRun('r1'), { events: runEvents('r1', 1, 3) })
    assert.equal((await store.verify('r1')).firstBad, undefined)
    await store.append('r1', runEvents('r1', 4, 1), 3, { snapshot: { version: 1, state: { at: 4 } }, writer: KernelWriter })
    assert.deepEqual((await store.loadRun('r1')).snapshot, { seq: 4, version: 1, state: { at: 4 } })
    store.close()
  })

  it('grows with the events, not with a copy of the state per step', async () => {
    const store = open()
    await store.append('r1', runEvents('r1', 1, 1), 0, { writer: KernelWriter })
    for (let seq = 2; seq <= 2000; seq++)
      await store.append(
        'r1',
        runEvents('r1', seq, 1),
        seq - 1,
        seq % 500 === 0 ? { snapshot: { version: 1, state: { seq } }, writer: KernelWriter } : { writer: KernelWriter },
      )
    const db = new Database(store.file, { readonly: true })
    assert.equal((db.prepare('SELECT count(*) AS n FROM snapshots').get() as { n: number }).n, 1, 'one snapshot per run, replaced')
    db.close()
  })
})
