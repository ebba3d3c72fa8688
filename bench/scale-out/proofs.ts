/**
 * What must hold after a measurement, read from what the runs and the tool left behind, not from the
 * bench's own bookkeeping: each run claimed once and driven by one worker (its log, its lease token,
 * the workers' output), each effect made once (the order book's own rows, and the store's ledger).
 */
import type { RunEvent, StoreService } from 'cordage'
import type { World } from './setup.ts'
import type { WorkerResult } from './workers.ts'

export interface Proof {
  name: string
  ok: boolean
  /** What was found when it failed (a few run ids at most). */
  detail?: string
}

export interface Evidence {
  world: World
  store: StoreService
  backlog: string[]
  arrivals: string[]
  results: WorkerResult[]
}

export async function prove({ world, store, backlog, arrivals, results }: Evidence): Promise<Proof[]> {
  const ids = [...backlog, ...arrivals]
  const { schema, db } = world
  const proofs: Proof[] = []
  const check = (name: string, bad: string[]) =>
    proofs.push({ name, ok: bad.length === 0, detail: bad.length ? `${bad.length}: ${bad.slice(0, 4).join('; ')}` : undefined })

  check(
    'every worker exited cleanly when stopped (none died)',
    results.filter((r) => r.code !== 0).map((r) => `pid ${r.pid} ${r.signal ?? `exit ${r.code}`}: ${r.stderr.trim().split('\n').at(-1)}`),
  )

  const runs = (
    await db.query<{ run_id: string; status: string; lease_token: number }>(`SELECT run_id, status, lease_token FROM ${schema}.runs`)
  ).rows
  const known = new Set(ids)
  check('the schema holds exactly the submitted runs', [
    ...runs.filter((r) => !known.has(r.run_id)).map((r) => `unexpected ${r.run_id}`),
    ...ids.filter((id) => !runs.some((r) => r.run_id === id)).map((id) => `missing ${id}`),
  ])
  check(
    'every run COMPLETED',
    runs.filter((r) => r.status !== 'COMPLETED').map((r) => `${r.run_id} ${r.status}`),
  )
  // Each claim adds one to the token; a submitted run starts at 0.
  check(
    'every run was claimed once (lease token 1)',
    runs.filter((r) => r.lease_token !== 1).map((r) => `${r.run_id} token ${r.lease_token}`),
  )

  const logBad: string[] = []
  for (const id of ids) {
    // store.load checks the log as it reads it: numbering without gaps, bodies, the hash chain.
    const events: RunEvent[] = await store.load(id).catch((error: Error) => {
      logBad.push(`${id}: ${error.message}`)
      return []
    })
    const n = (type: string) => events.filter((e) => e.type === type).length
    if (!events.length) continue
    if (n('run/start') !== 1 || n('run/end') !== 1 || events.at(-1)!.type !== 'run/end' || n('run/recovered') !== 0)
      logBad.push(
        `${id}: ${n('run/start')} run/start, ${n('run/end')} run/end (last: ${events.at(-1)!.type}), ${n('run/recovered')} run/recovered`,
      )
    if (n('tool/start') !== 1 || n('tool/end') !== 1) logBad.push(`${id}: ${n('tool/start')} tool/start, ${n('tool/end')} tool/end`)
  }
  check('every log: one run/start, one run/end (last), one tool call, no run/recovered', logBad)

  const drivenBy = new Map<string, number[]>()
  for (const r of results) for (const id of r.ended) drivenBy.set(id, [...(drivenBy.get(id) ?? []), r.pid])
  check(
    'every run was driven to its end by exactly one worker (their output)',
    ids.filter((id) => drivenBy.get(id)?.length !== 1).map((id) => `${id} by [${drivenBy.get(id)?.join(', ') ?? ''}]`),
  )
  const claimed = new Map<string, number>()
  for (const r of results) for (const s of r.statements) if (s.runId) claimed.set(s.runId, (claimed.get(s.runId) ?? 0) + 1)
  check(
    'every run was returned by exactly one claim (the workers’ statements)',
    ids.filter((id) => claimed.get(id) !== 1).map((id) => `${id} claimed ${claimed.get(id) ?? 0} time(s)`),
  )

  const orders = (
    await db.query<{ key: string; run_id: string; n: string; token: number | null }>(
      `SELECT key, run_id, count(*) OVER (PARTITION BY key) AS n, token FROM ${world.orders}`,
    )
  ).rows
  const perRun = new Map<string, number>()
  for (const o of orders) perRun.set(o.run_id, (perRun.get(o.run_id) ?? 0) + 1)
  check('the order book (the tool’s own table) has one row per run, each key once, written under token 1', [
    ...ids.filter((id) => perRun.get(id) !== 1).map((id) => `${id}: ${perRun.get(id) ?? 0} row(s)`),
    ...orders.filter((o) => Number(o.n) !== 1).map((o) => `key ${o.key} ${o.n} times`),
    ...orders.filter((o) => !known.has(o.run_id)).map((o) => `row of unknown run ${o.run_id}`),
    ...orders.filter((o) => o.token !== 1).map((o) => `${o.run_id} written under token ${o.token}`),
  ])
  const ledger = (
    await db.query<{ run_id: string; n: number; committed: number; attempts: number }>(
      `SELECT run_id, count(*)::int AS n, (count(*) FILTER (WHERE status = 'committed'))::int AS committed, max(attempts) AS attempts FROM ${schema}.effects GROUP BY run_id`,
    )
  ).rows
  check(
    'the store’s ledger has one committed entry per run, attempted once',
    ids
      .map((id) => [id, ledger.find((l) => l.run_id === id)] as const)
      .filter(([, l]) => !l || l.n !== 1 || l.committed !== 1 || l.attempts !== 1)
      .map(([id, l]) => `${id}: ${l ? `${l.n} entries, ${l.committed} committed, ${l.attempts} attempts` : 'none'}`),
  )
  return proofs
}
