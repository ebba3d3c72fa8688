/**
 * npm run bench:alloc — what a step of the kernel bench's Cordage subject allocates: heap bytes per step
 * by the function that allocated them (V8's sampling heap profiler, objects collected since included),
 * and promises created per step by where they were created (an async_hooks `init` hook). Both are
 * counts, not times, so they hold steady on a machine whose timings swing by half; use them to compare
 * two trees, and `npm run bench:kernel` for the time. Each part runs in its own stretch: the hook slows
 * everything it sees and would otherwise show in the heap profile.
 *
 * `--steps N` (50) the run length, `--runs N` (100) runs measured, `--top N` (20) rows in each list.
 */
import { createHook } from 'node:async_hooks'
import { Session } from 'node:inspector/promises'
import { buildHarness, runOnce } from './cordage.ts'
import { numberArg } from './measure.ts'

const steps = numberArg('--steps', 50)
const runs = numberArg('--runs', 100)
const top = numberArg('--top', 20)

const harness = await buildHarness()
for (let i = 0; i < 100; i++) await runOnce(harness, steps)
const perStep = (n: number) => n / (runs * steps)
const rows = (counts: Map<string, number>, show: (n: number) => string) =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, n]) => `${show(perStep(n)).padStart(8)}  ${where}`)
    .join('\n')
const place = (url: string, line: number) => `${url.replace(/^.*\/(core|plugins|bench)\//, '$1/')}:${line}`

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number }
  selfSize: number
  children: HeapNode[]
}
const session = new Session()
session.connect()
await session.post('HeapProfiler.enable')
// Objects a collection already freed are counted too: what a step allocates, not what it keeps.
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 256,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
} as never)
for (let i = 0; i < runs; i++) await runOnce(harness, steps)
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: HeapNode } }
session.disconnect()
const bytes = new Map<string, number>()
let allocated = 0
const walk = (node: HeapNode) => {
  const f = node.callFrame
  const key = `${f.functionName || '(anonymous)'}  ${f.url ? place(f.url, f.lineNumber + 1) : ''}`
  bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize)
  allocated += node.selfSize
  for (const child of node.children) walk(child)
}
walk(profile.head)

// Where each promise is created: the first frame of ours in the stack (an await's own promise has none).
const promises = new Map<string, number>()
let created = 0
let counting = false
const hook = createHook({
  init(_id, type) {
    if (!counting || type !== 'PROMISE') return
    created++
    const frame = new Error().stack?.split('\n').find((line) => /\/(core|plugins|bench)\//.test(line) && !line.includes('bench/alloc'))
    const where =
      frame
        ?.trim()
        .replace(/^at /, '')
        .replace(/\(?(file:\/\/)?\/[^ ]*?\/(?=(core|plugins|bench)\/)|\)$/g, '') ?? '(an await, or node internals)'
    promises.set(where, (promises.get(where) ?? 0) + 1)
  },
})
hook.enable()
counting = true
for (let i = 0; i < runs; i++) await runOnce(harness, steps)
counting = false
hook.disable()

console.log(`${runs} runs of ${steps} steps (the kernel bench's Cordage subject, compiled: dist/)`)
console.log(`\nheap allocated per step: ${(perStep(allocated) / 1024).toFixed(1)} KB; by function (bytes per step)`)
console.log(rows(bytes, (n) => n.toFixed(0)))
console.log(`\npromises created per step: ${perStep(created).toFixed(1)}; by where (per step)`)
console.log(rows(promises, (n) => n.toFixed(2)))
