/**
 * node --expose-gc --import tsx bench/reload.ts — hot reload: edit-to-active latency and heap over
 * hundreds of reloads. A temp copy of the dev-policy fixture is edited 500 times (its label.ts gets a
 * new label each time); `cordage dev`'s reloader (core/host/dev.ts, watching with fs.watch) rebuilds
 * and swaps it into the live support-desk agent. Latency is from the write to the `plugin/reloaded`
 * event, checked by asking the agent's policy service for a decision with the new label. Every 50
 * reloads: a run on the reloaded policy, a full GC, and heapUsed. See docs/guides/dev.md for the figures.
 *
 * At the end, the heap's slope in KB per reload (least squares over the marks after the first 100
 * reloads, and over the second half alone: a slope that falls is a heap that levels off). With
 * `--snapshots`, heap snapshots are written after 100 reloads and at the end, and the kinds of object
 * that grew between them are printed (bench/heap-diff.ts).
 *
 * `--reloads N` (default 500; 200 with `--quick`), `--debounce MS` (default 20), `--snapshots`.
 */
import { cpSync, writeFileSync } from 'node:fs'
import { writeHeapSnapshot } from 'node:v8'
import { cpus } from 'node:os'
import { join, resolve } from 'node:path'
import { stringify } from 'yaml'
import { readService, type PluginEvent, type PolicyService } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { DevReloader } from '../core/host/dev.ts'
import { deskPreset, refundAnswer, tempDir } from '../test/helpers.ts'
import { growth } from './heap-diff.ts'

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const reloads = arg('reloads', process.argv.includes('--quick') ? 200 : 500)
const debounceMs = arg('debounce', 20)
const snapshots = process.argv.includes('--snapshots')
const gc =
  globalThis.gc ??
  (() => {
    throw new Error('run with node --expose-gc --import tsx bench/reload.ts')
  })()

const dir = tempDir('cordage-reload-bench-')
const plugin = join(dir, 'dev-policy')
cpSync(resolve(import.meta.dirname, '../test/fixtures/plugins/dev-policy'), plugin, { recursive: true })
writeFileSync(join(plugin, 'package.json'), JSON.stringify({ type: 'module' }))
writeFileSync(
  join(dir, 'preset.yml'),
  stringify(
    deskPreset(
      { script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }], policyPlugin: { path: './dev-policy' } },
      'outbox.jsonl',
    ),
  ),
)

const app = await Cordage.fromPreset(join(dir, 'preset.yml'))
const agent = app.agent('support')
const dev = await DevReloader.start(app, { debounceMs })
let waiting: ((event: PluginEvent) => void) | undefined
app.root.on('plugin/reloaded', (event: PluginEvent) => waiting?.(event))

const heap = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]

async function checkRun(label: string) {
  const state = await agent.run('refund window?')
  const decision = (await agent.store().load(state.runId)).find((e) => e.type === 'tool/decision')
  if (state.status !== 'COMPLETED' || decision?.type !== 'tool/decision' || decision.data.ruleId !== label)
    throw new Error(
      `run after reload: ${state.status}, decided by ${decision?.type === 'tool/decision' ? decision.data.ruleId : 'nobody'}, expected ${label}`,
    )
}

console.log(
  `Cordage hot reload — node ${process.version}, ${process.platform} ${process.arch}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores)`,
)
console.log(
  `${reloads} edits of a policy plugin in a live agent; debounce ${debounceMs} ms; latency = file written → new version serving\n`,
)
await checkRun('v1')
const baseline = heap()
console.log('reloads | p50 ms | p95 ms | max ms | heap after GC (MB) | vs start')
console.log('------- | ------ | ------ | ------ | ------------------ | --------')
console.log(`${'0'.padStart(7)} | ${''.padStart(6)} | ${''.padStart(6)} | ${''.padStart(6)} | ${baseline.toFixed(1).padStart(18)} |`)

const all: number[] = []
let window: number[] = []
/** [reloads, heap MB] at every mark. */
const marks: [number, number][] = [[0, baseline]]
const snapshotFiles: string[] = []
for (let i = 1; i <= reloads; i++) {
  const label = `r${i}`
  const reloaded = new Promise<PluginEvent>((done) => {
    waiting = done
  })
  const t0 = performance.now()
  writeFileSync(join(plugin, 'label.ts'), `export const Label = '${label}'\n`)
  const event = await reloaded
  const ms = performance.now() - t0
  if (!event.ok) throw new Error(`reload ${i} failed: ${event.message}`)
  // Active means: the agent's policy service is the new version.
  const policy = readService<PolicyService>(agent.ctx, 'policy')!.value
  const decision = await policy.decide({ tool: { name: 'lookup_policy' } } as never)
  if (decision.ruleId !== label) throw new Error(`reload ${i}: policy decides as ${decision.ruleId}, expected ${label}`)
  all.push(ms)
  window.push(ms)
  if (i % 50 === 0) {
    await checkRun(label)
    const sorted = window.sort((a, b) => a - b)
    const mb = heap()
    marks.push([i, mb])
    if (snapshots && (i === 100 || i === reloads)) snapshotFiles.push(writeHeapSnapshot(join(dir, `after-${i}.heapsnapshot`)))
    console.log(
      `${String(i).padStart(7)} | ${quantile(sorted, 0.5).toFixed(1).padStart(6)} | ${quantile(sorted, 0.95).toFixed(1).padStart(6)} | ${sorted.at(-1)!.toFixed(1).padStart(6)} | ${mb.toFixed(1).padStart(18)} | ${(mb - baseline >= 0 ? '+' : '') + (mb - baseline).toFixed(1)}`,
    )
    window = []
  }
}
const sorted = all.sort((a, b) => a - b)
console.log(
  `\nall ${reloads}: p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p95 ${quantile(sorted, 0.95).toFixed(1)} ms (of which ${debounceMs} ms debounce); heap ${baseline.toFixed(1)} → ${heap().toFixed(1)} MB`,
)

/** Least-squares slope of heap over reloads, in KB per reload. */
function slope(points: [number, number][]): number {
  const n = points.length
  const mx = points.reduce((s, [x]) => s + x, 0) / n
  const my = points.reduce((s, [, y]) => s + y, 0) / n
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0)
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0)
  return (sxy / sxx) * 1024
}
const settled = marks.filter(([i]) => i >= 100)
const secondHalf = marks.filter(([i]) => i >= reloads / 2)
if (settled.length >= 3)
  console.log(
    `heap slope: ${slope(settled).toFixed(2)} KB per reload after the first 100${secondHalf.length >= 3 ? `, ${slope(secondHalf).toFixed(2)} KB over the second half` : ''}`,
  )
if (snapshotFiles.length === 2) {
  console.log(`\ngrown between reload 100 and ${reloads} (kind of object: count, bytes):`)
  for (const g of growth(snapshotFiles[0]!, snapshotFiles[1]!))
    console.log(`  ${g.kind.padEnd(50)} ${String(g.count).padStart(6)} ${String(g.bytes).padStart(9)}`)
}
dev.stop()
await dev.settled()
await app.stop()
