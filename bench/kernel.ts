/**
 * npm run bench — kernel overhead per step: Cordage against Pi's agent core, the OpenAI Agents SDK and
 * a bare loop, all in this one process, each driven by an equally thin scripted model and a no-op tool.
 * A run of N steps is N model calls, the first N-1 each calling the tool once. At 50 steps the three
 * systems are also measured with 200 registered tools (the no-op one among 199 the model never calls),
 * to show whether a step costs more the more tools there are. See bench/README.md.
 *
 * `--quick` cuts every time budget by four (for checking the bench itself, not for numbers).
 */
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { bareSubject } from './bare.ts'
import { cordageSubject, retainedPerRun } from './cordage.ts'
import { TOOL_COUNTS } from './many-tools.ts'
import { measure, measurePair, type Budget, type Sample, type Subject } from './measure.ts'
import { openaiSubject } from './peers/openai.ts'
import { piSubject } from './peers/pi.ts'

const STEPS = [10, 50, 100]
/** The run length at which the systems are measured with many tools too. */
const AT = 50
const MANY = TOOL_COUNTS[1]
const scale = process.argv.includes('--quick') ? 0.25 : 1
const warmup: Budget = { warmupMs: 0, measureMs: 400 * scale, minRuns: 3, maxRuns: Infinity }
const budget: Budget = { warmupMs: 300 * scale, measureMs: 3000 * scale, minRuns: 15, maxRuns: 20_000 }
/** For two subjects timed in turn: half as long again, so each gets three quarters of the runs it would alone. */
const pairBudget: Budget = { ...budget, measureMs: 1.5 * budget.measureMs }
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
console.log(
  `workload: scripted model, no-op tool; a run of N steps = N model calls, N-1 tool calls; at ${AT} steps also with ${MANY} tools registered\n`,
)

const bare = bareSubject()
const cordage = await cordageSubject()
const pi = piSubject()
const openai = openaiSubject()
const cordageMany = await cordageSubject(200, MANY)
const piMany = piSubject(MANY)
const openaiMany = openaiSubject(MANY)
const results = new Map<string, Sample>()
/** The tool-count comparison, at {@link AT} steps: each system with 1 and with {@link MANY} tools, timed in turn. */
const byTools = new Map<string, [Sample, Sample]>()
const key = (subject: Subject, steps: number) => `${subject.name}/${steps}`

/**
 * Warm every subject at every length (the many-tools ones at {@link AT} steps only) first, then time
 * each; at {@link AT} steps also each system with 1 and with {@link MANY} tools, run by run in turn
 * ({@link measurePair}), so that the ratio of the two, a small difference, is not lost in the noise.
 */
async function bench(subjects: Subject[], pairs: [Subject, Subject][]) {
  for (const subject of subjects) for (const steps of STEPS) await measure(subject, steps, warmup)
  for (const [, many] of pairs) await measure(many, AT, warmup)
  for (const steps of STEPS) {
    for (const subject of subjects) results.set(key(subject, steps), await measure(subject, steps, budget))
    if (steps === AT) for (const [one, many] of pairs) byTools.set(one.name, await measurePair(one, many, AT, pairBudget))
  }
}

// The OpenAI SDK goes last. Its first run enters an AsyncLocalStorage (for trace context, even with
// tracing off), and on Node 20 that switches on promise hooks for the whole process: from then on every
// await anywhere costs more. Measured first, it would slow Pi by about half and Cordage by about a
// tenth. Both are measured again afterwards, so the size of that effect is in the output too.
await bench(
  [bare, cordage, pi],
  [
    [cordage, cordageMany],
    [pi, piMany],
  ],
)
// The ratio the issue asks about, measured so that a change in the machine's load cannot move it: Cordage
// and Pi timed in turn, run by run, at each length. (Each timed alone above, minutes apart on a noisy
// machine, their medians may come from different loads.)
const inTurn = new Map<number, [Sample, Sample]>()
for (const steps of STEPS) inTurn.set(steps, await measurePair(cordage, pi, steps, pairBudget))
const retained = []
for (const steps of STEPS) retained.push({ steps, ...(await retainedPerRun(steps, retainedRuns)) })
await bench([openai], [[openai, openaiMany]])
const after = { cordage: await measure(cordage, 50, budget), pi: await measure(pi, 50, budget) }

const us = (n: number) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0))
const times = (r: number) => `${r < 0.1 ? r.toFixed(3) : r < 10 ? r.toFixed(2) : r.toFixed(1)}x`
const col = (s: string) => s.padStart(24)
const header = (title: string) => console.log(title.padEnd(20) + STEPS.map((n) => col(`${n} steps`)).join(''))
const median = (subject: Subject, n: number) => results.get(key(subject, n))!.median

header('us/step')
console.log('  median / p95 across runs (runs timed)')
for (const subject of [bare, cordage, pi, openai]) {
  console.log(
    subject.name.padEnd(20) +
      STEPS.map((n) => {
        const s = results.get(key(subject, n))!
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
  console.log(label.padEnd(20) + STEPS.map((n) => col(times(median(cordage, n) / median(peer, n)))).join(''))
}
console.log(
  'Cordage / Pi in turn'.padEnd(20) +
    STEPS.map((n) => {
      const [ours, theirs] = inTurn.get(n)!
      return col(`${times(ours.median / theirs.median)} (${us(ours.median)} / ${us(theirs.median)})`)
    }).join(''),
)
console.log('  (the two timed in turn, run by run: the ratio to read on a noisy machine)')

console.log('')
console.log(`tools registered, ${AT} steps`.padEnd(20) + [col('1 tool'), col(`${MANY} tools`), col(`${MANY} / 1 (flatness)`)].join(''))
console.log('  median / p95 across runs (runs timed); the two timed in turn, run by run')
const cell = (s: Sample) => col(`${us(s.median)} / ${us(s.p95)} (${s.runs})`)
for (const subject of [cordage, pi, openai]) {
  const [one, many] = byTools.get(subject.name)!
  console.log(subject.name.padEnd(20) + cell(one) + cell(many) + col(times(many.median / one.median)))
}
for (const [label, peer] of [
  ['Cordage / Pi', pi],
  ['Cordage / OpenAI', openai],
] as const) {
  const [ours, theirs] = [byTools.get(cordage.name)!, byTools.get(peer.name)!]
  console.log(label.padEnd(20) + col(times(ours[0].median / theirs[0].median)) + col(times(ours[1].median / theirs[1].median)))
}

console.log('\nafter the OpenAI SDK has run in this process (AsyncLocalStorage on), 50 steps, median us/step:')
console.log(
  `  Cordage ${us(after.cordage.median)} (was ${us(median(cordage, 50))}), Pi ${us(after.pi.median)} (was ${us(median(pi, 50))}), Cordage / Pi ${times(after.cordage.median / after.pi.median)}`,
)

console.log(`\nCordage heap retained per finished run (store-memory keeps every event; ${retainedRuns} runs each, after full GC):`)
for (const { steps, bytesPerRun } of retained) {
  console.log(
    `${String(steps).padStart(6)} steps: ${(bytesPerRun / 1024).toFixed(1).padStart(7)} KiB per run, ${(bytesPerRun / steps / 1024).toFixed(2)} KiB per step`,
  )
}
