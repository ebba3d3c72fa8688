/**
 * @module cli/eval
 * `cordage eval SUITE`: run a suite, print a line per case as it ends and a table per variant, write
 * the JSON (`--out`) and the HTML report (`--report`, with a copy where the playground finds it), and
 * exit 0 only if every expectation of the reference variant holds — or, with `--regressions-only`,
 * unless a case that passed in the baseline fails now. Ablated and varied variants are measured, not
 * gated: switching a mechanism off is expected to break cases (that is what it shows).
 */
import { rmSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import { loadPreset, type Preset } from '../host/preset.ts'
import { PluginCatalog, type CatalogEntry } from '../host/catalog.ts'
import { closest } from '../kit/closest.ts'
import { liveScratch } from '../eval/run-case.ts'
import type { Schema } from 'cordis'
import { configKeys } from '../eval/prune.ts'
import { checkBaselineFits, compareBaseline, readBaseline } from '../eval/baseline.ts'
import { failsCommand, gatedVariants } from '../eval/gate.ts'
import { loadSuite } from '../eval/load.ts'
import { latestReportPath, renderReport } from '../eval/report.ts'
import type { CaseRun, SuiteResult, Variant } from '../eval/result.ts'
import { runSuite } from '../eval/suite.ts'
import { Mechanisms, parseVariants } from '../eval/variants.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import { checkOutPath, writeOut } from './out-path.ts'
import type { Output } from './output.ts'

export async function evalCommand({ positionals, flags }: Parsed, io: Output): Promise<number> {
  const [suite] = positionals
  const list = (name: string) => (flags[name] as string[] | undefined) ?? []
  const jobs = flags.jobs === undefined ? undefined : Number(flags.jobs)
  if (jobs !== undefined && (!Number.isInteger(jobs) || jobs < 1 || jobs > 64))
    throw new CordageError('invalid_input', `--jobs must be a whole number from 1 to 64, got ${JSON.stringify(flags.jobs)}`)
  if (flags['regressions-only'] && !flags.baseline)
    throw new CordageError('invalid_input', '--regressions-only compares with a baseline; add --baseline FILE')
  // Where the results go, before anything runs: a path that cannot be written fails now, not after the suite.
  const outputs = outputsOf(flags)
  // The preset first: a --preset that does not load is that error, whatever the suite holds.
  if (flags.preset !== undefined) loadPreset(String(flags.preset))
  const timeoutMs = flags['case-timeout'] === undefined ? undefined : Number(flags['case-timeout'])
  if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 3_600_000))
    throw new CordageError(
      'invalid_input',
      `--case-timeout must be a whole number of milliseconds from 1 to 3600000, got ${JSON.stringify(flags['case-timeout'])}`,
    )
  const variants = parseVariants({ ablate: list('ablate'), vary: list('vary'), plugin: list('plugin') })
  const cases = loadSuite(suite)
  const catalog = await PluginCatalog.scan()
  // The presets the cases run on, loaded before anything runs: one that is missing or not valid is a
  // usage error (exit 2), and their `path:` plugins are names --ablate, --vary and --plugin may give.
  const presets = new Map<string, Preset>()
  for (const c of cases) {
    const file = flags.preset !== undefined ? resolve(String(flags.preset)) : c.preset ? resolve(dirname(c.file), c.preset) : undefined
    if (!file)
      throw new CordageError(
        'invalid_input',
        `${c.shown}: no preset to run; give "preset:" in the case (relative to the case file) or --preset`,
      )
    if (!presets.has(file)) {
      try {
        presets.set(file, loadPreset(file))
      } catch (error) {
        if (CordageError.is(error) && error.code === 'preset_not_found')
          throw new CordageError(
            'preset_not_found',
            `${c.shown}: preset ${file} does not exist (a case's preset is relative to the case file)`,
          )
        throw error
      }
    }
  }
  checkVariants(variants, catalog, await pathPlugins([...presets.values()]))
  const baseline = flags.baseline ? readBaseline(String(flags.baseline)) : undefined
  // Before anything runs: a baseline of another suite or preset would be compared case by case with nothing.
  if (baseline) checkBaselineFits(String(flags.baseline), baseline, { suite, preset: flags.preset as string | undefined })
  const json = !!flags.json
  const width = Math.max(...variants.map((v) => v.id.length), 7)
  if (!json) io.err(`eval ${suite}: ${cases.length} case(s) × ${variants.length} variant(s)`)
  // Interrupted: the scratch copies of the cases in progress go too.
  const interrupted = () => {
    for (const dir of liveScratch) rmSync(dir, { recursive: true, force: true })
    process.exit(130)
  }
  process.once('SIGINT', interrupted)
  process.once('SIGTERM', interrupted)
  const result = await runSuite({
    suite,
    cases,
    variants,
    preset: flags.preset as string | undefined,
    jobs,
    timeoutMs,
    catalog,
    keep: !!flags.keep,
    onRun: json ? undefined : (run) => io.out(caseLine(run, width, gatedVariants({ variants }))),
  })
  process.off('SIGINT', interrupted)
  process.off('SIGTERM', interrupted)
  if (baseline) result.baseline = compareBaseline(String(flags.baseline), baseline, result)
  if (outputs.out) writeOut(outputs.out, `${JSON.stringify(result, null, 2)}\n`)
  if (outputs.report) {
    const html = renderReport(result)
    writeOut(outputs.report, html)
    writeOut(outputs.latest!, html)
  }
  if (json) io.out(JSON.stringify(result))
  else for (const line of summaryLines(result)) io.out(line)
  return exitCode(result, !!flags['regressions-only'])
}

