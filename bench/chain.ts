/**
 * node --import tsx bench/chain.ts [--quick] — what the hash chain of the log costs.
 *
 * The stores chain each event to the one before (core/kit/store-kit.ts): chain_n = H(chain_{n-1} + "\n" +
 * body_n), inside the append transaction, over the body text they write anyway. So the cost is one
 * hash per event, and one primary-key read per append (the link of the run's last event). Measured,
 * always against the same store with the chain off (SqliteStore / PostgresStore `chain: false`, a
 * bench-only option), alternating the two in rounds in the same process:
 *
 * 1. The hash alone, per event, on the bodies of a real run (SHA-256 and HMAC-SHA-256).
 * 2. store-sqlite appends of one step's events (the batch the kernel writes at a read-only tool step),
 *    on a database in memory (no disk: the CPU cost at its most visible), and on a file with
 *    synchronous=FULL (what the default preset does); and the bytes an event takes in the file.
 * 3. Whole Cordage steps per second on store-sqlite (synchronous=FULL, and NORMAL), kernel and all.
 * 4. PostgreSQL appends of a step's events on loopback, when CORDAGE_PG_URL is set.
 * 5. The check on load: every load recomputes the links of the rows it returns, and a snapshot's link
 *    (core/kit/store-kit.ts chainedEventsFromRows, checkedSnapshot). The check alone against the row
 *    checks without it, per event and per KB of snapshot; a whole load of a long run on store-sqlite,
 *    and on PostgreSQL when CORDAGE_PG_URL is set, against the same store with the chain off.
 *
 * `--loads` runs section 5 only.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import Database from 'better-sqlite3'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { z } from 'zod'
import {
  chainedEventsFromRows,
  chainHash,
  checkedSnapshot,
  createAgentContext,
  definePlugin,
  defineTool,
  eventsFromRows,
  snapshotFromRow,
  snapshotLink,
  type CordagePlugin,
  type RunEvent,
} from 'cordage'
import { AgentRuntime } from '../core/kernel/agent.ts'
import { KernelWriter } from '../core/kernel/store-writer.ts'
import contextBasic from '../plugins/context-basic/index.ts'
import toolsRegistry from '../plugins/tools-registry/index.ts'
import policyRules from '../plugins/policy-rules/index.ts'
import verifierBasic from '../plugins/verifier-basic/index.ts'
import { SqliteStore } from '../plugins/store-sqlite/sqlite-store.ts'
import { PostgresStore } from '../plugins/store-postgres/postgres-store.ts'

const quick = process.argv.includes('--quick')
const loadsOnly = process.argv.includes('--loads')
const roundMs = quick ? 100 : 200
const rounds = quick ? 5 : 25
const dir = mkdtempSync(join(tmpdir(), 'cordage-chain-'))
const key = 'bench-chain-key-0123456789abcdef'
let files = 0

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * Rounds of `roundMs` alternating A and B (B first in every other round, so neither always follows
 * the other); each one's per-round means in microseconds per `op` call: the median, and the best
 * round (on a busy machine the best round is the closer estimate of what the work itself costs).
 */
interface Pair {
  a: number
  b: number
  bestA: number
  bestB: number
}
/**
 * `cpu` counts this process's CPU time (user + system) instead of the wall clock: for work that does
 * not wait on a disk or a server it is the cost itself, and other processes on the machine disturb it
 * far less.
 */
async function ab(a: () => unknown, b: () => unknown, clock: 'wall' | 'cpu' = 'wall'): Promise<Pair> {
  const cpu = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  const now = clock === 'cpu' ? cpu : () => performance.now()
  const timed = async (op: () => unknown) => {
    let n = 0
    const w0 = performance.now()
    const t0 = now()
    while (performance.now() - w0 < roundMs) {
      await op()
      n++
    }
    return ((now() - t0) * 1000) / n
  }
  await timed(a)
  await timed(b)
  const as: number[] = []
  const bs: number[] = []
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      bs.push(await timed(b))
      as.push(await timed(a))
    } else {
      as.push(await timed(a))
      bs.push(await timed(b))
    }
  }
  return { a: median(as), b: median(bs), bestA: Math.min(...as), bestB: Math.min(...bs) }
}

