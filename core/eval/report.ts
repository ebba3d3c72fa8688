/**
 * @module eval/report
 * The HTML report of `cordage eval --report FILE`: one self-contained file (inline CSS and SVG, no
 * script, no request to anything) with the suite's figures as charts first and tables after. Its
 * content-security policy forbids everything but inline styles and data: images, so even text that
 * escaped escaping could not run or call out; and all text from the result (case names, a model's
 * answers, messages, codes) is escaped anyway.
 *
 * @example
 * writeFileSync('report.html', renderReport(result))
 */
import { join } from 'node:path'
import { type Row, rowsOf, successChart } from './report-charts.ts'
import { sensitivityCharts } from './report-curves.ts'
import { failureChart } from './report-failures.ts'
import { failsCommand, gatedVariants } from './gate.ts'
import type { BaselineDiff, CaseRun, SuiteResult } from './result.ts'
import { count, duration, esc, finite, percent, usd } from './svg.ts'

/** The policy the report carries in a meta tag: nothing loads, nothing runs; inline styles and data: images only. */
export const ReportCsp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

/** Where the CLI keeps a copy of the last `--report`, and where the playground looks for it. */
export function latestReportPath(cwd: string): string {
  return join(cwd, '.cordage', 'eval', 'latest.html')
}

/** The report of one suite run, as a complete HTML document. */
export function renderReport(result: SuiteResult): string {
  const rows = rowsOf(result)
  const title = `Eval report: ${result.suite}`
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(ReportCsp)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<link rel="icon" href="data:,">',
    `<title>${esc(title)}</title>`,
    `<style>${Style}</style>`,
    '</head><body>',
    header(result, rows),
    '<main>',
    result.baseline ? baselineSection(result.baseline) : '',
    `<section id="charts" aria-labelledby="charts-title"><h2 id="charts-title">At a glance</h2><div class="charts">${successChart(rows)}${failureChart(rows)}</div>${sensitivityCharts(rows)}</section>`,
    ablationTable(rows),
    caseSection(result, rows),
    '</main>',
    `<footer>Written by <code>cordage eval</code>. Report format ${esc(result.format)}. This file loads nothing and runs no script.</footer>`,
    '</body></html>',
    '',
  ].join('\n')
}

function header(result: SuiteResult, rows: Row[]): string {
  const cases = rows.reduce((sum, r) => sum + finite(r.summary.cases), 0)
  const passed = rows.reduce((sum, r) => sum + finite(r.summary.passed), 0)
  // Red only for what makes `cordage eval` fail (eval/gate.ts); the misses of ablated and varied
  // variants are what an ablation measures, shown apart and not as failures.
  const gated = gatedVariants(result)
  const failing = result.runs.filter((r) => failsCommand(r, gated)).length
  const missed = result.runs.filter((r) => !r.ok && !failsCommand(r, gated)).length
  const verdict =
    failing > 0
      ? `<span class="badge bad" data-testid="verdict">${esc(count(failing))} case run(s) failed</span>`
      : cases === 0
        ? '<span class="badge warn" data-testid="verdict">no case ran</span>'
        : missed > 0
          ? '<span class="badge ok" data-testid="verdict">every expectation of the gated variants held</span>'
          : '<span class="badge ok" data-testid="verdict">every expectation held</span>'
  const measured = missed
    ? ` <span class="badge measured" data-testid="measured">${esc(count(missed))} case run(s) of ablated or varied variants did not meet the expectations: measured, not failed</span>`
    : ''
  const started = new Date(result.startedAt)
  const when = Number.isNaN(started.getTime())
    ? String(result.startedAt ?? '')
    : `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC`
  const variants = rows.length ? rows.map((r) => `<code>${esc(r.id)}</code>`).join(' ') : '<span class="muted">none</span>'
  return [
    '<header>',
    `<h1>Eval report <code data-testid="suite">${esc(result.suite)}</code> ${verdict}${measured}</h1>`,
    '<dl class="facts">',
    `<div><dt>started</dt><dd data-testid="started">${esc(when)}</dd></div>`,
    `<div><dt>took</dt><dd>${esc(duration(result.durationMs))}</dd></div>`,
    `<div><dt>passed</dt><dd data-testid="overall">${esc(count(passed))} of ${esc(count(cases))} case run(s)</dd></div>`,
    `<div><dt>variants (${rows.length})</dt><dd>${variants}</dd></div>`,
    '</dl>',
    '</header>',
  ].join('')
}

