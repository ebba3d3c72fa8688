/**
 * @module eval/report-curves
 * The report's sensitivity curves: for each `--vary` axis, verified success (solid line, circles, left
 * axis) and cost (dashed line, squares, right axis) over the axis's values, with the full harness's
 * verified success as a dotted reference line.
 */
import type { Row } from './report-charts.ts'
import {
  Accent,
  CostInk,
  count,
  empty,
  esc,
  exact,
  type Frame,
  finite,
  frame,
  label,
  niceMax,
  percent,
  px,
  svg,
  usd,
  valueAxes,
} from './svg.ts'

/** Every varied axis, one chart each. */
export function sensitivityCharts(rows: Row[]): string {
  const axes = new Map<string, Row[]>()
  for (const row of rows) {
    if (row.variant?.kind !== 'vary') continue
    const axis = row.variant.axis ?? '(axis not named)'
    axes.set(axis, [...(axes.get(axis) ?? []), row])
  }
  const caption = 'Sensitivity: verified success and cost over each varied setting'
  if (axes.size === 0) return empty('chart-sensitivity', caption, 'No setting was varied (run with --vary NAME=V1,V2 for these curves).')
  const full = rows.find((r) => r.variant?.kind === 'full')
  const charts = [...axes].map(([axis, points]) => curve(axis, axisOrder(points), full))
  return `<div class="curves" id="chart-sensitivity" data-chart="chart-sensitivity"><h3>${esc(caption)}</h3>${charts.join('')}</div>`
}

/** Numbers sort as numbers (2 before 10); anything else keeps the order the variants came in. */
function axisOrder(points: Row[]): Row[] {
  const numeric = points.every((p) => p.variant?.value !== undefined && p.variant.value !== '' && Number.isFinite(Number(p.variant.value)))
  if (!numeric) return points
  return [...points].sort((a, b) => Number(a.variant?.value) - Number(b.variant?.value))
}

const Legend = [
  `<line x1="0" x2="22" y1="6" y2="6" stroke="${Accent}"/><circle cx="11" cy="6" r="4" fill="${Accent}"/><text x="28" y="10">verified success (left)</text>`,
  `<line x1="180" x2="202" y1="6" y2="6" stroke="${CostInk}" stroke-dasharray="6 4"/><rect x="187" y="2" width="8" height="8" fill="#fff" stroke="${CostInk}" stroke-width="2"/><text x="208" y="10">cost, dashed (right)</text>`,
].join('')

interface Scales {
  f: Frame
  xOf(i: number): number
  yRate(rate: number): number
  yCost(cost: number): number
}

function curve(axis: string, points: Row[], full: Row | undefined): string {
  const f = frame(Math.max(420, 140 + points.length * 90), 290, 40, 52)
  const costTop = niceMax(Math.max(0, ...points.map((p) => finite(p.summary.costUsd))))
  // Values are spread evenly in their order: sweeps are often 1, 3, 8 or 20, 200, where a linear axis crowds.
  const step = f.plotW / points.length
  const scales: Scales = {
    f,
    xOf: (i) => f.left + step * i + step / 2,
    yRate: (r) => f.y0 - f.plotH * Math.min(1, Math.max(0, finite(r))),
    yCost: (c) => f.y0 - (f.plotH * Math.max(0, finite(c))) / costTop,
  }
  const parts = [
    valueAxes(f, costTop, 'verified success rate'),
    `<text class="axis-title" x="${px(f.left + f.plotW / 2)}" y="${px(f.H - 8)}" text-anchor="middle">${esc(axis)}</text>`,
  ]
  if (full) parts.push(reference(full, scales))
  const line = (ys: number[]) => ys.map((y, i) => `${i === 0 ? 'M' : 'L'}${px(scales.xOf(i))} ${px(y)}`).join(' ')
  parts.push(
    `<path class="line cost" d="${line(points.map((p) => scales.yCost(p.summary.costUsd)))}" stroke="${CostInk}" stroke-dasharray="6 4"/>`,
    `<path class="line success" d="${line(points.map((p) => scales.yRate(p.summary.verifiedSuccessRate)))}" stroke="${Accent}"/>`,
  )
  points.forEach((p, i) => parts.push(point(axis, p, i, scales)))
  parts.push(`<g class="legend" transform="translate(${f.left} 14)">${Legend}</g>`)
  return `<figure class="chart curve" data-axis="${esc(axis)}"><figcaption>${esc(axis)}</figcaption>${svg(f.W, f.H, `sensitivity to ${axis}`, parts)}</figure>`
}

/** The full harness's verified success, across the chart, to read each point against. */
function reference(full: Row, { f, yRate }: Scales): string {
  const y = yRate(full.summary.verifiedSuccessRate)
  const text = `full harness: ${percent(full.summary.verifiedSuccessRate)}`
  return [
    `<g class="reference"><line x1="${f.left}" x2="${px(f.left + f.plotW)}" y1="${px(y)}" y2="${px(y)}" stroke-dasharray="2 4"><title>${esc(`${text} verified success (variant ${full.id})`)}</title></line>`,
    `<text x="${px(f.left + f.plotW - 4)}" y="${px(y < f.top + f.plotH / 2 ? y + 14 : y - 5)}" text-anchor="end">${esc(text)}</text></g>`,
  ].join('')
}

/** One value of the axis: its success circle and cost square, their figures, and the value under the axis. */
function point(axis: string, p: Row, i: number, { f, xOf, yRate, yCost }: Scales): string {
  const s = p.summary
  const value = String(p.variant?.value ?? p.id)
  const x = xOf(i)
  const rate = Math.min(1, Math.max(0, finite(s.verifiedSuccessRate)))
  const cost = Math.max(0, finite(s.costUsd))
  const yc = yCost(cost)
  const yr = yRate(rate)
  // The two figures go on opposite sides, away from each other (the success figure never under the axis).
  const costAbove = yc < yr && f.y0 - yr > 24
  return [
    `<circle class="point success" data-axis="${esc(axis)}" data-value="${esc(value)}" data-rate="${rate}" cx="${px(x)}" cy="${px(yr)}" r="5" fill="${Accent}"><title>${esc(`${axis}=${value} (${p.id}): verified success ${percent(rate)}, ${count(s.passed)} of ${count(s.cases)} passed`)}</title></circle>`,
    `<text class="value" x="${px(x)}" y="${px(costAbove ? yr + 19 : yr - 9)}" text-anchor="middle">${esc(percent(rate))}</text>`,
    `<rect class="point cost" data-axis="${esc(axis)}" data-value="${esc(value)}" x="${px(x - 4)}" y="${px(yc - 4)}" width="8" height="8" fill="#fff" stroke="${CostInk}" stroke-width="2"><title>${esc(`${axis}=${value} (${p.id}): cost ${usd(cost)} (${exact(cost)} USD)`)}</title></rect>`,
    `<text class="value cost" x="${px(x)}" y="${px(costAbove ? yc - 9 : yc + 19)}" text-anchor="middle">${esc(usd(cost))}</text>`,
    `<text class="label" x="${px(x)}" y="${px(f.y0 + 18)}" text-anchor="middle">${label(value, 14)}</text>`,
  ].join('')
}
