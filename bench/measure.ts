/**
 * Timing and statistics shared by every subject of the bench. Each run is timed on its own, so work a
 * subject does between runs (recycling a store, say) stays out of the numbers, and the spread across
 * runs (median, p95) is visible instead of hidden in one long average.
 */

/** One system under test: something that can do a full run of `steps` model calls. */
export interface Subject {
  name: string
  /** How many tools the system has registered (the model calls one of them); 1 unless said. */
  tools?: number
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
  const times = await loop(subject, steps, budget.measureMs, budget.minRuns, budget.maxRuns)
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

/** Runs until `ms` have passed and at least `minRuns` are done, at most `maxRuns`; nanoseconds per run. */
async function loop(subject: Subject, steps: number, ms: number, minRuns: number, maxRuns: number): Promise<number[]> {
  const times: number[] = []
  const until = performance.now() + ms
  while (times.length < maxRuns && (times.length < minRuns || performance.now() < until)) {
    const t0 = process.hrtime.bigint()
    await subject.run(steps)
    times.push(Number(process.hrtime.bigint() - t0))
    await subject.between?.()
  }
  return times
}

/** Nearest-rank quantile of a sorted array. */
function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

/** Forces a full collection; the bench runs under `node --expose-gc` and refuses to run without it. */
export function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('run the bench with node --expose-gc (npm run bench does)')
  collect()
}
