/**
 * npm run bench:durability — what durability costs, measured against raw SQLite in the same run:
 *
 * 1. Durable steps per second: a Cordage agent on store-sqlite (synchronous=FULL, WAL) running the
 *    bench workload (scripted model, a read-only no-op tool), against raw better-sqlite3 committing one
 *    transaction per step with the same number and size of rows. Target: at least half the raw rate,
 *    i.e. one transaction per step boundary, not one per event. A step with a side-effecting tool (two
 *    durability points: intent and outcome) is shown too.
 * 2. Loading a run of 10,000 events: from its newest snapshot and the tail, and by full replay.
 * 3. PostgreSQL appends on loopback (when CORDAGE_PG_URL is set): batches of 10 events, one writer and
 *    four writers on different runs.
 */
import { join } from 'node:path'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import Database from 'better-sqlite3'
import { Context } from 'cordis'
import { z } from 'zod'
import { createAgentContext, definePlugin, defineTool, replay, type CordagePlugin, type RunEvent } from 'cordage'
import { AgentRuntime } from '../core/kernel/agent.ts'
import { KernelWriter } from '../core/kernel/store-writer.ts'
import storeSqlite from '../plugins/store-sqlite/index.ts'
import contextBasic from '../plugins/context-basic/index.ts'
import toolsRegistry from '../plugins/tools-registry/index.ts'
import policyRules from '../plugins/policy-rules/index.ts'
import verifierBasic from '../plugins/verifier-basic/index.ts'
import { PostgresStore } from '../plugins/store-postgres/postgres-store.ts'

const quick = process.argv.includes('--quick')
const seconds = quick ? 0.6 : 2.5
const dir = mkdtempSync(join(tmpdir(), 'cordage-bench-'))

class Script {
  steps = 1
  tool = 'noop'
  respond(request: { stepIndex: number }) {
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
    if (request.stepIndex < this.steps) return { decision: { kind: 'tool_calls' as const, calls: [{ name: this.tool, args: {} }] }, usage }
    return { decision: { kind: 'final' as const, text: 'done' }, usage }
  }
}

async function agent(file: string) {
  const ctx = createAgentContext(new Context(), 'bench')
  const model = new Script()
  const configured = (p: CordagePlugin, c: unknown = {}): [CordagePlugin, unknown] => [p, p.manifest.config ? p.manifest.config(c) : c]
  const plugins: [CordagePlugin, unknown][] = [
    configured(storeSqlite, { path: file, synchronous: 'full' }),
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
        c.tools.register(
          defineTool({
            name: 'write',
            description: 'an external write',
            input: z.object({}),
            sideEffect: 'external',
            idempotent: true,
            run: () => ({ output: null, receipt: 'r' }),
          }),
        )
      }),
      {},
    ],
  ]
  const forks = plugins.map(([p, c]) => ctx.plugin(p, c))
  await new Promise((r) => setImmediate(r))
  for (const f of forks) if (f.error || !f.isActive) throw new Error(`a bench plugin did not start: ${f.error}`)
  ;(ctx.baseDir as string) = dir
  return { runtime: new AgentRuntime(ctx, { writer: KernelWriter, name: 'bench', budgets: { maxSteps: 1_000_000 } }), model, forks }
}

/** Steps per second of Cordage runs of `steps` steps calling `tool`. */
async function cordageRate(tool: string, steps = 50): Promise<number> {
  const a = await agent(join(dir, `cordage-${tool}.db`))
  a.model.steps = steps
  a.model.tool = tool
  for (let i = 0; i < 3; i++) await a.runtime.run('warm')
  let done = 0
  const t0 = performance.now()
  while (performance.now() - t0 < seconds * 1000) {
    const state = await a.runtime.run('task')
    if (state.status !== 'COMPLETED' || state.steps !== steps) throw new Error(`bench run ended ${state.status} ${state.failureCode}`)
    done += steps
  }
  const rate = done / ((performance.now() - t0) / 1000)
  for (const f of a.forks) f.dispose()
  return rate
}

