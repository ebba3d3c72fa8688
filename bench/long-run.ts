/**
 * node --expose-gc --import tsx bench/long-run.ts [--quick] [--store memory|sqlite] [--snapshots] — one long
 * run, and whether it stays flat.
 *
 * One run of 10,000 steps (2,000 with `--quick`): a scripted model asks for a read-only no-op tool at
 * each of them, and answers at the step after. The agent is built as a long run would be: context-basic
 * projects the transcript (the whole of it, at every step), compaction-summary keeps what the model sees
 * under its window (the summary is asked of the model, which answers it), tools-registry, policy-rules
 * allowing everything, verifier-basic. It runs twice: on store-memory, and on store-sqlite (a file,
 * synchronous=FULL, WAL, snapshots of run state as the store asks: its defaults). The kernel and plugins
 * run from the TypeScript sources (tsx), like bench/durability.ts.
 *
 * Every 500 steps (250 with `--quick`) the model, at the start of a step, stops the clocks and samples:
 * the mean wall-clock and CPU time per step of the window just ended (CPU time is the whole process's,
 * the garbage collector's threads included), the heap used after a forced full collection, and the
 * sizes of what the run holds: the kernel's run state (its transcript entries and actions, and the state
 * as JSON, which is what a snapshot writes), the events store-memory holds in memory, the size of
 * store-sqlite's database file with its write-ahead log, and the messages the model was sent. The
 * sampling is outside the timed windows. Printed: the curve, the ratio of the last window to the first
 * for time and heap, and the heap's slope in bytes per step (least squares over the samples after the
 * first window, which holds the warm-up); then the time to load the finished run as a resume does (its
 * newest snapshot and the events after it, mean of three).
 *
 * `--store memory` or `--store sqlite` runs one of the two. `--snapshots` writes a heap snapshot at the
 * second sample and at the last, and prints the kinds of object that grew between them, per step
 * (bench/heap-diff.ts).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { writeHeapSnapshot } from 'node:v8'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { z } from 'zod'
import { createAgentContext, definePlugin, defineTool, type CordagePlugin, type ModelRequest, type ModelResponse } from 'cordage'
import { AgentRuntime } from '../core/kernel/agent.ts'
import { KernelWriter } from '../core/kernel/store-writer.ts'
import storeMemory from '../plugins/store-memory/index.ts'
import storeSqlite from '../plugins/store-sqlite/index.ts'
import contextBasic from '../plugins/context-basic/index.ts'
import compactionSummary from '../plugins/compaction-summary/index.ts'
import toolsRegistry from '../plugins/tools-registry/index.ts'
import policyRules from '../plugins/policy-rules/index.ts'
import verifierBasic from '../plugins/verifier-basic/index.ts'
import { growth } from './heap-diff.ts'
import { gc } from './measure.ts'

const quick = process.argv.includes('--quick')
const snapshots = process.argv.includes('--snapshots')
const only = process.argv.includes('--store') ? process.argv[process.argv.indexOf('--store') + 1] : undefined
const STEPS = quick ? 2_000 : 10_000
const WINDOW = quick ? 250 : 500
/** The model's window and reserve for compaction-summary: small, so the run is compacting after a few hundred steps. */
const WINDOW_TOKENS = 8_000
const RESERVE_TOKENS = 2_000

interface Row {
  step: number
  /** Mean wall-clock and CPU microseconds per step over the window that ended at this step. */
  wallUs: number
  cpuUs: number
  heap: number
  transcript: number
  actions: number
  stateJson: number
  events: number | undefined
  /** store-sqlite: the database file and its write-ahead log, in bytes. */
  db: number | undefined
  messages: number
}

