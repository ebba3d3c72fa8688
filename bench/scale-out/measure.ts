/**
 * One measurement: W workers on a fresh schema. First a backlog of runs submitted at once, drained as
 * fast as the workers go (runs per second, renewals, the claim statement under contention); then runs
 * arriving one by one, per worker at half the rate one worker drains (claim latency: from the moment a
 * run can be claimed to its claim, with workers that are idle and polling, as most of the time).
 */
import { join } from 'node:path'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { Cordage } from 'cordage/host'
import { Agent, openWorld, type Shape, type World } from './setup.ts'
import { Workers, type WorkerResult } from './workers.ts'
import { countStatements, type Statement } from './statements.ts'
import { prove, type Proof } from './proofs.ts'

export interface Plan extends Shape {
  workers: number
  backlog: number
  /** Arrivals per second of the second phase, per worker; undefined: half the drain rate of this measurement. */
  arrivalRate?: number
  /** Runs of the second phase, per worker. */
  arrivals: number
}

export interface Measurement {
  plan: Plan
  backlog: string[]
  arrivals: string[]
  arrivalRate: number
  /** From the first claim of the backlog to its last run/end. */
  drain: { from: number; to: number; rate: number }
  /** Milliseconds from a run's submission (committed) to its claim, for the runs of the second phase. */
  claimLatency: number[]
  /** Round trip of each successful claim statement during the drain. */
  claimStatementMs: number[]
  renewalsPerSecond: number
  /** Empty claims (a poll that found nothing) per worker per second, during the second phase. */
  idlePolls: number
  /** Most connections of the store pools (all workers) seen open at once during the drain. */
  connections: number
  /** Events each run stored, and their mean size (the JSON body). */
  events: { perRun: number; bytes: number }
  /** Server-wide WAL syncs during the drain, and the commits this measurement made in it. */
  wal: { syncs: number; commits: number }
  workerStatements: Statement[]
  submitStatements: Statement[]
  results: WorkerResult[]
  proofs: Proof[]
}

const wallNow = () => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const local = countStatements()

export async function measure(url: string, plan: Plan): Promise<Measurement> {
  const world = await openWorld(url, plan.workers, plan)
  // The bench's own agent submits the runs: AgentRuntime.submit, as an application does. It migrates
  // the schema first, so the workers start on a ready one.
  let app: Cordage | undefined
  let workers: Workers | undefined
  try {
    app = await Cordage.fromPreset(world.submitPreset)
    const agent = app.agent(Agent)
    workers = new Workers(world.presetFile, plan.workers, mkdtempSync(join(tmpdir(), 'cordage-probe-')), plan.pollMs)
    await workers.ready(90_000)
    const submittedAt = new Map<string, number>()
    const submit = async (i: number) => {
      const id = await agent.submit(`order ${i}`)
      submittedAt.set(id, wallNow())
      return id
    }
    // While the workers run, this process sends nothing but submissions (its bookkeeping is not counted).
    const fromStatement = local.length

    const wal0 = await walSyncs(world)
    const connections = sampleConnections(world)
    const backlog: string[] = []
    // Eight at a time: the backlog is in the queue well before one worker could drain it.
    for (let i = 0; i < plan.backlog; i += 8)
      backlog.push(...(await Promise.all(Array.from({ length: Math.min(8, plan.backlog - i) }, (_, j) => submit(i + j)))))
    await settled(world, backlog, 180_000)
    const maxConnections = await connections.stop()
    const wal1 = await walSyncs(world)
    const walWindow = { from: Math.min(...submittedAt.values()), to: wallNow() }

    const drained = await drainRate(world, backlog)
    // The same load per worker at every count: half of what one worker drains.
    const arrivalRate = plan.workers * (plan.arrivalRate ?? drained.rate / 2)
    const arrivals: string[] = []
    const arrivalsFrom = wallNow()
    for (const at of poissonTimes(arrivalRate, plan.arrivals * plan.workers)) {
      await sleep(arrivalsFrom + at - wallNow())
      arrivals.push(await submit(plan.backlog + arrivals.length))
    }
    const arrivalsTo = wallNow()
    await settled(world, arrivals, 60_000)

    const events = (
      await world.db.query<{ n: string; bytes: string }>(
        `SELECT count(*) AS n, coalesce(sum(length(body)), 0) AS bytes FROM ${world.schema}.events`,
      )
    ).rows[0]
    const submitted = local.slice(fromStatement)
    const results = await workers.stop(15_000)
    workers = undefined
    const statements = results.flatMap((r) => r.statements)
    const claims = new Map(statements.filter((s) => s.runId).map((s) => [s.runId!, s]))
    const inDrain = (s: Statement) => s.at >= drained.from && s.at <= drained.to
    const walCommits = [...statements, ...submitted].filter((s) => s.at >= walWindow.from && s.at <= walWindow.to && commits(s)).length
    const proofs = await prove({ world, store: agent.store(), backlog, arrivals, results })
    return {
      plan,
      backlog,
      arrivals,
      arrivalRate,
      drain: drained,
      claimLatency: arrivals.filter((id) => claims.has(id)).map((id) => claims.get(id)!.at - submittedAt.get(id)!),
      claimStatementMs: backlog.filter((id) => claims.has(id)).map((id) => claims.get(id)!.ms),
      renewalsPerSecond:
        statements.filter((s) => s.kind === 'renew' && s.rows > 0 && inDrain(s)).length / ((drained.to - drained.from) / 1000),
      idlePolls:
        statements.filter((s) => s.kind === 'claimNext' && s.rows === 0 && s.at >= arrivalsFrom && s.at <= arrivalsTo).length /
        plan.workers /
        ((arrivalsTo - arrivalsFrom) / 1000),
      connections: maxConnections,
      events: { perRun: Number(events.n) / (backlog.length + arrivals.length), bytes: Number(events.bytes) / Number(events.n) },
      wal: { syncs: wal1 - wal0, commits: walCommits },
      workerStatements: statements,
      submitStatements: submitted,
      results,
      proofs,
    }
  } finally {
    await workers?.stop(5_000)
    await app?.stop()
    await world.close()
  }
}

