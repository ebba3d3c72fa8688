/**
 * What this PostgreSQL can serve, without the workers in the way: pgbench (C, light on the client)
 * replays the statements one run of the scale-out bench sends to store-postgres (counted by
 * scale-out.ts: the submit, the claim, two loads, six appends with the ledger, the release and the
 * tool's row), on a scratch schema made by the real migrations, at 1 to 32 connections. Apart, the
 * statements workers repeat by time: an empty claim (an idle worker's poll), a cancel watch and a
 * lease renewal (of a busy one). These are the capacities docs/concepts/scaling.md divides the load
 * of 100 and 1,000 workers by. The SQL is store-postgres's (postgres-store.ts), with the values written in.
 *
 *   CORDAGE_PG_URL=... node --import tsx bench/scale-out/capacity.ts [--quick]
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { PostgresStore } from '../../plugins/store-postgres/postgres-store.ts'

const url = process.env.CORDAGE_PG_URL
if (!url) {
  console.log('capacity: skipped: set CORDAGE_PG_URL to measure PostgreSQL')
  process.exit(0)
}
const quick = process.argv.includes('--quick')
const seconds = quick ? 2 : 6
const clients = quick ? [1, 8] : [1, 4, 8, 16, 32]

const now = `(extract(epoch from clock_timestamp()) * 1000)::bigint`
const run = `'r' || :n`
const body = `'{"pad":"${'x'.repeat(300)}"}'`
const chain = `decode('${'ab'.repeat(32)}', 'hex')`
const claim = `WITH candidate AS (
  SELECT run_id, CASE WHEN lease_released THEN NULL ELSE lease_worker END AS previous FROM runs
  WHERE status IN ('RUNNING', 'CANCELLING') AND (lease_released OR lease_expires <= ${now})
    AND ('{orders}'::text[] IS NULL OR agent = ANY('{orders}'::text[])) AND NOT (run_id = ANY('{}'::text[]))
  ORDER BY created_at, run_id LIMIT 1 FOR UPDATE SKIP LOCKED)
UPDATE runs SET lease_worker = 'w' || :client_id, lease_token = runs.lease_token + 1, lease_expires = ${now} + 1200, lease_released = FALSE
FROM candidate WHERE runs.run_id = candidate.run_id RETURNING runs.run_id, runs.lease_token, runs.lease_expires, candidate.previous;`
const lock = `SELECT runs.*, (SELECT encode(chain, 'hex') FROM events WHERE events.run_id = runs.run_id AND events.seq = runs.last_seq) AS head FROM runs WHERE run_id = ${run} FOR UPDATE;`
const events = (from: number, count: number) =>
  `INSERT INTO events (run_id, seq, type, body, chain) VALUES ${Array.from({ length: count }, (_, i) => `(${run}, ${from + i}, 'step/start', ${body}, ${chain})`).join(', ')};`
const append = (from: number, count: number, extra: string[] = [], status = 'RUNNING') =>
  [
    'BEGIN;',
    lock,
    `UPDATE runs SET status = '${status}', failure_code = NULL, last_seq = ${from + count - 1}, updated_at = ${now}, agent = 'orders' WHERE run_id = ${run};`,
    ...extra,
    events(from, count),
    'COMMIT;',
  ].join('\n')
const load = [
  `SELECT last_seq FROM runs WHERE run_id = ${run};`,
  `SELECT s.seq, s.version, s.state, encode(s.chain, 'hex') AS chain, e.seq AS event_seq, encode(e.chain, 'hex') AS event_chain FROM snapshots s LEFT JOIN events e ON e.run_id = s.run_id AND e.seq = s.seq WHERE s.run_id = ${run};`,
  `SELECT seq, CASE WHEN seq > 0 THEN body END AS body, encode(chain, 'hex') AS chain FROM events WHERE run_id = ${run} AND seq > 0 ORDER BY seq;`,
].join('\n')
const watch = `SELECT cancel_by, cancel_reason, cancel_at FROM runs WHERE run_id = ${run};`
const key = `${run} || '/s1.a1'`

const renew = `UPDATE runs SET lease_expires = ${now} + 1200 WHERE run_id = ${run} AND lease_token = 1 AND NOT lease_released;`

/**
 * One run of the scale-out bench, statement for statement (its table of statements per run), but for
 * the ones timers send while a run is driven (cancel watches, renewals): those go by time, not by run,
 * and are measured on their own.
 */
