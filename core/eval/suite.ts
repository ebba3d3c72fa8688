/**
 * @module eval/suite
 * Run every case of a suite under every variant, side by side up to `jobs` at a time (a `serial` case
 * runs alone), and sum each variant up: how many cases held, the verified success rate, the failure
 * mix, cost, tokens and latency, and which cases came out differently from the reference variant.
 */
import { availableParallelism } from 'node:os'
import { PluginCatalog } from '../host/index.ts'
import type { EvalCase } from './case.ts'
import { runCase } from './run-case.ts'
import { ResultFormat, type CaseRun, type SuiteResult, type Variant, type VariantSummary } from './result.ts'

export interface SuiteOptions {
  /** The suite as named (for the report). */
  suite: string
  cases: EvalCase[]
  variants: Variant[]
  /** Overrides every case's preset. */
  preset?: string
  /** Cases run at once (default: the machine's cores, at most 4). */
  jobs?: number
  keep?: boolean
  /** Time limit of each case that does not set its own (ms). */
  timeoutMs?: number
  catalog?: PluginCatalog
  /** Told of each case as it ends (for live output). */
  onRun?: (run: CaseRun) => void
}

export async function runSuite(options: SuiteOptions): Promise<SuiteResult> {
  const started = Date.now()
  const catalog = options.catalog ?? (await PluginCatalog.scan())
  const jobs = Math.max(1, options.jobs ?? Math.min(4, availableParallelism()))
  const work = options.variants.flatMap((variant) => options.cases.map((c) => ({ c, variant })))
  const runs: CaseRun[] = new Array(work.length)
  const one = async (i: number) => {
    const { c, variant } = work[i]
    // A catalogue per case: a preset's `path:` plugins are in each case's own copy of its folder, and
    // one catalogue would take the second copy for the same plugin installed twice.
    runs[i] = await runCase(c, variant, {
      preset: options.preset,
      catalog: catalogFor(catalog),
      keep: options.keep,
      timeoutMs: options.timeoutMs,
    })
    options.onRun?.(runs[i])
  }
  // Cases that may share the machine first, side by side; then each serial one alone.
  await pool(
    work.flatMap((w, i) => (w.c.serial ? [] : [i])),
    jobs,
    one,
  )
  for (const [i, w] of work.entries()) if (w.c.serial) await one(i)
  return {
    format: ResultFormat,
    suite: options.suite,
    preset: options.preset,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    variants: options.variants,
    runs,
    summaries: summarize(options.variants, runs),
  }
}

/** A catalogue for one case: the installed plugins of `base`, none of the folders earlier cases added. */
export function catalogFor(base: PluginCatalog): PluginCatalog {
  const own = new PluginCatalog()
  for (const entry of base.entries()) if (entry.origin !== 'path') own.add(entry)
  return own
}

async function pool(items: number[], size: number, each: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await each(items[next++])
  }
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker))
}

/** One summary per variant, `changed` against the first (the reference). */
export function summarize(variants: Variant[], runs: CaseRun[]): VariantSummary[] {
  const reference = runs.filter((r) => r.variant === variants[0]?.id)
  return variants.map((v) => {
    const mine = runs.filter((r) => r.variant === v.id)
    const failureMix: Record<string, number> = {}
    for (const r of mine) {
      if (r.status === 'COMPLETED' && r.ok) continue
      // A completion that broke the case's expectations (a wrong answer let through) is a failure too.
      const key = r.error
        ? `error:${r.error.code}`
        : r.status === 'COMPLETED'
          ? 'completed-wrong'
          : (r.failureCode ?? r.status ?? 'unknown')
      failureMix[key] = (failureMix[key] ?? 0) + 1
    }
    const latencies = mine.map((r) => r.latencyMs).sort((a, b) => a - b)
    return {
      variant: v.id,
      cases: mine.length,
      passed: mine.filter((r) => r.ok).length,
      verifiedSuccessRate: mine.length ? mine.filter((r) => r.verifiedSuccess).length / mine.length : 0,
      failureMix,
      costUsd: round(mine.reduce((s, r) => s + r.costUsd, 0)),
      tokens: mine.reduce((s, r) => s + r.tokens, 0),
      steps: mine.reduce((s, r) => s + r.steps, 0),
      latencyMs: { p50: latencies.length ? latencies[Math.floor((latencies.length - 1) / 2)] : 0, max: latencies.at(-1) ?? 0 },
      changed: v.id === variants[0]?.id ? [] : changes(reference, mine),
    }
  })
}

/** Cases whose outcome differs from the reference's, in words: `wrong-answer: FAILED_VERIFICATION → COMPLETED; answer.excludes failed`. */
function changes(reference: CaseRun[], mine: CaseRun[]): string[] {
  const out: string[] = []
  for (const r of mine) {
    const ref = reference.find((x) => x.case === r.case)
    if (!ref) continue
    const was = outcome(ref)
    const now = outcome(r)
    const effects = Object.keys(r.sideEffects).filter((k) => r.sideEffects[k] !== ref.sideEffects[k])
    if (was === now && ref.ok === r.ok && !effects.length) continue
    const parts = [was === now ? now : `${was} → ${now}`]
    for (const k of effects) parts.push(`${k} ${ref.sideEffects[k] ?? 0} → ${r.sideEffects[k]}`)
    const failed = r.checks.filter((k) => !k.ok).map((k) => k.name)
    if (ref.ok !== r.ok) parts.push(r.ok ? 'now passes' : `fails: ${failed.join(', ') || r.error?.code}`)
    out.push(`${r.case}: ${parts.join('; ')}`)
  }
  return out
}

function outcome(r: CaseRun): string {
  if (r.error) return `error ${r.error.code}`
  return `${r.status}${r.failureCode ? ` ${r.failureCode}` : ''}`
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6
}