/** The files --out and --report write, and the report's copy for the playground, each checked (core/cli/out-path.ts). */
function outputsOf(flags: Parsed['flags']): { out?: string; report?: string; latest?: string } {
  const out = flags.out === undefined ? undefined : checkOutPath('--out', flags.out)
  const report = flags.report === undefined ? undefined : checkOutPath('--report', flags.report)
  if (out && out === report)
    throw new CordageError(
      'invalid_input',
      `--report ${flags.report} is the same file as --out ${flags.out}: the report would replace the result; give two files`,
    )
  if (!report) return { out }
  const copy = latestReportPath(process.cwd())
  try {
    return { out, report, latest: checkOutPath('--report', copy) }
  } catch (error) {
    const why = (error as Error).message.slice((error as Error).message.indexOf(': ') + 2)
    throw new CordageError(
      'invalid_input',
      `--report: its copy for the playground, ${relative(process.cwd(), copy)}, cannot be written: ${why}`,
    )
  }
}

/**
 * 1 when a case could not run in any variant (an error is never a measurement), or an expectation of a
 * gated variant failed: the full harness, or every side of --plugin (a new version must hold too).
 * Ablated and varied variants are measured, not gated. With --regressions-only: regressions only.
 */
export function exitCode(result: SuiteResult, regressionsOnly: boolean): number {
  if (result.runs.some((r) => r.error)) return ExitCodes.failed
  if (regressionsOnly) return result.baseline?.regressions.length ? ExitCodes.failed : ExitCodes.ok
  const gated = gatedVariants(result)
  return result.runs.some((r) => failsCommand(r, gated)) ? ExitCodes.failed : ExitCodes.ok
}

/** The plugins the presets name by folder (`path:`), read from their manifests. */
async function pathPlugins(presets: Preset[]): Promise<CatalogEntry[]> {
  const scratch = new PluginCatalog()
  const out: CatalogEntry[] = []
  for (const preset of presets)
    for (const spec of Object.values(preset.agents))
      for (const ref of [spec.model, ...spec.plugins])
        if (ref.path !== undefined) out.push(await scratch.addFolder(ref.path).catch(() => undefined as never))
  return out.filter(Boolean)
}

/**
 * Names the variants give, checked against the installed plugins before anything runs: an ablation of a
 * plugin that does not exist, or a config key a plugin does not have, would run as the full harness.
 */
function checkVariants(variants: Variant[], catalog: PluginCatalog, local: CatalogEntry[]): void {
  const entries = [...catalog.entries(), ...local]
  const names = [...new Set(entries.map((e) => e.manifest.name))]
  const known = (name: string, flag: string) => {
    if (names.includes(name)) return
    const ablate = flag.startsWith('--ablate')
    const near = closest(name, ablate ? [...names, ...Object.keys(Mechanisms)] : names)
    throw new CordageError(
      'invalid_input',
      `${flag}: no plugin installed or named by the suite's presets is called "${name}"${near ? ` (did you mean ${near}?)` : ''}${ablate ? `; mechanisms are ${Object.keys(Mechanisms).join(', ')}` : ''}`,
    )
  }
  for (const v of variants) {
    if (v.kind === 'ablate' && !Mechanisms[v.mechanism!]) known(v.mechanism!, `--ablate ${v.mechanism}`)
    if (v.kind === 'plugin') known(v.plugin!, `--plugin ${v.id}`)
    if (v.kind === 'vary' && v.axis!.includes('.')) {
      const [plugin, key] = v.axis!.split('.')
      known(plugin, `--vary ${v.axis}`)
      const keys = new Set(
        entries.filter((e) => e.manifest.name === plugin).flatMap((e) => configKeys(e.manifest.config as Schema | undefined)),
      )
      if (!keys.has(key)) {
        const near = closest(key, [...keys])
        throw new CordageError(
          'invalid_input',
          `--vary ${v.axis}: ${plugin} has no config key "${key}"${near ? ` (did you mean ${near}?)` : ''}; its keys: ${[...keys].join(', ') || 'none'}`,
        )
      }
    }
  }
}

/** `miss`: an expectation of an ablated or varied variant did not hold, which is what it measures (eval/gate.ts); FAIL fails the command. */
function caseLine(run: CaseRun, width: number, gated: Set<string>): string {
  const mark = run.ok ? 'pass' : failsCommand(run, gated) ? 'FAIL' : 'miss'
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
  for (const v of result.variants) {
    const mine = result.runs.filter((r) => r.variant === v.id)
    if (v.kind === 'ablate' && mine.length && mine.every((r) => r.notes?.some((n) => n.includes('changes nothing'))))
      out.push(`  warning: ${v.id} changes nothing for any case of this suite (no agent has it): its row equals the full harness`)
  }
  const b = result.baseline
  if (b) {
    out.push(
      '',
      `against ${b.file}: ${b.regressions.length} regression(s), ${b.fixed.length} fixed, ${b.added.length} new, ${b.removed.length} gone`,
    )
    for (const r of b.regressions) out.push(`  regression ${r.case} (${r.variant}): ${r.was} → ${r.now}`)
    const missing = b.removed.filter((x) => x.startsWith('variant ')).map((x) => x.slice('variant '.length))
    if (missing.length)
      out.push(`  the baseline also ran ${missing.join(', ')}: run with the same --ablate / --vary / --plugin flags to compare those`)
    for (const m of b.metrics) out.push(`  ${m.variant} ${m.field}: ${m.was} → ${m.now}`)
  }
  return out
}