const oneRun = [
  "SELECT nextval('ids') AS n \\gset",
  [
    'BEGIN;',
    lock,
    `INSERT INTO runs (run_id, agent, task, status, failure_code, last_seq, created_at, updated_at, lease_worker, lease_token, lease_expires, lease_released) VALUES (${run}, 'orders', 'task', 'RUNNING', NULL, 2, ${now}, ${now}, NULL, 0, ${now}, TRUE) ON CONFLICT (run_id) DO NOTHING;`,
    events(1, 2),
    'COMMIT;',
  ].join('\n'),
  claim,
  load,
  watch,
  load,
  append(3, 3),
  `SELECT * FROM effects WHERE key = ${key};`,
  append(6, 4, [
    `INSERT INTO effects (key, run_id, action_id, tool, args_hash, policy_version, status, attempts, started_at) VALUES (${key}, ${run}, 's1.a1', 'record_order', 'h', 'p', 'pending', 1, ${now}) ON CONFLICT (key) DO NOTHING;`,
  ]),
  `INSERT INTO orders (key, run_id) VALUES (${key}, ${run});`,
  append(10, 1, [
    `UPDATE effects SET status = 'committed', receipt = '"1"', output = '{}', observation = NULL, ended_at = ${now} WHERE key = ${key};`,
  ]),
  append(11, 4),
  append(15, 2),
  append(17, 5, [`UPDATE runs SET cancel_by = NULL, cancel_reason = NULL, cancel_at = NULL WHERE run_id = ${run};`], 'COMPLETED'),
  `UPDATE runs SET lease_released = TRUE WHERE run_id = ${run} AND lease_token = 1;`,
].join('\n')

const scripts = {
  run: oneRun,
  // The statements a worker repeats while it waits or drives, on a table of finished runs.
  poll: claim.replaceAll(':client_id', "'idle'"),
  watch: `\\set n random(1, 10000)\n${watch}`,
  renew: `\\set n random(1, 10000)\n${renew}`,
}

const db = new pg.Client({ connectionString: url })
await db.connect()
const schema = `capacity_${process.pid}`
const store = new PostgresStore(url, schema, 1, 500)
const dir = mkdtempSync(join(tmpdir(), 'cordage-capacity-'))
try {
  await store.start()
  await db.query(`SET search_path TO ${schema}`)
  await db.query('CREATE SEQUENCE ids; CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, key TEXT, run_id TEXT)')
  // Finished runs for the polls and the watches to look at: a store that has been in use a little.
  await db.query(
    // Their leases still held, so a renewal writes, as a real one does (and commits: a WAL flush).
    `INSERT INTO runs (run_id, agent, task, status, last_seq, created_at, updated_at, lease_token, lease_released) SELECT 'r' || i, 'orders', 'task', 'COMPLETED', 21, ${now} - 1000000 + i, 0, 1, FALSE FROM generate_series(1, 10000) AS i`,
  )
  await db.query("SELECT setval('ids', 10000)")
  await db.query('ANALYZE runs')
  console.log(`PostgreSQL capacity for store-postgres's statements (pgbench -M extended, ${seconds} s per figure)`)
  for (const [name, text] of Object.entries(scripts)) {
    writeFileSync(join(dir, `${name}.sql`), text)
    const figures = clients.map((c) => `${c}: ${pgbench(join(dir, `${name}.sql`), c).toFixed(0)}`)
    console.log(`  ${name.padEnd(6)} per second at N connections   ${figures.join('   ')}`)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
  await store.dropSchema().catch(() => {})
  await store.close()
  await db.end()
}

/** Transactions (script runs) per second. */
function pgbench(file: string, connections: number): number {
  const target = new URL(url!)
  const out = execFileSync(
    'pgbench',
    ['-n', '-M', 'extended', '-c', String(connections), '-j', String(Math.min(2, connections)), '-T', String(seconds), '-f', file],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        PGHOST: target.hostname,
        PGPORT: target.port || '5432',
        PGUSER: decodeURIComponent(target.username),
        PGPASSWORD: decodeURIComponent(target.password),
        PGDATABASE: target.pathname.slice(1),
        PGOPTIONS: `-c search_path=${schema}`,
      },
    },
  )
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out)
  if (!tps) throw new Error(`pgbench said:\n${out}`)
  return Number(tps[1])
}
