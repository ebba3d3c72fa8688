/**
 * store-postgres's threads and artifacts beyond the shared contract suite: the migration of a schema
 * of the version before, two stores (two pools of connections) racing for one turn, and stored rows
 * that were edited. Needs CORDAGE_PG_URL, like index.test.ts.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import pg from 'pg'
import { KernelWriter } from '../../../core/kernel/store-writer.ts'
import { endEvent, runEvents } from '../../../test/contracts/store.ts'
import { PostgresStore } from '../postgres-store.ts'
import { migrations, SchemaVersion } from '../schema.ts'

const url = process.env.CORDAGE_PG_URL
const skip = !url && !process.env.CI ? 'no PostgreSQL: set CORDAGE_PG_URL (bash .ci/run starts a server and sets it)' : false
const w = { writer: KernelWriter }
const opened: PostgresStore[] = []
let n = 0
const fresh = () => `t${process.pid}_${Date.now().toString(36)}_ta${n++}`

async function open(schema = fresh()) {
  if (!url) throw new Error('CORDAGE_PG_URL is not set; CI must provide a PostgreSQL server')
  const store = new PostgresStore(url, schema, 4, 500)
  await store.start()
  opened.push(store)
  return store
}

after(async () => {
  const dropped = new Set<string>()
  for (const s of opened) {
    if (!dropped.has(s.schema)) await s.dropSchema().catch(() => {})
    dropped.add(s.schema)
    await s.close()
  }
})

async function sql(schema: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
  await client.connect()
  try {
    return (await client.query(text, params)).rows
  } finally {
    await client.end()
  }
}

const turn = (store: PostgresStore, runId: string, threadId: string, t: number) =>
  store.append(runId, runEvents(runId, 1, 2), 0, { ...w, thread: { id: threadId, turn: t, agent: 'a' } })

/** Each outcome of adding `prefix-<thread>` as turn `t` of each thread, all at once. */
async function attempts(store: PostgresStore, prefix: string, threads: string[], t: number): Promise<Record<string, string>> {
  const results = await Promise.allSettled(threads.map((id) => turn(store, `${prefix}-${id}`, id, t)))
  return Object.fromEntries(
    threads.map((id, i) => {
      const r = results[i]
      return [id, r.status === 'fulfilled' ? 'won' : ((r.reason as { code?: string }).code ?? String(r.reason))]
    }),
  )
}

describe('store-postgres threads and artifacts', { skip }, () => {
  it('migrates a schema at version 5 (before threads and artifacts): its runs stay, and it gains threads and artifacts', async () => {
    const schema = fresh()
    await sql('public', `CREATE SCHEMA ${schema}`)
    await sql(schema, 'CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
    for (const migration of migrations.slice(0, 5)) await sql(schema, migration)
    await sql(schema, "INSERT INTO meta (key, value) VALUES ('schema_version', '5')")
    await sql(
      schema,
      "INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at) VALUES ('r1', 'a', 'task of r1', 'RUNNING', 1, 1000, 1000)",
    )
    const [start] = runEvents('r1', 1, 1)
    await sql(schema, 'INSERT INTO events (run_id, seq, type, body) VALUES ($1, $2, $3, $4)', ['r1', 1, start.type, JSON.stringify(start)])

    const store = await open(schema)
    assert.deepEqual(await store.load('r1'), [start])
    const [summary] = await store.list()
    assert.deepEqual([summary.runId, summary.threadId, summary.turn], ['r1', undefined, undefined])
    await turn(store, 'r2', 't1', 1)
    assert.equal((await store.thread('t1'))?.lastRunId, 'r2')
    const ref = await store.putArtifact(
      { runId: 'r1', bytes: new Uint8Array([1, 2, 3]), mediaType: 'application/octet-stream' },
      KernelWriter,
    )
    assert.deepEqual(await store.readArtifact(ref.ref), new Uint8Array([1, 2, 3]))
    assert.deepEqual(await sql(schema, "SELECT value FROM meta WHERE key = 'schema_version'"), [{ value: String(SchemaVersion) }])
  })

  it('lets one of two stores (their own connections) racing for the same turn win, and refuses the other with thread_busy', async () => {
    const one = await open()
    const two = await open(one.schema)
    const threads = Array.from({ length: 20 }, (_, i) => `t${i}`)
    for (const id of threads) {
      await turn(one, `first-${id}`, id, 1)
      await one.append(`first-${id}`, [endEvent(`first-${id}`, 3)], 2, w)
    }
    const news = threads.map((id) => `new-${id}`)
    // Turn 1 of new threads, from both at once: one creates each thread.
    const [a, b] = await Promise.all([attempts(one, 'a', news, 1), attempts(two, 'b', news, 1)])
    for (const id of news) assert.deepEqual([a[id], b[id]].sort(), ['thread_busy', 'won'], `${id}: ${a[id]} / ${b[id]}`)
    // Turn 2 of threads whose turn 1 ended, from both at once: one takes each turn.
    const [c, d] = await Promise.all([attempts(one, 'c', threads, 2), attempts(two, 'd', threads, 2)])
    for (const id of threads) {
      assert.deepEqual([c[id], d[id]].sort(), ['thread_busy', 'won'], `${id}: ${c[id]} / ${d[id]}`)
      assert.deepEqual(
        (await two.threadTurns(id)).map((t) => t.runId),
        [`first-${id}`, `${c[id] === 'won' ? 'c' : 'd'}-${id}`],
      )
    }
    // The losers wrote nothing.
    assert.equal((await one.list({ limit: 1000 })).length, threads.length * 2 + news.length)
    assert.deepEqual(await sql(one.schema, 'SELECT count(*)::int AS n FROM events'), [
      { n: threads.length * 3 + (threads.length + news.length) * 2 },
    ])
  })

  it('keeps one blob for the same bytes stored twice, with two listings; reads a range of a large blob', async () => {
    const store = await open()
    await store.append('r1', runEvents('r1', 1, 1), 0, w)
    const bytes = new TextEncoder().encode('same bytes')
    const first = await store.putArtifact({ runId: 'r1', actionId: 'a1', bytes, mediaType: 'text/plain' }, KernelWriter)
    const again = await store.putArtifact({ runId: 'r1', actionId: 'a2', bytes, mediaType: 'text/plain' }, KernelWriter)
    assert.equal(first.ref, again.ref)
    assert.deepEqual(await sql(store.schema, 'SELECT count(*)::int AS n FROM artifact_blobs'), [{ n: 1 }])
    assert.deepEqual(await sql(store.schema, 'SELECT count(*)::int AS n FROM artifact_listings'), [{ n: 2 }])
    // An offset beyond what a PostgreSQL integer holds is past the end, not an error.
    assert.deepEqual(await store.readArtifact(first.ref, { offset: 2 ** 40, length: 4 }), new Uint8Array(0))
  })

  it('refuses thread rows edited behind its back with store_corrupt', async () => {
    const store = await open()
    await turn(store, 'r1', 't1', 1)
    await store.append('r1', [endEvent('r1', 3)], 2, w)
    await turn(store, 'r2', 't1', 2)
    await sql(store.schema, "UPDATE runs SET status = 'HACKED' WHERE run_id = 'r2'")
    await assert.rejects(store.threadTurns('t1'), { code: 'store_corrupt' })
    await assert.rejects(store.thread('t1'), { code: 'store_corrupt' })
    await sql(store.schema, "UPDATE runs SET status = 'RUNNING', turn = 3 WHERE run_id = 'r2'")
    await assert.rejects(store.threadTurns('t1'), { code: 'store_corrupt', message: /gap/ })
  })
})