// --- a bench agent: scripted model, a no-op read-only tool, store-sqlite with or without the chain

class Script {
  steps = 1
  respond(request: { stepIndex: number }) {
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
    if (request.stepIndex < this.steps) return { decision: { kind: 'tool_calls' as const, calls: [{ name: 'noop', args: {} }] }, usage }
    return { decision: { kind: 'final' as const, text: 'done' }, usage }
  }
}

async function agent(options: { chain: boolean; synchronous: 'full' | 'normal'; file?: string }) {
  const ctx = createAgentContext(new Context(), 'bench')
  const model = new Script()
  const store = new SqliteStore(options.file ?? join(dir, `agent-${files++}.db`), {
    synchronous: options.synchronous,
    snapshotEvery: 500,
    busyTimeoutMs: 5000,
    chain: options.chain,
  })
  const configured = (p: CordagePlugin, c: unknown = {}): [CordagePlugin, unknown] => [p, p.manifest.config ? p.manifest.config(c) : c]
  const plugins: [CordagePlugin, unknown][] = [
    [
      definePlugin({ name: 'bench-store', version: '1.0.0', provides: { store: '2.2.0' } }, (c) => {
        c.set('store', store)
      }),
      {},
    ],
    configured(contextBasic),
    configured(toolsRegistry),
    configured(policyRules, { rules: [{ id: 'all', verdict: 'allow', match: {} }] }),
    configured(verifierBasic, { minCount: 0, mustBeObserved: false }),
    [
      definePlugin({ name: 'bench-model', version: '1.0.0', provides: { model: '1.0.0' } }, (c) => {
        c.set('model', { respond: async (r: { stepIndex: number }) => model.respond(r) })
      }),
      {},
    ],
    [
      definePlugin({ name: 'bench-tools', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
        c.tools.register(
          defineTool({ name: 'noop', description: 'nothing', input: z.object({}), sideEffect: 'none', run: () => ({ output: null }) }),
        )
      }),
      {},
    ],
  ]
  const forks = plugins.map(([p, c]) => ctx.plugin(p, c))
  await new Promise((r) => setImmediate(r))
  for (const f of forks) if (f.error || !f.isActive) throw new Error(`a bench plugin did not start: ${f.error}`)
  return {
    runtime: new AgentRuntime(ctx, { writer: KernelWriter, name: 'bench', budgets: { maxSteps: 1_000_000 } }),
    model,
    store,
    close: () => {
      for (const f of forks) f.dispose()
      store.close()
    },
  }
}

/** The events of one step of a real run (a read-only tool step), to append again under other run ids. */
async function realStep(): Promise<{ events: RunEvent[]; perStep: number; bytes: number; bodies: string[]; state: string }> {
  const a = await agent({ chain: true, synchronous: 'normal' })
  a.model.steps = 20
  const state = await a.runtime.run('shape')
  const all = await a.runtime.store().load(state.runId)
  a.close()
  const step = all.filter((e) => e.stepId === 's5' || e.actionId?.startsWith('s5.'))
  const bodies = all.map((e) => JSON.stringify(e))
  return {
    events: step,
    perStep: all.length / 20,
    bytes: bodies.reduce((n, b) => n + b.length, 0) / bodies.length,
    bodies,
    state: JSON.stringify(state),
  }
}

/** One append of `step`'s events at a time, renumbered onto the end of one long run. */
function appender(store: { append: SqliteStore['append'] | PostgresStore['append'] }, step: RunEvent[]) {
  const runId = `bench_${files++}`
  let seq = 0
  const start: RunEvent = {
    type: 'run/start',
    seq: 1,
    time: Date.now(),
    runId,
    schema: 1,
    producer: 'bench',
    data: { agent: 'b', task: 't', plugins: {}, services: {}, budgets: { maxSteps: 1, maxRepairs: 0 } },
  }
  return Object.assign(
    async () => {
      if (seq === 0) {
        await store.append(runId, [start], 0, { writer: KernelWriter })
        seq = 1
      }
      const batch = step.map((e, i) => ({ ...e, runId, seq: seq + i + 1 }))
      await store.append(runId, batch, seq, { writer: KernelWriter })
      seq += batch.length
    },
    { runId },
  )
}

