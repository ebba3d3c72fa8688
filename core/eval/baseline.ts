/**
 * @module eval/baseline
 * A baseline is the JSON of an earlier `cordage eval --out FILE`. It is read back strictly (a file of
 * another format, or edited by hand into something else, is refused, not compared as if empty), and
 * the current result is compared with it case by case and figure by figure.
 */
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { CordageError } from '../contracts/errors.ts'
import { ResultFormat, type BaselineDiff, type SuiteResult } from './result.ts'

const Stored = z.object({
  format: z.literal(ResultFormat),
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
type Stored = z.infer<typeof Stored>

export function readBaseline(file: string): Stored {
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

export function compareBaseline(file: string, baseline: Stored, now: SuiteResult): BaselineDiff {
  const key = (r: { case: string; variant: string }) => `${r.variant}\u0000${r.case}`
  const before = new Map(baseline.runs.map((r) => [key(r), r]))
  const after = new Map(now.runs.map((r) => [key(r), r]))
  const outcome = (r: { ok: boolean; status?: string; failureCode?: string }) =>
    `${r.ok ? 'pass' : 'fail'} (${r.status ?? 'no run'}${r.failureCode ? ` ${r.failureCode}` : ''})`
  const diff: BaselineDiff = { file, regressions: [], fixed: [], added: [], removed: [], metrics: [] }
  for (const [k, r] of after) {
    const was = before.get(k)
    if (!was) diff.added.push(`${r.case} (${r.variant})`)
    else if (was.ok && !r.ok) diff.regressions.push({ case: r.case, variant: r.variant, was: outcome(was), now: outcome(r) })
    else if (!was.ok && r.ok) diff.fixed.push({ case: r.case, variant: r.variant })
  }
  for (const [k, r] of before) if (!after.has(k)) diff.removed.push(`${r.case} (${r.variant})`)
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
    for (const [field, a, b] of pairs) if (a !== b) diff.metrics.push({ variant: s.variant, field, was: a, now: b })
  }
  return diff
}