/** The scripted model: the no-op tool until the last step, then the answer; summaries when asked. Samples at window ends. */
class LongModel {
  rows: Row[] = []
  summaries = 0
  private wall0 = 0n
  private cpu0 = process.cpuUsage()
  constructor(
    private sample: (runId: string, step: number, messages: number) => Promise<Omit<Row, 'wallUs' | 'cpuUs'>>,
    private steps: number,
  ) {}

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
    if (request.purpose === 'summary') {
      this.summaries++
      return { decision: { kind: 'final', text: 'The no-op tool was called once per step and answered ok each time.' }, usage }
    }
    // Model call k starts step k, after k - 1 steps are done: the window ends there.
    const done = request.stepIndex - 1
    if (done % WINDOW === 0) await this.mark(request.runId, done, request.messages.length)
    if (request.stepIndex <= this.steps) return { decision: { kind: 'tool_calls', calls: [{ name: 'noop', args: {} }] }, usage }
    return { decision: { kind: 'final', text: 'done' }, usage }
  }

  /** End the window at `step` steps done (stop the clocks first), sample, and start the next window. */
  private async mark(runId: string, step: number, messages: number): Promise<void> {
    const wall = process.hrtime.bigint()
    const cpu = process.cpuUsage(this.cpu0)
    const done = step === 0 ? undefined : { wallUs: Number(wall - this.wall0) / 1000 / WINDOW, cpuUs: (cpu.user + cpu.system) / WINDOW }
    const sampled = await this.sample(runId, step, messages)
    if (done) this.rows.push({ ...sampled, ...done })
    this.cpu0 = process.cpuUsage()
    this.wall0 = process.hrtime.bigint()
  }
}

function configured(plugin: CordagePlugin, partial: unknown = {}): [CordagePlugin, unknown] {
  return [plugin, plugin.manifest.config ? plugin.manifest.config(partial) : partial]
}

async function longRun(store: 'memory' | 'sqlite', dir: string) {
  const ctx = createAgentContext(new Context(), 'long')
  let agent: AgentRuntime | undefined
  const model = new LongModel(async (runId, step, messages) => {
    const state = await agent!.load(runId)
    const events = store === 'memory' ? (await agent!.store().load(runId)).length : undefined
    const file = join(dir, 'long.db')
    const db = store === 'sqlite' ? [file, `${file}-wal`].reduce((n, f) => n + (existsSync(f) ? statSync(f).size : 0), 0) : undefined
    const sizes = {
      step,
      transcript: state.transcript.length,
      actions: Object.keys(state.actions).length,
      stateJson: JSON.stringify(state).length,
      events,
      db,
      messages,
    }
    gc()
    const heap = process.memoryUsage().heapUsed
    if (snapshots && (step === 2 * WINDOW || step === STEPS))
      heapFiles.push({ step, file: writeHeapSnapshot(join(dir, `${store}-${step}.heapsnapshot`)) })
    return { ...sizes, heap }
  }, STEPS)
  const heapFiles: { step: number; file: string }[] = []
  let toolRuns = 0
  const plugins: [CordagePlugin, unknown][] = [
    store === 'memory' ? configured(storeMemory) : configured(storeSqlite, { path: join(dir, 'long.db') }),
    configured(contextBasic),
    configured(compactionSummary, { windowTokens: WINDOW_TOKENS, reserveTokens: RESERVE_TOKENS }),
    configured(toolsRegistry),
    configured(policyRules, { rules: [{ id: 'all', verdict: 'allow', match: {} }], default: 'deny' }),
    configured(verifierBasic, { minCount: 0, mustBeObserved: false, repairable: false }),
    [
      definePlugin({ name: 'bench-model', version: '1.1.0', provides: { model: '1.1.0' } }, (c) => {
        c.set('model', model)
      }),
      {},
    ],
    [
      definePlugin({ name: 'bench-noop', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
        c.tools.register(
          defineTool({
            name: 'noop',
            description: 'does nothing',
            input: z.object({}),
            sideEffect: 'none',
            run: () => {
              toolRuns++
              return { output: null, observation: 'ok' }
            },
          }),
        )
      }),
      {},
    ],
  ]
  const forks = plugins.map(([plugin, config]) => ctx.plugin(plugin, config))
  await new Promise((resolve) => setImmediate(resolve))
  for (const fork of forks) if (fork.error || !fork.isActive) throw new Error(`a bench plugin did not start: ${fork.error ?? 'inactive'}`)
  ;(ctx.baseDir as string) = dir
  agent = new AgentRuntime(ctx, { writer: KernelWriter, name: 'long', budgets: { maxSteps: STEPS + 1 } })
  const compactions = { count: 0, rejected: 0 }
  ctx.on('compaction/end', (event) => {
    compactions.count++
    if (event.data.rejected) compactions.rejected++
  })

  const t0 = performance.now()
  const state = await agent.run('a long task')
  const seconds = (performance.now() - t0) / 1000
  if (state.status !== 'COMPLETED' || state.steps !== STEPS + 1 || toolRuns !== STEPS)
    throw new Error(
      `the run ended ${state.status} after ${state.steps} of ${STEPS + 1} steps, ${toolRuns} tool calls (${state.failureCode ?? ''} ${state.reason ?? ''})`,
    )
  if (compactions.rejected) throw new Error(`${compactions.rejected} compactions were rejected`)
  // Loading the finished run as a resume would: from its newest snapshot and the events after it.
  const stored = await agent.store().loadRun(state.runId)
  const load = { ms: 0, snapshot: stored.snapshot?.seq, after: stored.events.length }
  await agent.load(state.runId)
  const l0 = performance.now()
  for (let i = 0; i < 3; i++) await agent.load(state.runId)
  load.ms = (performance.now() - l0) / 3
  for (const fork of forks) fork.dispose()
  return { rows: model.rows, seconds, events: state.lastSeq, compactions: compactions.count, summaries: model.summaries, heapFiles, load }
}