const fmt = (us: number) => (Math.abs(us) < 10 ? us.toFixed(2) : Math.abs(us) < 100 ? us.toFixed(1) : us.toFixed(0)).padStart(7)
const pct = (chained: number, plain: number) =>
  `${(chained / plain).toFixed(3)}x  (${chained >= plain ? '+' : ''}${(((chained - plain) / plain) * 100).toFixed(1)}%)`

console.log(
  `Cordage hash chain — node ${process.version}; ${quick ? 'quick, ' : ''}${rounds} alternating rounds of ${roundMs} ms per pair: median [best round]`,
)
const shape = await realStep()
console.log(
  `a read-only tool step writes ${shape.events.length} events (${shape.perStep.toFixed(1)} per step over a run), ~${Math.round(shape.bytes)} bytes each\n`,
)

if (!loadsOnly) {
  // 1. the hash alone
  {
    let i = 0
    let link = ''
    const sha = () => {
      link = chainHash(link, shape.bodies[i++ % shape.bodies.length])
    }
    const hmac = () => {
      link = chainHash(link, shape.bodies[i++ % shape.bodies.length], key)
    }
    const r = await ab(sha, hmac, 'cpu')
    console.log('1. the hash alone, per event (µs of CPU)')
    console.log(
      `   SHA-256 ${fmt(r.a)} [${fmt(r.bestA).trim()}]   HMAC-SHA-256 ${fmt(r.b)} [${fmt(r.bestB).trim()}]   per step of ${shape.events.length} events: ${fmt(r.a * shape.events.length).trim()} / ${fmt(r.b * shape.events.length).trim()}\n`,
    )
  }

  // 2. store-sqlite appends of one step's events
  console.log(
    `2. store-sqlite: one append of a step's ${shape.events.length} events (µs per append, of CPU in memory, of wall clock on a file; chained / plain)`,
  )
  for (const [label, file, synchronous] of [
    ['in memory (no disk)', ':memory:', 'normal'],
    ['file, synchronous=FULL', undefined, 'full'],
  ] as const) {
    const plain = new SqliteStore(file ?? join(dir, `plain-${files++}.db`), {
      synchronous,
      snapshotEvery: 500,
      busyTimeoutMs: 5000,
      chain: false,
    })
    const chained = new SqliteStore(file ?? join(dir, `chained-${files++}.db`), { synchronous, snapshotEvery: 500, busyTimeoutMs: 5000 })
    const keyed = new SqliteStore(file ?? join(dir, `keyed-${files++}.db`), {
      synchronous,
      snapshotEvery: 500,
      busyTimeoutMs: 5000,
      chainKey: key,
    })
    const clock = file === ':memory:' ? 'cpu' : 'wall'
    const sha = await ab(appender(chained, shape.events), appender(plain, shape.events), clock)
    const mac = await ab(appender(keyed, shape.events), appender(plain, shape.events), clock)
    console.log(
      `   ${label.padEnd(24)} plain ${fmt(sha.b)} [${fmt(sha.bestB).trim()}]   SHA-256 ${fmt(sha.a)} [${fmt(sha.bestA).trim()}]  ${pct(sha.a, sha.b)}   HMAC ${fmt(mac.a)} [${fmt(mac.bestA).trim()}]  ${pct(mac.a, mac.b)}`,
    )
    console.log(
      `   ${''.padEnd(24)} chaining per event: SHA-256 ${fmt((sha.a - sha.b) / shape.events.length)} [${fmt((sha.bestA - sha.bestB) / shape.events.length).trim()}] µs, HMAC ${fmt((mac.a - mac.b) / shape.events.length)} [${fmt((mac.bestA - mac.bestB) / shape.events.length).trim()}] µs`,
    )
    plain.close()
    chained.close()
    keyed.close()
  }

  {
    // The file's size per event, chained and plain: no timing, so no noise.
    const size = async (chain: boolean) => {
      const file = join(dir, `size-${files++}.db`)
      const store = new SqliteStore(file, { synchronous: 'normal', snapshotEvery: 500, busyTimeoutMs: 5000, chain })
      const append = appender(store, shape.events)
      for (let i = 0; i < 2000; i++) await append()
      store.close()
      const db = new Database(file)
      db.pragma('wal_checkpoint(TRUNCATE)')
      const bytes = (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number)
      db.close()
      return bytes / (2000 * shape.events.length + 1)
    }
    const plain = await size(false)
    const chained = await size(true)
    console.log(`   file size per event      plain ${fmt(plain)} B   chained ${fmt(chained)} B  ${pct(chained, plain)}`)
  }

  // 3. whole Cordage steps
  console.log('\n3. Cordage steps on store-sqlite, kernel and all (µs per step of wall clock, and of CPU; chained / plain)')
  for (const synchronous of ['full', 'normal'] as const) {
    const steps = 50
    const chained = await agent({ chain: true, synchronous })
    const plain = await agent({ chain: false, synchronous })
    chained.model.steps = plain.model.steps = steps
    const runOf = (a: Awaited<ReturnType<typeof agent>>) => async () => {
      const state = await a.runtime.run('task')
      if (state.status !== 'COMPLETED' || state.steps !== steps) throw new Error(`bench run ended ${state.status} ${state.failureCode}`)
    }
    for (const clock of ['wall', 'cpu'] as const) {
      const r = await ab(runOf(chained), runOf(plain), clock)
      const per = { chained: r.a / steps, plain: r.b / steps, bestChained: r.bestA / steps, bestPlain: r.bestB / steps }
      console.log(
        `   synchronous=${synchronous.toUpperCase().padEnd(7)}${clock.padStart(5)}  plain ${fmt(per.plain)} [${fmt(per.bestPlain).trim()}]   chained ${fmt(per.chained)} [${fmt(per.bestChained).trim()}]  ${pct(per.chained, per.plain)}   difference ${fmt(per.chained - per.plain)} [${fmt(per.bestChained - per.bestPlain).trim()}] µs per step`,
      )
    }
    chained.close()
    plain.close()
  }

  // 4. PostgreSQL
  const url = process.env.CORDAGE_PG_URL
  if (!url) console.log('\n4. PostgreSQL: skipped (set CORDAGE_PG_URL)')
  else {
    const plain = new PostgresStore(url, `bench_plain_${process.pid}`, 4, 500, { chain: false })
    const chained = new PostgresStore(url, `bench_chained_${process.pid}`, 4, 500)
    await plain.start()
    await chained.start()
    const r = await ab(appender(chained, shape.events), appender(plain, shape.events))
    console.log(`\n4. PostgreSQL on loopback: one append of a step's ${shape.events.length} events (µs; chained / plain)`)
    console.log(`   plain ${fmt(r.b)} [${fmt(r.bestB).trim()}]   SHA-256 ${fmt(r.a)} [${fmt(r.bestA).trim()}]  ${pct(r.a, r.b)}`)
    await plain.dropSchema()
    await chained.dropSchema()
    await plain.close()
    await chained.close()
  }
}

