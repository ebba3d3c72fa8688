import assert from 'node:assert/strict'
import { KernelWriter } from '../../../core/kernel/store-writer.ts'
import { after, describe, it } from 'node:test'
import { runEvents, runStoreContract } from '../../../test/contracts/store.ts'
import pg from 'pg'
import type { StoreService } from 'cordage'
import { PostgresStore } from '../postgres-store.ts'
import { migrations } from '../schema.ts'

/**
 * Needs a PostgreSQL server: CORDAGE_PG_URL (`.ci/run` starts one and sets it). Without it the tests
 * are skipped here, but never in CI, where a missing server is a failure.
 */
const url = process.env.CORDAGE_PG_URL
const skip = !url && !process.env.CI ? 'no PostgreSQL: set CORDAGE_PG_URL (bash .ci/run starts a server and sets it)' : false
const opened: PostgresStore[] = []
let n = 0
const open = async (options: { chainKey?: string } = {}) => {
  if (!url) throw new Error('CORDAGE_PG_URL is not set; CI must provide a PostgreSQL server')
  const store = new PostgresStore(url, `t${process.pid}_${Date.now().toString(36)}_${n++}`, 4, 500, { chainKey: options.chainKey })
  await store.start()
  opened.push(store)
  return store
}
after(async () => {
  for (const s of opened) {
    await s.dropSchema().catch(() => {})
    await s.close()
  }
})