/** Raw better-sqlite3: one transaction per step, inserting as many rows as a Cordage step writes. */
function rawRate(rowsPerStep: number, bytesPerRow: number): number {
  const db = new Database(join(dir, 'raw.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec(
    'CREATE TABLE events (run_id TEXT, seq INTEGER, body TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID; CREATE TABLE runs (run_id TEXT PRIMARY KEY, last_seq INTEGER)',
  )
  db.prepare('INSERT INTO runs VALUES (?, 0)').run('r')
  const insert = db.prepare('INSERT INTO events VALUES (?, ?, ?)')
  const update = db.prepare('UPDATE runs SET last_seq = ? WHERE run_id = ?')
  const body = 'x'.repeat(bytesPerRow)
  let seq = 0
  const step = db.transaction(() => {
    for (let i = 0; i < rowsPerStep; i++) insert.run('r', ++seq, body)
    update.run(seq, 'r')
  })
  for (let i = 0; i < 20; i++) step()
  let steps = 0
  const t0 = performance.now()
  while (performance.now() - t0 < seconds * 1000) {
    step()
    steps++
  }
  db.close()
  return steps / ((performance.now() - t0) / 1000)
}

/** Events per step and their mean JSON size, from one real run. */
async function stepShape(): Promise<{ rows: number; bytes: number }> {
  const a = await agent(join(dir, 'shape.db'))
  a.model.steps = 20
  const state = await a.runtime.run('shape')
  const events = await a.runtime.store().load(state.runId)
  const bytes = events.reduce((n, e) => n + JSON.stringify(e).length, 0) / events.length
  for (const f of a.forks) f.dispose()
  return { rows: Math.round(events.length / 20), bytes: Math.round(bytes) }
}

async function loadTimes(): Promise<{ events: number; snapshotMs: number; replayMs: number }> {
  const a = await agent(join(dir, 'long.db'))
  a.model.steps = 1120
  const state = await a.runtime.run('long')
  const store = a.runtime.store()
  const all = await store.load(state.runId)
  const time = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 3; i++) await fn()
    const t = performance.now()
    for (let i = 0; i < 10; i++) await fn()
    return (performance.now() - t) / 10
  }
  const snapshotMs = await time(() => a.runtime.load(state.runId))
  const replayMs = await time(async () => replay(state.runId, await store.load(state.runId)))
  for (const f of a.forks) f.dispose()
  return { events: all.length, snapshotMs, replayMs }
}

async function postgresRates(): Promise<string> {
  const url = process.env.CORDAGE_PG_URL
  if (!url) return 'skipped: set CORDAGE_PG_URL to measure PostgreSQL appends'
  const store = new PostgresStore(url, `bench_${process.pid}`, 8, 500)
  await store.start()
  const batch = (runId: string, from: number): RunEvent[] =>
    Array.from({ length: 10 }, (_, i) =>
      from + i === 1
        ? {
            type: 'run/start',
            seq: 1,
            time: Date.now(),
            runId,
            schema: 1,
            producer: 'bench',
            data: { agent: 'b', task: 't', plugins: {}, services: {}, budgets: { maxSteps: 1, maxRepairs: 0 } },
          }
        : {
            type: 'step/start',
            seq: from + i,
            time: Date.now(),
            runId,
            stepId: 's',
            schema: 1,
            producer: 'bench',
            data: { index: from + i },
          },
    )
  const writer = async (runId: string, until: number) => {
    let appends = 0
    for (let seq = 0; performance.now() < until; seq += 10, appends++)
      await store.append(runId, batch(runId, seq + 1), seq, { writer: KernelWriter })
    return appends
  }
  const one = await (async () => {
    const t = performance.now()
    const n = await writer(`one_${Date.now()}`, t + seconds * 1000)
    return n / ((performance.now() - t) / 1000)
  })()
  const four = await (async () => {
    const t = performance.now()
    const counts = await Promise.all([0, 1, 2, 3].map((i) => writer(`four_${i}_${Date.now()}`, t + seconds * 1000)))
    return counts.reduce((a, b) => a + b, 0) / ((performance.now() - t) / 1000)
  })()
  await store.dropSchema()
  await store.close()
  return `1 writer: ${one.toFixed(0)} appends/s (${(one * 10).toFixed(0)} events/s); 4 writers: ${four.toFixed(0)} appends/s (${(four * 10).toFixed(0)} events/s)`
}

console.log(`Cordage durability — node ${process.version}; SQLite synchronous=FULL, WAL, files in ${tmpdir()}`)
const shape = await stepShape()
console.log(`a read-only tool step writes ${shape.rows} events of ~${shape.bytes} bytes\n`)
const raw = rawRate(shape.rows, shape.bytes)
const readOnly = await cordageRate('noop')
const effectful = await cordageRate('write')
console.log('durable steps per second')
console.log(`  raw better-sqlite3, 1 transaction per step (${shape.rows} rows)   ${raw.toFixed(0).padStart(7)}`)
console.log(
  `  Cordage, read-only tool step (1 durability point)        ${readOnly.toFixed(0).padStart(7)}   ${(readOnly / raw).toFixed(2)}x raw  (target ≥ 0.50x)`,
)
console.log(
  `  Cordage, side-effecting tool step (intent + outcome)     ${effectful.toFixed(0).padStart(7)}   ${(effectful / raw).toFixed(2)}x raw`,
)
const load = await loadTimes()
console.log(
  `\nloading a run of ${load.events} events: ${load.snapshotMs.toFixed(1)} ms from its snapshot and tail, ${load.replayMs.toFixed(1)} ms replaying every event`,
)
console.log(`\nPostgreSQL appends of 10 events on loopback: ${await postgresRates()}`)
rmSync(dir, { recursive: true, force: true })
