/**
 * @module cli/eval
 * `cordage eval SUITE`: run a suite, print a line per case as it ends and a table per variant, write
 * the JSON (`--out`) and the HTML report (`--report`, with a copy where the playground finds it), and
 * exit 0 only if every expectation of the reference variant holds — or, with `--regressions-only`,
 * unless a case that passed in the baseline fails now. Ablated and varied variants are measured, not
 * gated: switching a mechanism off is expected to break cases (that is what it shows).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import { loadPreset } from '../host/preset.ts'
import { compareBaseline, readBaseline } from '../eval/baseline.ts'
import { loadSuite } from '../eval/load.ts'
import { latestReportPath, renderReport } from '../eval/report.ts'
import type { CaseRun, SuiteResult } from '../eval/result.ts'
import { runSuite } from '../eval/suite.ts'
import { parseVariants } from '../eval/variants.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'

export async function evalCommand({ positionals, flags }: Parsed, io: Output): Promise<number> {
  const [suite] = positionals
  const list = (name: string) => (flags[name] as string[] | undefined) ?? []
  const jobs = flags.jobs === undefined ? undefined : Number(flags.jobs)
  if (jobs !== undefined && (!Number.isInteger(jobs) || jobs < 1 || jobs > 64))
    throw new CordageError('invalid_input', `--jobs must be a whole number from 1 to 64, got ${JSON.stringify(flags.jobs)}`)
  if (flags['regressions-only'] && !flags.baseline)
    throw new CordageError('invalid_input', '--regressions-only compares with a baseline; add --baseline FILE')
  // The preset first: a --preset that does not load is that error, whatever the suite holds.
  if (flags.preset !== undefined) loadPreset(String(flags.preset))
  const variants = parseVariants({ ablate: list('ablate'), vary: list('vary'), plugin: list('plugin') })
  const cases = loadSuite(suite)
  const baseline = flags.baseline ? readBaseline(String(flags.baseline)) : undefined
  const json = !!flags.json
  const width = Math.max(...variants.map((v) => v.id.length), 7)
  if (!json) io.err(`eval ${suite}: ${cases.length} case(s) × ${variants.length} variant(s)`)
  const result = await runSuite({
    suite,
    cases,
    variants,
    preset: flags.preset as string | undefined,
    jobs,
    keep: !!flags.keep,
    onRun: json ? undefined : (run) => io.out(caseLine(run, width)),
  })
  if (baseline) result.baseline = compareBaseline(String(flags.baseline), baseline, result)
  if (flags.out) write(String(flags.out), `${JSON.stringify(result, null, 2)}\n`)
  if (flags.report) {
    const html = renderReport(result)
    write(String(flags.report), html)
    write(latestReportPath(process.cwd()), html)
  }
  if (json) io.out(JSON.stringify(result))
  else for (const line of summaryLines(result)) io.out(line)
  return exitCode(result, !!flags['regressions-only'])
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

export function exitCode(result: SuiteResult, regressionsOnly: boolean): number {
  if (regressionsOnly) return result.baseline?.regressions.length ? ExitCodes.failed : ExitCodes.ok
  const reference = result.variants[0]?.id
  return result.runs.every((r) => r.variant !== reference || r.ok) ? ExitCodes.ok : ExitCodes.failed
}

function caseLine(run: CaseRun, width: number): string {
  const mark = run.ok ? 'pass' : 'FAIL'
  const outcome = run.error
    ? `error [${run.error.code}] ${run.error.message}`
    : `${run.status}${run.failureCode ? ` ${run.failureCode}` : ''}`
  const failed = run.checks.filter((k) => !k.ok).map((k) => `\n      ${k.name}: expected ${k.expected}, got ${k.actual}`)
  const notes = (run.notes ?? []).map((n) => `\n      note: ${n}`)
  return `${mark}  ${run.variant.padEnd(width)}  ${run.case.padEnd(28)} ${outcome}  ${run.steps} step(s) ${run.latencyMs} ms${failed.join('')}${notes.join('')}`
}

/** The per-variant table (the ablation table when there are variants), then what moved against the baseline. */
export function summaryLines(result: SuiteResult): string[] {
  const rows = result.summaries.map((s) => [
    s.variant,
    `${s.passed}/${s.cases}`,
    `${Math.round(s.verifiedSuccessRate * 100)}%`,
    `$${s.costUsd.toFixed(4)}`,
    String(s.tokens),
    `${s.latencyMs.p50} ms`,
    Object.entries(s.failureMix)
      .map(([k, n]) => `${k}×${n}`)
      .join(' ') || '-',
  ])
  const head = ['variant', 'passed', 'verified', 'cost', 'tokens', 'p50', 'failure mix']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  const out = ['', line(head), ...rows.map(line)]
  for (const s of result.summaries) for (const c of s.changed) out.push(`  ${s.variant}: ${c}`)
  const b = result.baseline
  if (b) {
    out.push(
      '',
      `against ${b.file}: ${b.regressions.length} regression(s), ${b.fixed.length} fixed, ${b.added.length} new, ${b.removed.length} gone`,
    )
    for (const r of b.regressions) out.push(`  regression ${r.case} (${r.variant}): ${r.was} → ${r.now}`)
    for (const m of b.metrics) out.push(`  ${m.variant} ${m.field}: ${m.was} → ${m.now}`)
  }
  return out
}