/** SQL run in a store's schema by another connection: damage, or an edit made behind the store's back. */
async function damage(store: StoreService, sql: string) {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${(store as PostgresStore).schema}` })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

describe('store-postgres', { skip }, () => {
  runStoreContract('store-postgres', (options) => open(options), { damage, link: (hex) => `decode('${hex}', 'hex')` })

  it('loads from the newest snapshot and the events after it', async () => {
    const store = await open()
    await store.append('r1', runEvents('r1', 1, 10), 0, { snapshot: { version: 1, state: { at: 10 } }, writer: KernelWriter })
    await store.append('r1', runEvents('r1', 11, 2), 10, { writer: KernelWriter })
    const run = await store.loadRun('r1')
    assert.deepEqual(run.snapshot, { seq: 10, version: 1, state: { at: 10 } })
    assert.deepEqual(
      run.events.map((e) => e.seq),
      [11, 12],
    )
  })

  it('migrates a schema of store-postgres 1.2.0: its runs read, verify as not chained, and chain from where they continue', async () => {
    const schema = `t${process.pid}_${Date.now().toString(36)}_old`
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(
        `CREATE SCHEMA ${schema}; SET search_path TO ${schema}; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      )
      await client.query(migrations[0])
      await client.query(migrations[1])
      await client.query("INSERT INTO meta (key, value) VALUES ('schema_version', '2')")
      await client.query(
        "INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at) VALUES ('r1', 'a', 'task of r1', 'RUNNING', 3, 1000, 1003)",
      )
      for (const event of runEvents('r1', 1, 3))
        await client.query('INSERT INTO events (run_id, seq, type, body) VALUES ($1, $2, $3, $4)', [
          'r1',
          event.seq,
          event.type,
          JSON.stringify(event),
        ])
      await client.query(
        `INSERT INTO effects (key, run_id, action_id, tool, args_hash, policy_version, status, attempts, output, started_at) VALUES ('k', 'r1', 's2.a1', 't', 'h', 'p', 'committed', 1, '{"ok":true}', 2)`,
      )
    } finally {
      await client.end()
    }
    const store = new PostgresStore(url, schema, 2, 500)
    opened.push(store)
    await store.start()
    assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 3))
    assert.deepEqual([(await store.effect('k'))?.output, (await store.effect('k'))?.observation], [{ ok: true }, undefined])
    assert.deepEqual(await store.verify('r1'), { runId: 'r1', events: 3, chained: true, keyed: false, unchainedUpTo: 3 })
    await store.append('r1', runEvents('r1', 4, 2), 3, { writer: KernelWriter })
    const check = await store.verify('r1')
    assert.deepEqual([check.events, check.unchainedUpTo, check.firstBad], [5, 3, undefined])
    assert.match(check.head ?? '', /^[0-9a-f]{64}$/)
  })

  it('reads while another worker appends: the link a read starts from is read in the same statement as its rows, so no read is refused', async () => {
    const store = await open()
    // Another worker: a second pool on the same schema.
    const other = new PostgresStore(url, store.schema, 2, 500)
    try {
      await other.start()
      await store.append('r1', runEvents('r1', 1, 1), 0, { writer: KernelWriter })
      let last = 1
      let done = false
      const writing = (async () => {
        for (; last < 200; last++) await other.append('r1', runEvents('r1', last + 1, 1), last, { writer: KernelWriter })
        done = true
      })()
      let reads = 0
      const reader = async () => {
        while (!done) {
          // Just beyond the head: the event a read starts after is often appended while it reads.
          const after = last + 1
          for (const events of await Promise.all([store.read('r1', { after }), store.read('r1', { after, limit: 1 })]))
            events.forEach((e, i) => assert.equal(e.seq, after + i + 1))
          reads++
        }
      }
      await Promise.all([writing, reader(), reader()])
      assert.ok(reads > 10, `${reads} reads while it appended`)
      assert.equal((await store.load('r1')).length, 200)
    } finally {
      await other.close()
    }
  })

  it('drops the snapshots of a schema of store-postgres 1.3.0 (they have no link): its runs load from their events', async () => {
    const schema = `t${process.pid}_${Date.now().toString(36)}_v3`
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(
        `CREATE SCHEMA ${schema}; SET search_path TO ${schema}; CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      )
      for (const migration of migrations.slice(0, 3)) await client.query(migration)
      await client.query("INSERT INTO meta (key, value) VALUES ('schema_version', '3')")
      await client.query(
        "INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at) VALUES ('r1', 'a', 'task of r1', 'RUNNING', 3, 1000, 1003)",
      )
      for (const event of runEvents('r1', 1, 3))
        await client.query('INSERT INTO events (run_id, seq, type, body) VALUES ($1, $2, $3, $4)', [
          'r1',
          event.seq,
          event.type,
          JSON.stringify(event),
        ])
      await client.query(`INSERT INTO snapshots (run_id, seq, version, state) VALUES ('r1', 3, 1, '{"at":3}')`)
    } finally {
      await client.end()
    }
    const store = new PostgresStore(url, schema, 2, 500)
    opened.push(store)
    await store.start()
    assert.deepEqual(await store.loadRun('r1'), { events: runEvents('r1', 1, 3) })
    await store.append('r1', runEvents('r1', 4, 1), 3, { snapshot: { version: 1, state: { at: 4 } }, writer: KernelWriter })
    assert.deepEqual((await store.loadRun('r1')).snapshot, { seq: 4, version: 1, state: { at: 4 } })
    assert.equal((await store.verify('r1')).firstBad, undefined)
  })

  it('verifies a long run page by page', async () => {
    const store = await open()
    // With a snapshot at seq 2500, checked when its page comes.
    for (let from = 1; from <= 4500; from += 500)
      await store.append(
        'r1',
        runEvents('r1', from, 500),
        from - 1,
        from === 2001 ? { snapshot: { version: 1, state: { at: 2500 } }, writer: KernelWriter } : { writer: KernelWriter },
      )
    const check = await store.verify('r1')
    assert.deepEqual([check.events, check.firstBad], [4500, undefined])
    await damage(store, `UPDATE events SET body = replace(body, '"index":4321', '"index":1') WHERE run_id = 'r1' AND seq = 4321`)
    assert.equal((await store.verify('r1')).firstBad?.seq, 4321)
    await damage(store, `UPDATE snapshots SET state = '{"at":2501}' WHERE run_id = 'r1'`)
    assert.equal((await store.verify('r1')).firstBad?.seq, 2500)
  })

  it('says which schema a run is missing from', async () => {
    const store = await open()
    await assert.rejects(store.load('nope'), {
      code: 'run_not_found',
      message: new RegExp(`no run nope in PostgreSQL schema ${store.schema}`),
    })
  })
})

describe('store-postgres: a claim does not read finished runs', { skip }, () => {
  it('after a burst of submissions, ANALYZE and the burst drained, a claim reads the queue, not the history', async () => {
    const store = await open()
    const client = new pg.Client({ connectionString: url, options: `-c search_path=${store.schema}` })
    await client.connect()
    try {
      const columns =
        'run_id, agent, task, status, last_seq, created_at, updated_at, lease_worker, lease_token, lease_expires, lease_released'
      const now = Date.now()
      // 30,000 finished runs, older than anything claimable, as in a store that has been in use.
      await client.query(
        `INSERT INTO runs (${columns}) SELECT 'done_' || i, 'orders', 'task', 'COMPLETED', 20, ${now - 10_000_000} + i, 0, 'w', 1, 0, TRUE FROM generate_series(1, 30000) AS i`,
      )
      // A burst the statistics see, then drained: the plan that walked every finished run.
      await client.query(
        `INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at) SELECT 'queued_' || i, 'orders', 'task', 'RUNNING', 2, ${now} + i, 0 FROM generate_series(1, 10000) AS i`,
      )
      await client.query('ANALYZE runs')
      await client.query(`UPDATE runs SET status = 'COMPLETED' WHERE run_id LIKE 'queued_%'`)
      await client.query(
        `INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at) VALUES ('waiting', 'orders', 'task', 'RUNNING', 2, ${now + 20_000}, 0)`,
      )
      // The statement claimNext sends, explained in a transaction that is rolled back.
      let sent: { text: string; values: unknown[] } | undefined
      const pool = (store as unknown as { pool: pg.Pool }).pool
      const original = pool.query.bind(pool)
      pool.query = ((text: string, values: unknown[]) => {
        if (/FOR UPDATE SKIP LOCKED/.test(text)) sent = { text, values }
        return original(text, values)
      }) as typeof pool.query
      const lease = await store.claimNext('w1', 60_000, {}, KernelWriter)
      pool.query = original as typeof pool.query
      assert.equal(lease?.runId, 'waiting')
      assert.ok(sent, 'claimNext sent its claim statement')
      await client.query(`UPDATE runs SET status = 'RUNNING', lease_released = TRUE WHERE run_id = 'waiting'`)
      await client.query('BEGIN')
      const plan = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sent.text}`, sent.values)).rows[0]['QUERY PLAN'][0].Plan
      await client.query('ROLLBACK')
      const read = (node: any): number =>
        (node['Actual Rows'] ?? 0) +
        (node['Rows Removed by Filter'] ?? 0) +
        (node.Plans ?? []).reduce((n: number, p: any) => n + read(p), 0)
      assert.ok(read(plan) < 100, `the claim read ${read(plan)} rows of 40,001`)
    } finally {
      await client.end()
    }
  })
})