function baselineSection(diff: BaselineDiff): string {
  const regressions = diff.regressions.length
    ? table(
        ['case', 'variant', 'was', 'now'],
        diff.regressions.map((r) => [esc(r.case), `<code>${esc(r.variant)}</code>`, esc(r.was), `<span class="bad">${esc(r.now)}</span>`]),
        'regressions',
      )
    : '<p class="ok">No regression.</p>'
  const fixed = diff.fixed.length
    ? `<p>Fixed: ${diff.fixed.map((f) => `${esc(f.case)} (<code>${esc(f.variant)}</code>)`).join(', ')}</p>`
    : ''
  const added = diff.added.length ? `<p>Cases added: ${diff.added.map(esc).join(', ')}</p>` : ''
  const removed = diff.removed.length ? `<p>Cases removed: ${diff.removed.map(esc).join(', ')}</p>` : ''
  const shown = (field: string, v: number) =>
    field === 'verifiedSuccessRate' ? percent(v) : field === 'costUsd' ? usd(v) : field === 'latencyP50' ? duration(v) : count(v)
  const metrics = diff.metrics.length
    ? table(
        ['variant', 'figure', 'was', 'now'],
        diff.metrics.map((m) => [`<code>${esc(m.variant)}</code>`, esc(m.field), esc(shown(m.field, m.was)), esc(shown(m.field, m.now))]),
        'baseline-metrics',
      )
    : ''
  return [
    '<section id="baseline" aria-labelledby="baseline-title">',
    `<h2 id="baseline-title">Against the baseline <code>${esc(diff.file)}</code></h2>`,
    `<p class="counts">${diff.regressions.length} regression(s), ${diff.fixed.length} fixed, ${diff.added.length} added, ${diff.removed.length} removed</p>`,
    regressions,
    fixed,
    added,
    removed,
    metrics,
    '</section>',
  ].join('')
}

function mixText(mix: Record<string, number>): string {
  const entries = Object.entries(mix ?? {})
  return entries.length
    ? entries.map(([code, n]) => `<span class="mix"><code>${esc(code)}</code> ×${esc(count(n))}</span>`).join(', ')
    : '<span class="muted">none</span>'
}

function ablationTable(rows: Row[]): string {
  const body = rows.map((r) => {
    const s = r.summary
    const label = r.variant?.label && r.variant.label !== r.id ? `<br><span class="muted">${esc(r.variant.label)}</span>` : ''
    const changed = s.changed?.length ? `<ul>${s.changed.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>` : '<span class="muted">–</span>'
    return [
      `<code>${esc(r.id)}</code>${label}`,
      esc(percent(s.verifiedSuccessRate)),
      `${esc(count(s.passed))} / ${esc(count(s.cases))}`,
      esc(usd(s.costUsd)),
      esc(count(s.tokens)),
      esc(duration(s.latencyMs?.p50 ?? 0)),
      mixText(s.failureMix),
      changed,
    ]
  })
  const content = rows.length
    ? table(
        ['variant', 'verified success', 'passed', 'cost', 'tokens', 'latency p50', 'failure mix', 'changed from full'],
        body,
        'ablation',
        rows.map((r) => r.id),
      )
    : '<p class="empty">No variant ran.</p>'
  return `<section id="ablation" aria-labelledby="ablation-title"><h2 id="ablation-title">Variants (the full harness first)</h2>${content}</section>`
}

