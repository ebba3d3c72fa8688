/**
 * npm run bench — kernel overhead per step: Cordage against Pi's agent core, the OpenAI Agents SDK and
 * a bare loop, all in this one process, each driven by an equally thin scripted model and a no-op tool.
 * A run of N steps is N model calls, the first N-1 each calling the tool once. See bench/README.md.
 *
 * `--quick` cuts every time budget by four (for checking the bench itself, not for numbers).
 */
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { bareSubject } from './bare.ts'
import { cordageSubject, retainedPerRun } from './cordage.ts'
import { measure, type Budget, type Sample, type Subject } from './measure.ts'
import { openaiSubject } from './peers/openai.ts'
import { piSubject } from './peers/pi.ts'

const STEPS = [10, 50, 100]
const scale = process.argv.includes('--quick') ? 0.25 : 1
const warmup: Budget = { warmupMs: 0, measureMs: 400 * scale, minRuns: 3, maxRuns: Infinity }
const budget: Budget = { warmupMs: 300 * scale, measureMs: 3000 * scale, minRuns: 15, maxRuns: 20_000 }
const retainedRuns = 200

function version(pkg: string): string {
  return JSON.parse(readFileSync(new URL(`../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version
}

console.log(
  `Cordage kernel overhead per step — node ${process.version}, ${process.platform} ${process.arch}, ${cpus()[0]?.model ?? 'unknown cpu'} (${cpus().length} cores)`,
)
console.log(
  `peers: @openai/agents ${version('@openai/agents')} (tracing off), @mariozechner/pi-agent-core ${version('@mariozechner/pi-agent-core')}`,
)
console.log('workload: scripted model, no-op tool; a run of N steps = N model calls, N-1 tool calls\n')

const bare = bareSubject()
const cordage = await cordageSubject()
const pi = piSubject()
const openai = openaiSubject()
const results = new Map<string, Sample>()

/** Warm every subject at every length first, then time each; results keyed `name/steps`. */
async function bench(subjects: Subject[]) {
  for (const subject of subjects) for (const steps of STEPS) await measure(subject, steps, warmup)
  for (const steps of STEPS) {
    for (const subject of subjects) results.set(`${subject.name}/${steps}`, await measure(subject, steps, budget))
  }
}

// The OpenAI SDK goes last. Its first run enters an AsyncLocalStorage (for trace context, even with
// tracing off), and on Node 20 that switches on promise hooks for the whole process: from then on every
// await anywhere costs more. Measured first, it would slow Pi by about half and Cordage by about a
// tenth. Both are measured again afterwards, so the size of that effect is in the output too.
await bench([bare, cordage, pi])
const retained = []
for (const steps of STEPS) retained.push({ steps, ...(await retainedPerRun(steps, retainedRuns)) })
await bench([openai])
const after = { cordage: await measure(cordage, 50, budget), pi: await measure(pi, 50, budget) }

const us = (n: number) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0))
const times = (r: number) => `${r < 0.1 ? r.toFixed(3) : r < 10 ? r.toFixed(2) : r.toFixed(1)}x`
const col = (s: string) => s.padStart(24)
const header = (title: string) => console.log(title.padEnd(20) + STEPS.map((n) => col(`${n} steps`)).join(''))
const median = (name: string, n: number) => results.get(`${name}/${n}`)!.median

header('us/step')
console.log('  median / p95 across runs (runs timed)')
for (const subject of [bare, cordage, pi, openai]) {
  console.log(
    subject.name.padEnd(20) +
      STEPS.map((n) => {
        const s = results.get(`${subject.name}/${n}`)!
        return col(`${us(s.median)} / ${us(s.p95)} (${s.runs})`)
      }).join(''),
  )
}

console.log('')
header('ratio of medians')
for (const [label, peer] of [
  ['Cordage / Pi', pi],
  ['Cordage / OpenAI', openai],
  ['Cordage / bare', bare],
] as const) {
  console.log(label.padEnd(20) + STEPS.map((n) => col(times(median(cordage.name, n) / median(peer.name, n)))).join(''))
}

console.log('\nafter the OpenAI SDK has run in this process (AsyncLocalStorage on), 50 steps, median us/step:')
console.log(
  `  Cordage ${us(after.cordage.median)} (was ${us(median(cordage.name, 50))}), Pi ${us(after.pi.median)} (was ${us(median(pi.name, 50))}), Cordage / Pi ${times(after.cordage.median / after.pi.median)}`,
)

console.log(`\nCordage heap retained per finished run (store-memory keeps every event; ${retainedRuns} runs each, after full GC):`)
for (const { steps, bytesPerRun } of retained) {
  console.log(
    `${String(steps).padStart(6)} steps: ${(bytesPerRun / 1024).toFixed(1).padStart(7)} KiB per run, ${(bytesPerRun / steps / 1024).toFixed(2)} KiB per step`,
  )
}