// 5. the check on load
console.log(`\n5. the check on load: the links of what a load returns, recomputed (µs of CPU; chained / plain)`)
{
  // The rows of the real run, chained as a store writes them.
  const rowsOf = (k?: string) => {
    let link = ''
    return shape.bodies.map((body, i) => ({ seq: i + 1, body, chain: (link = chainHash(link, body, k)) }))
  }
  const runId = (JSON.parse(shape.bodies[0]) as RunEvent).runId
  const sha = rowsOf()
  const mac = rowsOf(key)
  const n = sha.length
  const plainRows = sha.map(({ seq, body }) => ({ seq, body }))
  const r = await ab(
    () => chainedEventsFromRows(runId, sha, 0, n, { link: '' }),
    () => eventsFromRows(runId, plainRows, 0, n),
    'cpu',
  )
  const k = await ab(
    () => chainedEventsFromRows(runId, mac, 0, n, { link: '' }, key),
    () => eventsFromRows(runId, plainRows, 0, n),
    'cpu',
  )
  console.log(
    `   the rows of a run of ${n} events   plain ${fmt(r.b / n)} [${fmt(r.bestB / n).trim()}]   SHA-256 ${fmt(r.a / n)} [${fmt(r.bestA / n).trim()}]  ${pct(r.a, r.b)}   HMAC ${fmt(k.a / n)}  ${pct(k.a, k.b)}   per event`,
  )
  console.log(
    `   ${''.padEnd(30)} checking the chain per event: SHA-256 ${fmt((r.a - r.b) / n)} [${fmt((r.bestA - r.bestB) / n).trim()}] µs, HMAC ${fmt((k.a - k.b) / n)} [${fmt((k.bestA - k.bestB) / n).trim()}] µs`,
  )

  // A snapshot: one hash of its text on top of the parse, per KB of state.
  const state = shape.state
  const eventLink = sha[n - 1].chain
  const snap = { seq: n, version: 1, state, chain: snapshotLink(eventLink, state) }
  const s = await ab(
    () => checkedSnapshot(runId, snap, eventLink),
    () => snapshotFromRow(runId, n, state),
    'cpu',
  )
  const kb = state.length / 1024
  console.log(
    `   a snapshot of ${kb.toFixed(1)} KB         plain ${fmt(s.b)} [${fmt(s.bestB).trim()}]   checked ${fmt(s.a)} [${fmt(s.bestA).trim()}]  ${pct(s.a, s.b)}   the check: ${fmt((s.a - s.b) / kb)} µs per KB`,
  )

  // A whole load of a long run, from a file, against the same store with the chain off.
  const steps = quick ? 100 : 300
  const long = async (store: SqliteStore | PostgresStore) => {
    const append = appender(store, shape.events)
    for (let i = 0; i < steps; i++) await append()
    return append.runId
  }
  const plain = new SqliteStore(join(dir, `load-plain-${files++}.db`), {
    synchronous: 'normal',
    snapshotEvery: 500,
    busyTimeoutMs: 5000,
    chain: false,
  })
  const chained = new SqliteStore(join(dir, `load-chained-${files++}.db`), {
    synchronous: 'normal',
    snapshotEvery: 500,
    busyTimeoutMs: 5000,
  })
  const [p, c] = [await long(plain), await long(chained)]
  const events = steps * shape.events.length + 1
  const l = await ab(
    () => chained.load(c),
    () => plain.load(p),
    'cpu',
  )
  const after = events - shape.events.length * 10
  const t = await ab(
    () => chained.read(c, { after }),
    () => plain.read(p, { after }),
    'cpu',
  )
  console.log(
    `   store-sqlite load of ${events} events   plain ${fmt(l.b)} [${fmt(l.bestB).trim()}]   chained ${fmt(l.a)} [${fmt(l.bestA).trim()}]  ${pct(l.a, l.b)}   ${fmt((l.a - l.b) / events).trim()} µs per event`,
  )
  console.log(
    `   store-sqlite read of the last ${events - after}     plain ${fmt(t.b)} [${fmt(t.bestB).trim()}]   chained ${fmt(t.a)} [${fmt(t.bestA).trim()}]  ${pct(t.a, t.b)}   (the link it starts from: one more read)`,
  )
  plain.close()
  chained.close()

  const url = process.env.CORDAGE_PG_URL
  if (url) {
    const pgPlain = new PostgresStore(url, `bench_load_plain_${process.pid}`, 4, 500, { chain: false })
    const pgChained = new PostgresStore(url, `bench_load_chained_${process.pid}`, 4, 500)
    await pgPlain.start()
    await pgChained.start()
    const [pp, pc] = [await long(pgPlain), await long(pgChained)]
    const g = await ab(
      () => pgChained.load(pc),
      () => pgPlain.load(pp),
    )
    const gr = await ab(
      () => pgChained.read(pc, { after }),
      () => pgPlain.read(pp, { after }),
    )
    console.log(
      `   store-postgres load of ${events} events (wall clock)   plain ${fmt(g.b)} [${fmt(g.bestB).trim()}]   chained ${fmt(g.a)} [${fmt(g.bestA).trim()}]  ${pct(g.a, g.b)}`,
    )
    console.log(
      `   store-postgres read of the last ${events - after} (wall clock)     plain ${fmt(gr.b)} [${fmt(gr.bestB).trim()}]   chained ${fmt(gr.a)} [${fmt(gr.bestA).trim()}]  ${pct(gr.a, gr.b)}`,
    )
    await pgPlain.dropSchema()
    await pgChained.dropSchema()
    await pgPlain.close()
    await pgChained.close()
  }
}
rmSync(dir, { recursive: true, force: true })