const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`
const pad = (s: string | number, n: number) => String(s).padStart(n)

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length
  const mx = points.reduce((a, p) => a + p.x, 0) / n
  const my = points.reduce((a, p) => a + p.y, 0) / n
  const sxy = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0)
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0)
  return sxx === 0 ? 0 : sxy / sxx
}

function print(name: string, r: Awaited<ReturnType<typeof longRun>>) {
  console.log(
    `\n${name}: ${STEPS} tool steps and the answer, ${r.events} events in ${r.seconds.toFixed(1)} s; ${r.compactions} compactions, ${r.summaries} summaries asked of the model`,
  )
  console.log(
    `${pad('step', 7)}${pad('wall µs/step', 14)}${pad('cpu µs/step', 13)}${pad('heap', 11)}${pad('transcript', 12)}${pad('actions', 9)}${pad('state JSON', 12)}${pad('events held', 13)}${pad('db file', 11)}${pad('messages', 10)}`,
  )
  for (const row of r.rows) {
    console.log(
      `${pad(row.step, 7)}${pad(row.wallUs.toFixed(0), 14)}${pad(row.cpuUs.toFixed(0), 13)}${pad(mib(row.heap), 11)}${pad(row.transcript, 12)}${pad(row.actions, 9)}${pad(kib(row.stateJson), 12)}${pad(row.events ?? '-', 13)}${pad(row.db === undefined ? '-' : mib(row.db), 11)}${pad(row.messages, 10)}`,
    )
  }
  const first = r.rows[0]!
  const last = r.rows[r.rows.length - 1]!
  // The first window holds the warm-up (JIT, caches) and the start of compaction: the slope starts after it.
  const heapSlope = slope(r.rows.slice(1).map((row) => ({ x: row.step, y: row.heap })))
  const wallSlope = slope(r.rows.slice(1).map((row) => ({ x: row.step, y: row.wallUs })))
  console.log(
    `last / first window: wall ${(last.wallUs / first.wallUs).toFixed(2)}x, cpu ${(last.cpuUs / first.cpuUs).toFixed(2)}x, heap ${(last.heap / first.heap).toFixed(2)}x`,
  )
  console.log(
    `after the first window: the heap grows by ${heapSlope.toFixed(0)} bytes per step, the wall time of a step by ${(wallSlope * 1000).toFixed(1)} µs every 1,000 steps`,
  )
  console.log(
    `loading the finished run: ${r.load.ms.toFixed(1)} ms, ${r.load.snapshot === undefined ? 'no snapshot' : `from its snapshot at seq ${r.load.snapshot}`} and ${r.load.after} events after it`,
  )
  if (r.heapFiles.length === 2) {
    const [a, b] = r.heapFiles as [{ step: number; file: string }, { step: number; file: string }]
    console.log(`grown between step ${a.step} and step ${b.step}, per step (kind of object: count, bytes):`)
    for (const g of growth(a.file, b.file, 16))
      console.log(
        `  ${g.kind.padEnd(60)} ${(g.count / (b.step - a.step)).toFixed(2).padStart(8)} ${(g.bytes / (b.step - a.step)).toFixed(0).padStart(7)}`,
      )
  }
}

console.log(
  `Cordage long run — node ${process.version}; ${STEPS} steps, sampled every ${WINDOW}; context-basic + compaction-summary (window ${WINDOW_TOKENS}, reserve ${RESERVE_TOKENS}); from the TypeScript sources (tsx)`,
)
const dir = mkdtempSync(join(tmpdir(), 'cordage-long-'))
try {
  if (only !== 'sqlite') print('store-memory', await longRun('memory', dir))
  if (only !== 'memory') print('store-sqlite (synchronous=FULL, snapshots as the store asks)', await longRun('sqlite', dir))
} finally {
  rmSync(dir, { recursive: true, force: true })
}
