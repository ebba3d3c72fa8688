/**
 * Scale-out on one PostgreSQL: 1, 2, 4 and 8 `cordage worker` processes draining a queue of submitted
 * runs, each run calling a write tool whose effect lands in the tool's own table. Prints runs per
 * second, claim latency, lease renewals and the statements per run, as ratios to one worker measured
 * in the same run, and fails when a run was driven twice or an effect made twice.
 * Method and figures: docs/concepts/scaling.md.
 *
 *   CORDAGE_PG_URL=postgres://cordage:cordage@127.0.0.1:5432/cordage node --import tsx bench/scale-out.ts [--quick]
 */
import { execFileSync } from 'node:child_process'
import { cpus, loadavg } from 'node:os'
import { measure, type Measurement, type Plan } from './scale-out/measure.ts'
import { details, figures, proofLines, statementTable } from './scale-out/report.ts'

const url = process.env.CORDAGE_PG_URL
if (!url) {
  console.log(
    'scale-out: skipped: set CORDAGE_PG_URL (e.g. postgres://cordage:cordage@127.0.0.1:5432/cordage) to measure workers on PostgreSQL',
  )
  process.exit(0)
}
const quick = process.argv.includes('--quick')
// --workers 1,2 measures fewer counts (the first is the baseline of the ratios).
const listed = process.argv[process.argv.indexOf('--workers') + 1]
const counts = process.argv.includes('--workers') ? (listed ?? '').split(',').map(Number) : [1, 2, 4, 8]
if (!counts.length || counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--workers takes counts like 1,2,4, got ${listed}`)
// Model calls long enough for a lease renewal in every run, as in real runs (which last seconds,
// under the default lease of 30 s renewed every 10 s); a lease long enough that no worker of a busy
// 2-core machine stalls past it.
const shape = { modelDelayMs: 300, leaseTtlMs: 1200, pollMs: 500 }
const perWorker = quick ? 4 : 10
const arrivals = quick ? 3 : 8

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
})()
// Other work on the machine moves every figure: the load average says how much there was.
const load = () => loadavg()[0].toFixed(1)
console.log(
  `Cordage scale-out on PostgreSQL — node ${process.version}, ${cpus().length} cores (load average ${load()}), commit ${commit}, ${new Date().toISOString().slice(0, 10)}`,
)
console.log(
  `each run: 2 scripted model calls of ${shape.modelDelayMs} ms, 1 write tool (an INSERT into its own table); lease ${shape.leaseTtlMs} ms (renewed every ${shape.leaseTtlMs / 3} ms), worker --poll ${shape.pollMs}`,
)
console.log(
  `drain: ${perWorker} runs per worker submitted at once; claim latency: ${arrivals} runs per worker arriving one by one (Poisson) at half the 1-worker rate per worker\n`,
)

const results: Measurement[] = []
for (const workers of counts) {
  const plan: Plan = { ...shape, workers, backlog: perWorker * workers, arrivals, arrivalRate: results[0] && results[0].drain.rate / 2 }
  const started = Date.now()
  const m = await measure(url, plan)
  results.push(m)
  console.error(`  measured ${workers} worker(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

console.log(`(load average at the end: ${load()})\n`)
console.log(figures(results).join('\n'))
console.log(`\n${details(results).join('\n')}`)
console.log(`\nstatements per run (mean; idle polls apart)\n${statementTable(results).join('\n')}`)
const { lines, failed } = proofLines(results)
console.log(`\nproofs, at every worker count\n${lines.join('\n')}`)
if (failed) {
  console.log(`\n${failed} proof(s) failed`)
  process.exitCode = 1
}
