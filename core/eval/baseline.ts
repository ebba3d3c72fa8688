/**
 * @module eval/baseline
 * A baseline is the JSON of an earlier `cordage eval --out FILE`. It is read back strictly (a file of
 * another format, or edited by hand into something else, is refused, not compared as if empty), it must
 * be of the same suite and preset, and the current result is compared with it case by case and figure by
 * figure. `--regressions-only` gates on the regressions alone, so nothing that hides a failure may escape
 * them: a case that passed and is gone now (deleted, renamed, or its variant not run) and a new case
 * that fails are regressions too.
 */
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { CordageError } from '../contracts/errors.ts'
import { ResultFormat, type BaselineDiff, type SuiteResult } from './result.ts'

const Stored = z.object({
  format: z.literal(ResultFormat),
  suite: z.string(),
  preset: z.string().optional(),
  variants: z.array(z.object({ id: z.string() })),
  runs: z.array(
    z.object({ case: z.string(), variant: z.string(), ok: z.boolean(), status: z.string().optional(), failureCode: z.string().optional() }),
  ),
  summaries: z.array(
    z.object({
      variant: z.string(),
      passed: z.number(),
      verifiedSuccessRate: z.number(),
      costUsd: z.number(),
      tokens: z.number(),
      latencyMs: z.object({ p50: z.number() }),
    }),
  ),
})
export type Baseline = z.infer<typeof Stored>

export function readBaseline(file: string): Baseline {
  let data: unknown
  try {
    data = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new CordageError(
      'invalid_input',
      `--baseline ${file}: cannot read it as JSON (${(error as Error).message}); give the file an earlier \`cordage eval --out FILE\` wrote`,
    )
  }
  const parsed = Stored.safeParse(data)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    throw new CordageError(
      'invalid_input',
      `--baseline ${file}: not a cordage eval result of format ${ResultFormat} (${first.path.join('.') || 'top'}: ${first.message}); write one with \`cordage eval --out FILE\``,
    )
  }
  return parsed.data
}

/**
 * A baseline of another suite or preset compares different things: refused, not read as a list of
 * cases added and removed. The suite is compared as named on the command line.
 * @throws CordageError `invalid_input` saying what differs
 */
export function checkBaselineFits(file: string, baseline: Baseline, now: { suite: string; preset?: string }): void {
  const differs: string[] = []
  if (baseline.suite !== now.suite)
    differs.push(`it is of suite ${JSON.stringify(baseline.suite)}, this run of ${JSON.stringify(now.suite)}`)
  if (baseline.preset !== now.preset) {
    const named = (p: string | undefined) => (p === undefined ? "each case's own preset" : `--preset ${JSON.stringify(p)}`)
    differs.push(`it ran on ${named(baseline.preset)}, this run on ${named(now.preset)}`)
  }
  if (differs.length)
    throw new CordageError(
      'invalid_input',
      `--baseline ${file} does not fit this run: ${differs.join('; ')}. Name the suite and preset as the baseline did, or write a new baseline for this run with --out FILE`,
    )
}

export function compareBaseline(file: string, baseline: Baseline, now: SuiteResult): BaselineDiff {
  checkBaselineFits(file, baseline, now)
  const key = (r: { case: string; variant: string }) => `${r.variant}\u0000${r.case}`
  const before = new Map(baseline.runs.map((r) => [key(r), r]))
  const after = new Map(now.runs.map((r) => [key(r), r]))
  const variantsBefore = new Set(baseline.variants.map((v) => v.id))
  const variantsNow = new Set(now.variants.map((v) => v.id))
  const outcome = (r: { ok: boolean; status?: string; failureCode?: string }) =>
    `${r.ok ? 'pass' : 'fail'} (${r.status ?? 'no run'}${r.failureCode ? ` ${r.failureCode}` : ''})`
  const diff: BaselineDiff = { file, regressions: [], fixed: [], added: [], removed: [], metrics: [] }
  for (const id of variantsNow) if (!variantsBefore.has(id)) diff.added.push(`variant ${id}`)
  for (const id of variantsBefore) if (!variantsNow.has(id)) diff.removed.push(`variant ${id}`)
  for (const [k, r] of after) {
    const was = before.get(k)
    if (!was) {
      diff.added.push(`${r.case} (${r.variant})`)
      // A failing case the baseline does not know (a failing case renamed, or added failing) is not
      // excused for being new. A variant the baseline did not run has nothing to regress from: it is
      // listed as added, and its runs are measured, not gated.
      if (!r.ok && variantsBefore.has(r.variant)) diff.regressions.push({ case: r.case, variant: r.variant, was: 'new', now: outcome(r) })
    } else if (was.ok && !r.ok) diff.regressions.push({ case: r.case, variant: r.variant, was: outcome(was), now: outcome(r) })
    else if (!was.ok && r.ok) diff.fixed.push({ case: r.case, variant: r.variant })
  }
  for (const [k, r] of before) {
    if (after.has(k)) continue
    diff.removed.push(`${r.case} (${r.variant})`)
    // What passed and is not run now is not known to pass any more.
    if (r.ok)
      diff.regressions.push({
        case: r.case,
        variant: r.variant,
        was: outcome(r),
        now: variantsNow.has(r.variant) ? 'not run (removed)' : `not run (variant ${r.variant} not run)`,
      })
  }
  for (const s of now.summaries) {
    const was = baseline.summaries.find((b) => b.variant === s.variant)
    if (!was) continue
    const pairs = [
      ['passed', was.passed, s.passed],
      ['verifiedSuccessRate', was.verifiedSuccessRate, s.verifiedSuccessRate],
      ['costUsd', was.costUsd, s.costUsd],
      ['tokens', was.tokens, s.tokens],
      ['latencyP50', was.latencyMs.p50, s.latencyMs.p50],
    ] as const
    for (const [field, a, b] of pairs)
      if (moved(field, a, b)) diff.metrics.push({ variant: s.variant, field, was: round(a), now: round(b) })
  }
  return diff
}

/**
 * A figure moved: any change of a count, rate or cost; latency only by a quarter and 5 ms or more,
 * since the same suite on the same machine varies by a few milliseconds from run to run.
 */
function moved(field: string, was: number, now: number): boolean {
  if (field !== 'latencyP50') return round(was) !== round(now)
  return Math.abs(now - was) >= 5 && Math.abs(now - was) >= 0.25 * Math.max(was, 1)
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6
}
