/**
 * @module eval/report-charts
 * The order in which the report shows variants, and its first chart: per variant, the share of cases
 * passed, the verified success rate and the cost. The sensitivity curves are in report-curves.ts and
 * the failure mix in report-failures.ts. Each figure is written on the chart as text and again,
 * exactly, in a `<title>` tooltip, so the charts read without colour and without a mouse; series
 * differ by shape and pattern as well as by colour.
 */
import type { SuiteResult, Variant, VariantSummary } from './result.ts'
import {
  Accent,
  CostInk,
  count,
  empty,
  esc,
  exact,
  type Frame,
  figure,
  finite,
  frame,
  label,
  niceMax,
  PassInk,
  percent,
  px,
  svg,
  usd,
  valueAxes,
} from './svg.ts'

/** One variant as the report shows it: its summary, and its description when the result has one. */
export interface Row {
  id: string
  variant?: Variant
  summary: VariantSummary
}

/** The summaries in the order the report shows them: the full harness first, then as the run listed them. */
export function rowsOf(result: SuiteResult): Row[] {
  const described = new Map(result.variants.map((v) => [v.id, v]))
  const order = new Map(result.variants.map((v, i) => [v.id, i]))
  const rank = (s: VariantSummary) => (described.get(s.variant)?.kind === 'full' ? -1 : (order.get(s.variant) ?? result.variants.length))
  return [...result.summaries]
    .map((summary, i) => ({ summary, i }))
    .sort((a, b) => rank(a.summary) - rank(b.summary) || a.i - b.i)
    .map(({ summary }) => ({ id: summary.variant, variant: described.get(summary.variant), summary }))
}

/** Hatching for the cost series, so it differs from the share bars in shape, not only in colour. */
const Hatch = `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fde9d6"/><line x1="0" y1="0" x2="0" y2="6" stroke="${CostInk}" stroke-width="2.5"/></pattern></defs>`

const Legend = [
  `<rect width="12" height="12" fill="${PassInk}" stroke="${Accent}"/><text x="18" y="10">cases passed, n/m (left)</text>`,
  `<rect x="190" width="12" height="12" fill="${Accent}"/><text x="208" y="10">verified success, % (left)</text>`,
  `<rect x="390" width="12" height="12" fill="url(#hatch)" stroke="${CostInk}"/><text x="408" y="10">cost, hatched (right)</text>`,
].join('')

/**
 * Chart 1: per variant, the share of cases whose every expectation held (light bars, "8/11") and the
 * verified success rate (dark bars, "45%") on the left axis, and the cost (hatched bars) on the right.
 * Both shares are needed: switching the verifier off can raise verified success while cases fail.
 */
export function successChart(rows: Row[]): string {
  const caption = 'Cases passed, verified success and cost per variant'
  if (rows.length === 0) return empty('chart-success', caption, 'No variant ran, so there is nothing to chart.')
  const f = frame(Math.max(600, 150 + rows.length * 130), 350, 58, 70)
  const costTop = niceMax(Math.max(0, ...rows.map((r) => finite(r.summary.costUsd))))
  const group = f.plotW / rows.length
  const bar = Math.min(36, group * 0.26)
  const parts = [Hatch, valueAxes(f, costTop, 'share of cases')]
  rows.forEach((row, i) => parts.push(barGroup(row, f.left + group * i + group / 2, bar, f, costTop)))
  parts.push(`<g class="legend" transform="translate(${f.left} 14)">${Legend}</g>`)
  return figure('chart-success', caption, svg(f.W, f.H, caption, parts))
}

/** One variant's three bars, centred on `cx`, each with its figure above it and in its tooltip. */
function barGroup(row: Row, cx: number, bar: number, f: Frame, costTop: number): string {
  const s = row.summary
  const cases = Math.max(0, finite(s.cases))
  const passed = Math.min(cases, Math.max(0, finite(s.passed)))
  const share = cases ? passed / cases : 0
  const rate = Math.min(1, Math.max(0, finite(s.verifiedSuccessRate)))
  const cost = Math.max(0, finite(s.costUsd))
  const bars = [
    {
      cls: 'bar passed',
      value: share,
      h: f.plotH * share,
      fill: PassInk,
      stroke: Accent,
      text: `${count(passed)}/${count(cases)}`,
      tip: `${row.id}: ${count(passed)} of ${count(cases)} case(s) passed (every expectation held)`,
    },
    {
      cls: 'bar success',
      value: rate,
      h: f.plotH * rate,
      fill: Accent,
      stroke: Accent,
      text: percent(rate),
      tip: `${row.id}: verified success ${percent(rate)} of ${count(cases)} case(s) (completed, with an answer that meets the case)`,
    },
    {
      cls: 'bar cost',
      value: cost,
      h: (f.plotH * cost) / costTop,
      fill: 'url(#hatch)',
      stroke: CostInk,
      text: usd(cost),
      tip: `${row.id}: cost ${usd(cost)} (${exact(cost)} USD)`,
    },
  ]
  const out = [`<g class="variant" data-variant="${esc(row.id)}">`]
  bars.forEach((b, j) => {
    const x = cx - (3 * bar) / 2 - 2 + j * (bar + 2)
    // The middle figure sits higher, so three figures over bars of one height do not run together.
    const lift = j === 1 ? 17 : 5
    out.push(
      `<rect class="${b.cls}" data-variant="${esc(row.id)}" data-value="${b.value}" x="${px(x)}" y="${px(f.y0 - b.h)}" width="${px(bar)}" height="${px(b.h)}" fill="${b.fill}" stroke="${b.stroke}"><title>${esc(b.tip)}</title></rect>`,
      `<text class="value${j === 2 ? ' cost' : ''}" x="${px(x + bar / 2)}" y="${px(f.y0 - b.h - lift)}" text-anchor="middle">${esc(b.text)}</text>`,
    )
  })
  out.push(
    `<text class="label" x="${px(cx)}" y="${px(f.y0 + 18)}" text-anchor="middle">${label(row.id, 18)}</text>`,
    `<text class="sub" x="${px(cx)}" y="${px(f.y0 + 34)}" text-anchor="middle">${esc(`${count(passed)} of ${count(cases)} passed`)}</text>`,
    '</g>',
  )
  return out.join('')
}