function caseSection(result: SuiteResult, rows: Row[]): string {
  const variants = [...new Set([...rows.map((r) => r.id), ...result.runs.map((r) => r.variant)])]
  const cases = [...new Set(result.runs.map((r) => r.case))]
  const runOf = new Map(result.runs.map((r) => [`${r.case}\u0000${r.variant}`, r]))
  const gated = gatedVariants(result)
  const cell = (run: CaseRun | undefined) => {
    if (!run) return '<span class="muted">–</span>'
    if (run.error) return `<span class="cell bad">⚠ error</span> <code>${esc(run.error.code)}</code>`
    if (run.ok) return '<span class="cell ok">✓ ok</span>'
    const failed = run.checks.filter((c) => !c.ok).length
    if (!failsCommand(run, gated))
      return `<span class="cell measured" title="an ablated or varied variant: measured, not gated">✗ missed</span> <span class="muted">${failed} check(s)</span>`
    return `<span class="cell bad">✗ fail</span> <span class="muted">${failed} check(s)</span>`
  }
  const body = cases.map((c) => [esc(c), ...variants.map((v) => cell(runOf.get(`${c}\u0000${v}`)))])
  const grid = cases.length
    ? table(['case', ...variants.map((v) => `<code>${esc(v)}</code>`)], body, 'cases', cases, true)
    : '<p class="empty">No case ran.</p>'
  const failed = result.runs.filter((r) => failsCommand(r, gated)).map((r) => failure(r, 'failure'))
  const measured = result.runs.filter((r) => !r.ok && !failsCommand(r, gated)).map((r) => failure(r, 'failure measured'))
  return [
    '<section id="cases" aria-labelledby="cases-title">',
    `<h2 id="cases-title">Cases × variants</h2>${grid}`,
    failed.length ? `<h3>What failed (${failed.length})</h3><div class="failures" data-testid="failures">${failed.join('')}</div>` : '',
    measured.length
      ? `<h3>What the ablations and variations changed (${measured.length})</h3><p class="muted">Expectations an ablated or varied variant did not meet: what switching a mechanism off or changing a setting does. Measured, not gated: they do not make the command fail.</p><div class="failures" data-testid="measured-failures">${measured.join('')}</div>`
      : '',
    '</section>',
  ].join('')
}

function failure(run: CaseRun, cls: string): string {
  const outcome = [run.status, run.failureCode]
    .filter(Boolean)
    .map((s) => `<code>${esc(s)}</code>`)
    .join(' ')
  const checks = run.checks.filter((c) => !c.ok)
  const error = run.error ? `<p class="error">Could not run: <code>${esc(run.error.code)}</code> ${esc(run.error.message)}</p>` : ''
  const list = checks.length
    ? table(
        ['check', 'expected', 'actual'],
        checks.map((c) => [`<code>${esc(c.name)}</code>`, `<pre>${esc(c.expected)}</pre>`, `<pre>${esc(c.actual)}</pre>`]),
        'checks',
      )
    : ''
  const answer = run.answer ? `<details><summary>answer</summary><pre>${esc(run.answer)}</pre></details>` : ''
  return [
    `<article class="${cls}" data-case="${esc(run.case)}" data-variant="${esc(run.variant)}">`,
    `<h4>${esc(run.case)} <span class="muted">in</span> <code>${esc(run.variant)}</code> ${outcome}</h4>`,
    `<p class="muted">${esc(run.file)}${run.runId ? ` · ${esc(run.runId)}` : ''} · ${esc(count(run.steps))} step(s), ${esc(count(run.tokens))} tokens, ${esc(usd(run.costUsd))}, ${esc(duration(run.latencyMs))}</p>`,
    error,
    list,
    answer,
    '</article>',
  ].join('')
}

/**
 * A table; header cells and body cells are HTML already escaped by the caller. `keys` go on the rows
 * as data-row, so a reader (or a test) can find one row by its variant or case.
 */
