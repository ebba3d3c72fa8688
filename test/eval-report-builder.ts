/**
 * SuiteResult values for the report tests, built from a few runs: the summaries are worked out here
 * from the runs (as the engine would), so a test states only the runs and what it expects to see.
 */
import type { CaseRun, SuiteResult, Variant, VariantSummary } from '../core/eval/result.ts'

/** One case run; `outcome` sets status, failure code, ok and verified success together. */
export function run(
  name: string,
  variant: string,
  outcome: 'ok' | 'wrong-answer' | { status: CaseRun['status']; failureCode?: string } | { error: string },
  extra: Partial<CaseRun> = {},
): CaseRun {
  const base: CaseRun = {
    case: name,
    file: `evals/${name}.yml`,
    variant,
    ok: true,
    checks: [{ name: 'status', ok: true, expected: 'COMPLETED', actual: 'COMPLETED' }],
    runId: `run_${name}_${variant}`,
    status: 'COMPLETED',
    answer: 'done [source: T-1]',
    verifiedSuccess: true,
    steps: 2,
    tokens: 300,
    costUsd: 0.002,
    latencyMs: 120,
    startupMs: 30,
    sideEffects: {},
    duplicates: {},
    events: ['run/start', 'run/end'],
  }
  if (outcome === 'wrong-answer') {
    Object.assign(base, {
      ok: false,
      verifiedSuccess: false,
      checks: [...base.checks, { name: 'answer.includes', ok: false, expected: '[source: T-1]', actual: 'I made this up' }],
      answer: 'I made this up',
    })
  } else if (typeof outcome === 'object' && 'error' in outcome) {
    Object.assign(base, {
      ok: false,
      verifiedSuccess: false,
      checks: [],
      status: undefined,
      answer: undefined,
      steps: 0,
      tokens: 0,
      costUsd: 0,
      error: { code: outcome.error, message: `could not start: ${outcome.error}` },
    })
  } else if (typeof outcome === 'object') {
    Object.assign(base, {
      ok: false,
      verifiedSuccess: false,
      status: outcome.status,
      failureCode: outcome.failureCode,
      answer: undefined,
      checks: [{ name: 'status', ok: false, expected: 'COMPLETED', actual: String(outcome.status) }],
    })
  }
  return { ...base, ...extra }
}

export function variant(id: string, kind: Variant['kind'] = 'ablate', more: Partial<Variant> = {}): Variant {
  return { id, kind, label: kind === 'full' ? 'the preset as it is' : `changed: ${id}`, ...more }
}

/** The middle value (the lower one of an even count). */
function p50(values: number[]): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)] as number
}

/** A SuiteResult whose summaries follow from `runs`, one per variant, in the order given. */
export function suite(variants: Variant[], runs: CaseRun[], more: Partial<SuiteResult> = {}): SuiteResult {
  const full = variants.find((v) => v.kind === 'full')?.id
  const summaries = variants.map((v): VariantSummary => {
    const mine = runs.filter((r) => r.variant === v.id)
    const failureMix: Record<string, number> = {}
    for (const r of mine) {
      if (r.status === 'COMPLETED' || r.error) continue
      const code = r.failureCode ?? String(r.status)
      failureMix[code] = (failureMix[code] ?? 0) + 1
    }
    const changed =
      v.id === full
        ? []
        : mine.flatMap((r) => {
            const was = runs.find((f) => f.variant === full && f.case === r.case)
            return was && was.ok !== r.ok ? [`${r.case}: ${was.ok ? 'passed' : 'failed'} with full, ${r.ok ? 'passes' : 'fails'} here`] : []
          })
    return {
      variant: v.id,
      cases: mine.length,
      passed: mine.filter((r) => r.ok).length,
      verifiedSuccessRate: mine.length ? mine.filter((r) => r.verifiedSuccess).length / mine.length : 0,
      failureMix,
      costUsd: mine.reduce((s, r) => s + r.costUsd, 0),
      tokens: mine.reduce((s, r) => s + r.tokens, 0),
      steps: mine.reduce((s, r) => s + r.steps, 0),
      latencyMs: { p50: p50(mine.map((r) => r.latencyMs)), max: Math.max(0, ...mine.map((r) => r.latencyMs)) },
      changed,
    }
  })
  return { format: 1, suite: 'evals/', startedAt: '2026-12-02T06:00:00.000Z', durationMs: 4321, variants, runs, summaries, ...more }
}
