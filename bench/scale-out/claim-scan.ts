/**
 * What one claim costs as finished runs pile up: store-postgres keeps every run, and `claimNext` looks
 * for the oldest claimable one. A scratch schema (the real migrations) gets H finished runs and 8 runs
 * being driven; the claim statement store-postgres sends is explained (EXPLAIN ANALYZE, rolled back)
 * when nothing is claimable (an idle worker's poll) and with a queue, for the rows it reads and its
 * time in the server; the real claimNext is timed too. Then the same with a partial index over the
 * claimable statuses only, to show what leaving finished runs out of the scan changes.
 *
 *   CORDAGE_PG_URL=... node --import tsx bench/scale-out/claim-scan.ts [--quick]
 */
import pg from 'pg'
import { PostgresStore } from '../../plugins/store-postgres/postgres-store.ts'
import { KernelWriter } from '../../core/kernel/store-writer.ts'
import { quantile } from './report.ts'

const url = process.env.CORDAGE_PG_URL
if (!url) {
  console.log('claim-scan: skipped: set CORDAGE_PG_URL to measure claims on PostgreSQL')
  process.exit(0)
}
const quick = process.argv.includes('--quick')
const histories = quick ? [0, 10_000] : [0, 10_000, 100_000, 1_000_000]
const samples = quick ? 10 : 30
const Backlog = 10_000
const columns = 'run_id, agent, task, status, last_seq, created_at, updated_at, lease_worker, lease_token, lease_expires, lease_released'

interface Cost {
  /** Rows the scan looked at (returned and filtered out). */
  rows: number
  /** Execution time in the server, ms (EXPLAIN ANALYZE). */
  server: number
  /** Median round trip of the real claimNext, ms. */
  client: number
  index: string
}

const db = new pg.Client({ connectionString: url })
await db.connect()
console.log(`claimNext with finished runs in the table: rows scanned, server ms (EXPLAIN ANALYZE), client ms (median of ${samples})`)
console.log(
  `${''.padStart(16)}${['idle poll, nothing queued', `${samples * 2} runs queued`, `${Backlog} more queued, analyzed`, 'burst drained, idle poll'].map((h) => h.padEnd(42)).join('')}`,
)
console.log(`finished  partial${'     rows  server  client  index          '.repeat(4)}`)
try {
  for (const history of histories) {
    const schema = `claim_scan_${process.pid}_${history}`
    const store = new PostgresStore(url, schema, 2, 500)
    try {
      await store.start()
      await fill(schema, history)
      for (const partial of [false, true]) {
        if (partial) {
          await db.query(`CREATE INDEX runs_queue ON ${schema}.runs (created_at, run_id) WHERE status IN ('RUNNING', 'CANCELLING')`)
          await fill(schema, 0)
        }
        const idle = await cost(store, schema)
        await queue(schema, samples * 2)
        const short = await cost(store, schema)
        // A burst, once autovacuum has analyzed the table: the planner now knows many runs are claimable.
        await queue(schema, Backlog, samples * 2)
        await db.query(`ANALYZE ${schema}.runs`)
        const burst = await cost(store, schema)
        // The burst drained: too few rows changed for autovacuum to analyze again, so the plan stays.
        await db.query(`UPDATE ${schema}.runs SET status = 'COMPLETED' WHERE run_id LIKE 'queued_%'`)
        const after = await cost(store, schema)
        const c = (x: Cost) =>
          `${String(x.rows).padStart(8)} ${x.server.toFixed(2).padStart(7)} ${x.client.toFixed(2).padStart(7)}  ${x.index.padEnd(15)}`
        console.log(`${String(history).padStart(8)}  ${partial ? 'yes' : 'no '}   ${[idle, short, burst, after].map(c).join(' ')}`)
      }
    } finally {
      await store.dropSchema().catch(() => {})
      await store.close()
    }
  }
} finally {
  await db.end()
}