function table(head: string[], body: string[][], name: string, keys?: string[], firstIsHeader = false): string {
  const rows = body.map((cells, i) => {
    const key = keys?.[i] === undefined ? '' : ` data-row="${esc(keys[i])}"`
    const tds = cells.map((c, j) => (j === 0 && firstIsHeader ? `<th scope="row">${c}</th>` : `<td>${c}</td>`)).join('')
    return `<tr${key}>${tds}</tr>`
  })
  return `<div class="table"><table data-table="${esc(name)}"><thead><tr>${head.map((h) => `<th scope="col">${h}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`
}

const Style = `
:root { --fg: #1d232a; --muted: #5d6770; --line: #dde2e6; --bg: #f7f8f9; --card: #fff; --ok: #1f7a3d; --bad: #b3261e; --warn: #8a5a00;
  --ok-bg: #e6f4ea; --bad-bg: #fce8e6; --warn-bg: #fff4d6; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
body { margin: 0; }
header { padding: 1rem 1.4rem .6rem; background: var(--card); border-bottom: 1px solid var(--line); }
h1 { font-size: 1.25rem; margin: 0 0 .5rem; display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; }
h2 { font-size: 1.05rem; margin: .3rem 0 .6rem; }
h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
h4 { font-size: .9rem; margin: 0 0 .2rem; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; max-height: 16rem; overflow: auto; }
.facts { display: flex; flex-wrap: wrap; gap: .4rem 2rem; margin: 0; }
.facts dt { color: var(--muted); font-size: 12px; }
.facts dd { margin: 0; font-weight: 600; }
main { padding: 1rem 1.4rem 3rem; display: grid; gap: 1rem; max-width: 1400px; margin: 0 auto; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .6rem 1rem 1rem; }
footer { color: var(--muted); font-size: 12px; padding: 0 1.4rem 2rem; text-align: center; }
.muted { color: var(--muted); font-weight: normal; }
.badge { font-size: 12px; padding: .15rem .5rem; border-radius: 999px; font-weight: 600; }
.badge.ok, .cell.ok { color: var(--ok); background: var(--ok-bg); }
.badge.bad, .cell.bad { color: var(--bad); background: var(--bad-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.badge.measured, .cell.measured { color: var(--muted); background: #eef1f4; }
.cell { padding: 0 .35rem; border-radius: 3px; font-weight: 600; white-space: nowrap; }
.ok { color: var(--ok); } .bad { color: var(--bad); }
.error { color: var(--bad); background: var(--bad-bg); padding: .3rem .5rem; border-radius: 4px; }
.empty { color: var(--muted); font-style: italic; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem 2rem; }
.curves { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: flex-start; }
.curves h3 { flex-basis: 100%; margin-bottom: 0; }
figure.chart { margin: 0; max-width: 100%; overflow-x: auto; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
svg { display: block; max-width: 100%; height: auto; font-size: 12px; }
svg text { fill: var(--fg); }
svg .tick, svg .sub { fill: var(--muted); font-size: 11px; }
svg .value { font-weight: 600; }
svg .value.cost { fill: #8a4500; }
svg .axis-title { fill: var(--muted); font-size: 12px; }
svg .grid { stroke: var(--line); }
svg .axis { stroke: var(--muted); }
svg .line { fill: none; stroke-width: 2.5; }
svg .reference line { stroke: var(--muted); stroke-width: 1.5; }
svg .reference text { fill: var(--muted); font-size: 11px; }
svg text.in-bar { font-size: 11px; font-weight: 600; }
.table { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid var(--line); }
thead th { font-size: 12px; color: var(--muted); font-weight: 600; }
tbody th { font-weight: normal; }
td ul { margin: 0; padding-left: 1rem; }
.mix { white-space: nowrap; }
table[data-table=ablation] td:nth-child(n+2):nth-child(-n+6) { white-space: nowrap; }
table[data-table=ablation] td:first-child { min-width: 9rem; }
table[data-table=checks] { table-layout: fixed; }
table[data-table=checks] th:first-child { width: 22%; }
.failures { display: grid; gap: .6rem; }
.failure { border-left: 3px solid var(--bad); padding: .3rem .7rem; background: #fdfafa; }
.failure.measured { border-left-color: var(--line); background: #fafbfb; }
.failure p { margin: .2rem 0; }
details summary { cursor: pointer; color: var(--muted); }
`