/** A statement that ends in a commit that flushes WAL: a COMMIT, or a write outside a transaction that changed a row. */
export function commits(s: Statement): boolean {
  return s.kind === 'tx: COMMIT' || (s.auto && s.rows > 0)
}

/** Waits until every one of `ids` is in the store and none is still RUNNING. */
async function settled(world: World, ids: string[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const { rows } = await world.db.query<{ open: string }>(
      `SELECT count(*) AS open FROM ${world.schema}.runs WHERE run_id = ANY($1) AND status IN ('CREATED', 'RUNNING', 'CANCELLING')`,
      [ids],
    )
    const missing = ids.length - (await count(world, ids))
    if (Number(rows[0].open) === 0 && missing === 0) return
    if (Date.now() > until) throw new Error(`${rows[0].open} run(s) still running after ${timeoutMs} ms in schema ${world.schema}`)
    await sleep(50)
  }
}

async function count(world: World, ids: string[]): Promise<number> {
  const { rows } = await world.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${world.schema}.runs WHERE run_id = ANY($1)`, [ids])
  return Number(rows[0].n)
}

/**
 * The drain's window, from the log: from the first claim (the first step/start of a backlog run, seq 3,
 * recorded after its claim) to the last run/end. Waiting for the first poll is left out.
 */
async function drainRate(world: World, ids: string[]): Promise<{ from: number; to: number; rate: number }> {
  const { rows } = await world.db.query<{ first: string; last: string }>(
    `SELECT min((body::json->>'time')::bigint) FILTER (WHERE seq = 3) AS first, max((body::json->>'time')::bigint) FILTER (WHERE type = 'run/end') AS last
     FROM ${world.schema}.events WHERE run_id = ANY($1)`,
    [ids],
  )
  const from = Number(rows[0].first)
  const to = Number(rows[0].last)
  if (!(to > from)) throw new Error(`the drain's window makes no sense: from ${rows[0].first} to ${rows[0].last}`)
  return { from, to, rate: ids.length / ((to - from) / 1000) }
}

/** Every 100 ms, the store connections of this measurement's workers that are open; `stop` gives the most seen. */
function sampleConnections(world: World): { stop(): Promise<number> } {
  let most = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const { rows } = await world.db.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [
        world.schema,
      ])
      most = Math.max(most, Number(rows[0].n))
      await sleep(100)
    }
  })()
  return {
    async stop() {
      running = false
      await loop
      return most
    },
  }
}

async function walSyncs(world: World): Promise<number> {
  const { rows } = await world.db.query<{ n: string }>('SELECT wal_sync AS n FROM pg_stat_wal')
  return Number(rows[0].n)
}

/** `count` arrival times (ms from the start) of a Poisson process, seeded: the same sequence at every count. */
function poissonTimes(perSecond: number, count: number): number[] {
  if (!(perSecond > 0 && Number.isFinite(perSecond))) throw new Error(`arrival rate ${perSecond}/s: expected a positive number`)
  let seed = 0x5ca1e
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const times: number[] = []
  for (let t = 0; times.length < count; ) times.push((t += -Math.log(1 - random()) * (1000 / perSecond)))
  return times
}
