/**
 * Timing and statistics shared by every subject of the bench. Each run is timed on its own, so work a
 * subject does between runs (recycling a store, say) stays out of the numbers, and the spread across
 * runs (median, p95) is visible instead of hidden in one long average.
 */

/** One system under test: something that can do a full run of `steps` model calls. */
export interface Subject {
  name: string
  /** One complete run of `steps` steps; throws if the run did not go as scripted. */
  run(steps: number): Promise<void>
  /** Untimed housekeeping between runs. */
  between?(): Promise<void> | void
}

export interface Budget {
  /** Untimed runs first, so the JIT and caches settle before anything is counted. */
  warmupMs: number
  /** Timed runs go on until both this much time has passed and `minRuns` are done, or `maxRuns` are. */
  measureMs: number
  minRuns: number
  maxRuns: number
}

export interface Sample {
  subject: string
  steps: number
  runs: number
  /** Microseconds per step: the time of one run divided by its steps. */
  median: number
  p95: number
  mean: number
}

export async function measure(subject: Subject, steps: number, budget: Budget): Promise<Sample> {
  await loop(subject, steps, budget.warmupMs, 3, Infinity)
  gc()
  return sample(subject, steps, await loop(subject, steps, budget.measureMs, budget.minRuns, budget.maxRuns))
}

/**
 * Two subjects timed in turn, one run of each after the other, for the same budget in all: whatever
 * else the machine is doing then slows both alike, so the ratio of the two is steadier than that of two
 * subjects measured one after the other. Each gets about half the runs {@link measure} would give it
 * for the same budget.
 */
export async function measurePair(a: Subject, b: Subject, steps: number, budget: Budget): Promise<[Sample, Sample]> {
  for (const subject of [a, b]) await loop(subject, steps, budget.warmupMs / 2, 3, Infinity)
  gc()
  const times: [number[], number[]] = [[], []]
  const until = performance.now() + budget.measureMs
  while (times[0].length < budget.maxRuns && (times[0].length < budget.minRuns || performance.now() < until)) {
    times[0].push(await timed(a, steps))
    times[1].push(await timed(b, steps))
  }
  return [sample(a, steps, times[0]), sample(b, steps, times[1])]
}

function sample(subject: Subject, steps: number, times: number[]): Sample {
  const perStep = times.map((ns) => ns / 1000 / steps).sort((a, b) => a - b)
  return {
    subject: subject.name,
    steps,
    runs: perStep.length,
    median: quantile(perStep, 0.5),
    p95: quantile(perStep, 0.95),
    mean: perStep.reduce((a, b) => a + b, 0) / perStep.length,
  }
}

/** One run, timed on its own; the housekeeping after it is not. Nanoseconds. */
async function timed(subject: Subject, steps: number): Promise<number> {
  const t0 = process.hrtime.bigint()
  await subject.run(steps)
  const ns = Number(process.hrtime.bigint() - t0)
  await subject.between?.()
  return ns
}

/** Runs until `ms` have passed and at least `minRuns` are done, at most `maxRuns`; nanoseconds per run. */
async function loop(subject: Subject, steps: number, ms: number, minRuns: number, maxRuns: number): Promise<number[]> {
  const times: number[] = []
  const until = performance.now() + ms
  while (times.length < maxRuns && (times.length < minRuns || performance.now() < until)) times.push(await timed(subject, steps))
  return times
}

/** Nearest-rank quantile of a sorted array. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

/** Forces a full collection; the bench runs under `node --expose-gc` and refuses to run without it. */
/** The number after `name` on the command line (`--steps 50`), or `fallback` when it is not given. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}

export function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('run the bench with node --expose-gc (npm run bench does)')
  collect()
}
