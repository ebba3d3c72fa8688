/**
 * store-sqlite's threads and artifacts beyond the shared contract suite: the migration of a database
 * of the version before, processes racing for one turn on one file, and stored rows that were edited.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { KernelWriter } from '../../../core/kernel/store-writer.ts'
import { endEvent, runEvents } from '../../../test/contracts/store.ts'
import { tempDir } from '../../../test/temp.ts'
import { migrations, SchemaVersion } from '../schema.ts'
import { SqliteStore } from '../sqlite-store.ts'

const open = (file: string) => new SqliteStore(file, { synchronous: 'full', snapshotEvery: 500, busyTimeoutMs: 5000 })
const w = { writer: KernelWriter }

function turn(store: SqliteStore, runId: string, threadId: string, n: number, agent = 'a') {
  store.append(runId, runEvents(runId, 1, 2, agent), 0, { ...w, thread: { id: threadId, turn: n, agent } })
}

/**
 * A process that tries, for each thread in `threads`, to add `runPrefix-<thread>` as turn `n`, once
 * told to go (so that two start together); resolves with each outcome.
 */
function racer(file: string, runPrefix: string, threads: string[], n: number) {
  const child = spawn(
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
      const store = new SqliteStore(${JSON.stringify(file)}, { synchronous: 'normal', snapshotEvery: 500, busyTimeoutMs: 60000 })
      process.stdout.write('ready\\n')
      process.stdin.once('data', () => {
        const out = {}
        for (const id of ${JSON.stringify(threads)}) {
          const runId = ${JSON.stringify(runPrefix)} + '-' + id
          try {
            store.append(runId, runEvents(runId, 1, 2), 0, { writer: KernelWriter, thread: { id, turn: ${n}, agent: 'a' } })
            out[id] = 'won'
          } catch (error) {
            out[id] = error.code ?? String(error)
          }
        }
        store.close()
        process.stdout.write(JSON.stringify(out))
        process.stdin.destroy()
      })
    `,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  let text = ''
  let onReady: () => void
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  child.stdout.on('data', (chunk) => {
    text += chunk
    if (text.includes('ready\n')) onReady()
  })
  const outcome = new Promise<Record<string, string>>((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(text.slice(text.indexOf('\n') + 1))) : reject(new Error(`racer ${runPrefix} exited with ${code}`)),
    ),
  )
  return { ready, outcome, go: () => child.stdin.write('go\n') }
}

/** Two racers, started together once both are ready. */
async function race(file: string, threads: string[], n: number, names: [string, string]) {
  const racers = names.map((name) => racer(file, name, threads, n))
  await Promise.all(racers.map((r) => r.ready))
  for (const r of racers) r.go()
  return Promise.all(racers.map((r) => r.outcome))
}

describe('store-sqlite threads and artifacts', () => {
  it('migrates a database of store-sqlite 1.4.0 (schema 4): its runs stay, and it gains threads and artifacts', async () => {
    const file = join(tempDir(), 'runs.db')
    const old = new Database(file)
    old.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
    for (const migration of migrations.slice(0, 4)) migration(old)
    old.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', '4')").run()
    old.close()
    // A run written by the schema before (through the store, then the schema taken back to 4).
    const first = open(file)
    first.append('r1', runEvents('r1', 1, 3), 0, w)
    first.close()
    const back = new Database(file)
    back.exec(
      "UPDATE meta SET value = '4' WHERE key = 'schema_version'; DROP INDEX runs_thread_turn; ALTER TABLE runs DROP COLUMN thread_id; ALTER TABLE runs DROP COLUMN turn; DROP TABLE threads; DROP TABLE artifact_blobs; DROP TABLE artifact_listings",
    )
    back.close()

    const store = open(file)
    assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 3))
    const [summary] = await store.list()
    assert.deepEqual([summary.runId, summary.threadId, summary.turn], ['r1', undefined, undefined])
    turn(store, 'r2', 't1', 1)
    assert.equal((await store.thread('t1'))?.lastRunId, 'r2')
    const ref = await store.putArtifact(
      { runId: 'r1', bytes: new Uint8Array([1, 2, 3]), mediaType: 'application/octet-stream' },
      KernelWriter,
    )
    assert.deepEqual(await store.readArtifact(ref.ref), new Uint8Array([1, 2, 3]))
    store.close()
    const db = new Database(file)
    assert.equal(
      (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string }).value,
      String(SchemaVersion),
    )
    db.close()
  })

  it('lets one of two processes racing for the same turn on one file win, and refuses the other with thread_busy', async () => {
    const file = join(tempDir(), 'runs.db')
    const store = open(file)
    const threads = Array.from({ length: 25 }, (_, i) => `t${i}`)
    for (const id of threads) {
      turn(store, `first-${id}`, id, 1)
      store.append(`first-${id}`, [endEvent(`first-${id}`, 3)], 2, w)
    }
    const fresh = threads.map((id) => `new-${id}`)
    // Turn 2 of existing threads, and turn 1 of new ones, from two processes at once.
    const [a, b] = await race(file, [...threads, ...fresh], 1, ['a', 'b'])
    // (turn 1 of an existing thread is refused for both: thread_busy)
    for (const id of threads) assert.deepEqual([a[id], b[id]], ['thread_busy', 'thread_busy'], id)
    for (const id of fresh) assert.deepEqual([a[id], b[id]].sort(), ['thread_busy', 'won'], `${id}: ${a[id]} / ${b[id]}`)
    const [c, d] = await race(file, threads, 2, ['c', 'd'])
    for (const id of threads) {
      assert.deepEqual([c[id], d[id]].sort(), ['thread_busy', 'won'], `${id}: ${c[id]} / ${d[id]}`)
      const turns = await store.threadTurns(id)
      assert.deepEqual(
        turns.map((t) => t.runId),
        [`first-${id}`, `${c[id] === 'won' ? 'c' : 'd'}-${id}`],
      )
    }
    // The losers wrote nothing.
    const runs = await store.list({ limit: 1000 })
    assert.equal(runs.length, threads.length * 2 + fresh.length)
    store.close()
  })

  it('keeps one blob for the same bytes stored twice, with two listings', async () => {
    const file = join(tempDir(), 'runs.db')
    const store = open(file)
    store.append('r1', runEvents('r1', 1, 1), 0, w)
    const bytes = new TextEncoder().encode('same bytes')
    const one = await store.putArtifact({ runId: 'r1', actionId: 'a1', bytes, mediaType: 'text/plain' }, KernelWriter)
    const two = await store.putArtifact({ runId: 'r1', actionId: 'a2', bytes, mediaType: 'text/plain' }, KernelWriter)
    assert.equal(one.ref, two.ref)
    const db = new Database(file)
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM artifact_blobs').get(), { n: 1 })
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM artifact_listings').get(), { n: 2 })
    db.close()
    store.close()
  })

  it('refuses thread rows edited behind its back with store_corrupt', async () => {
    const file = join(tempDir(), 'runs.db')
    const store = open(file)
    turn(store, 'r1', 't1', 1)
    store.append('r1', [endEvent('r1', 3)], 2, w)
    turn(store, 'r2', 't1', 2)
    const db = new Database(file)
    db.exec("UPDATE runs SET status = 'HACKED' WHERE run_id = 'r2'")
    await assert.rejects(store.threadTurns('t1'), { code: 'store_corrupt' })
    await assert.rejects(store.thread('t1'), { code: 'store_corrupt' })
    db.exec("UPDATE runs SET status = 'RUNNING', turn = 3 WHERE run_id = 'r2'")
    await assert.rejects(store.threadTurns('t1'), { code: 'store_corrupt', message: /gap/ })
    db.exec(
      "UPDATE runs SET turn = 2 WHERE run_id = 'r2'; UPDATE threads SET thread_id = 'bad id'; UPDATE runs SET thread_id = 'bad id' WHERE thread_id = 't1'",
    )
    await assert.rejects(store.threads(), { code: 'store_corrupt' })
    db.close()
    store.close()
  })
})