/** H finished runs (older than anything claimable, as in a store in use), 8 runs being driven, no queue. */
async function fill(schema: string, history: number) {
  const now = Date.now()
  if (history)
    await db.query(
      `INSERT INTO ${schema}.runs (${columns}) SELECT 'done_' || i, 'orders', 'task', 'COMPLETED', 20, ${now - 10_000_000} + i, 0, 'w', 1, 0, TRUE FROM generate_series(1, $1::int) AS i`,
      [history],
    )
  await db.query(`DELETE FROM ${schema}.runs WHERE run_id LIKE 'live_%' OR run_id LIKE 'queued_%'`)
  await db.query(
    `INSERT INTO ${schema}.runs (${columns}) SELECT 'live_' || i, 'orders', 'task', 'RUNNING', 20, ${now} + i, 0, 'w' || i, 1, ${now + 3_600_000}, FALSE FROM generate_series(1, 8) AS i`,
  )
  await db.query(`ANALYZE ${schema}.runs`)
}

/** Runs submitted after the 8 being driven, claimable. */
async function queue(schema: string, n: number, after = 0) {
  await db.query(
    `INSERT INTO ${schema}.runs (run_id, agent, task, status, last_seq, created_at, updated_at) SELECT 'queued_' || i, 'orders', 'task', 'RUNNING', 2, ${Date.now() + 100} + i, 0 FROM generate_series($2::int + 1, $2::int + $1::int) AS i`,
    [n, after],
  )
}

async function cost(store: PostgresStore, schema: string): Promise<Cost> {
  const sent = await captureClaim(store)
  await db.query('BEGIN')
  let explained: { Plan: PlanNode; 'Execution Time': number }
  try {
    await db.query(`SET LOCAL search_path TO ${schema}`)
    explained = (
      await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sent.text}`,
        sent.values,
      )
    ).rows[0]['QUERY PLAN'][0]
  } finally {
    await db.query('ROLLBACK')
  }
  const times: number[] = []
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now()
    const lease = await store.claimNext('bench', 60_000, { agents: ['orders'] }, KernelWriter)
    times.push(performance.now() - t0)
    // Put a claimed run back, so every sample sees the same queue.
    if (lease) await db.query(`UPDATE ${schema}.runs SET lease_released = TRUE, lease_token = 0 WHERE run_id = $1`, [lease.runId])
  }
  // The scans that look for a candidate: not the primary-key lookup of the UPDATE, not a bitmap's index half.
  const scans = nodes(explained.Plan).filter(
    (n) => /Scan$/.test(n['Node Type']) && n['Relation Name'] === 'runs' && n['Index Name'] !== 'runs_pkey',
  )
  return {
    rows: scans.reduce((a, n) => a + n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0), 0),
    server: explained['Execution Time'],
    client: quantile(times, 0.5),
    index: [...new Set(scans.map((n) => n['Index Name'] ?? (n['Node Type'] === 'Seq Scan' ? 'seq scan' : 'bitmap')))].join('+'),
  }
}

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'Actual Rows': number
  'Rows Removed by Filter'?: number
  Plans?: PlanNode[]
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)]
}

/** The claim statement store-postgres sends, exactly: caught at pg's Client.query during one claimNext (rolled back by hand). */
async function captureClaim(store: PostgresStore): Promise<{ text: string; values: unknown[] }> {
  const original = pg.Client.prototype.query
  let sent: { text: string; values: unknown[] } | undefined
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (typeof args[0] === 'string' && args[0].startsWith('WITH candidate')) sent = { text: args[0], values: args[1] as unknown[] }
    return (original as unknown as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof original
  try {
    const lease = await store.claimNext('capture', 60_000, { agents: ['orders'] }, KernelWriter)
    if (lease) await db.query(`UPDATE ${store.schema}.runs SET lease_released = TRUE, lease_token = 0 WHERE run_id = $1`, [lease.runId])
  } finally {
    pg.Client.prototype.query = original
  }
  if (!sent) throw new Error('claimNext sent no claim statement')
  return sent
}
