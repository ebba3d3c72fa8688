/**
 * @module eval/report-charts
 * The three charts of the eval report, as inline SVG: success and cost per variant, the sensitivity
 * curve of each `--vary` axis, and the failure mix per variant. Each figure is written on the chart
 * as text and again, exactly, in a `<title>` tooltip, so the charts read without colour and without a
 * mouse; series differ by shape and pattern as well as by colour.
 */
import type { SuiteResult, Variant, VariantSummary } from './result.ts'
import { clip, codeColours, count, countMax, esc, exact, finite, inkOn, niceMax, percent, px, usd, yTicks } from './svg.ts'

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

const Accent = '#2456a6'
const CostInk = '#b35900'
const PassInk = '#c9d8f0'
/** Hatching for the cost series, so it differs from the success bars in shape, not only in colour. */
const Defs = `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fde9d6"/><line x1="0" y1="0" x2="0" y2="6" stroke="${CostInk}" stroke-width="2.5"/></pattern></defs>`

/** A label cut to `n` characters; the whole text goes in a tooltip only when it was cut. */
function label(text: string, n: number): string {
  const shown = clip(text, n)
  return shown === text ? esc(text) : `<title>${esc(text)}</title>${esc(shown)}`
}

function figure(id: string, caption: string, body: string): string {
  return `<figure class="chart" id="${esc(id)}" data-chart="${esc(id)}"><figcaption>${caption}</figcaption>${body}</figure>`
}

function empty(id: string, caption: string, why: string): string {
  return figure(id, caption, `<p class="empty">${esc(why)}</p>`)
}

/**
 * Chart 1: per variant, the share of cases whose every expectation held (light bars, "8/11") and the
 * verified success rate (dark bars, "45%") on the left axis, and the cost (hatched bars) on the right.
 * Both shares are needed: switching the verifier off can raise verified success while cases fail.
 */
export function successChart(rows: Row[]): string {
  const caption = 'Cases passed, verified success and cost per variant'
  if (rows.length === 0) return empty('chart-success', caption, 'No variant ran, so there is nothing to chart.')
  const W = Math.max(600, 150 + rows.length * 130)
  const H = 350
  const left = 64
  const right = 78
  const top = 58
  const bottom = 70
  const plotW = W - left - right
  const plotH = H - top - bottom
  const y0 = top + plotH
  const costTop = niceMax(Math.max(0, ...rows.map((r) => finite(r.summary.costUsd))))
  const group = plotW / rows.length
  const bar = Math.min(36, group * 0.26)
  const parts: string[] = [Defs]
  parts.push(yTicks({ x0: left, x1: left + plotW, y0, height: plotH, top: 1, label: percent, side: 'left' }))
  parts.push(yTicks({ x0: left, x1: left + plotW, y0, height: plotH, top: costTop, label: usd, side: 'right' }))
  parts.push(`<line class="axis" x1="${left}" x2="${px(left + plotW)}" y1="${px(y0)}" y2="${px(y0)}"/>`)
  parts.push(
    `<text class="axis-title" transform="translate(16 ${px(top + plotH / 2)}) rotate(-90)" text-anchor="middle">share of cases</text>`,
    `<text class="axis-title" transform="translate(${px(W - 12)} ${px(top + plotH / 2)}) rotate(90)" text-anchor="middle">cost (USD)</text>`,
  )
  rows.forEach((row, i) => {
    const s = row.summary
    const cx = left + group * i + group / 2
    const cases = Math.max(0, finite(s.cases))
    const passed = Math.min(cases, Math.max(0, finite(s.passed)))
    const share = cases ? passed / cases : 0
    const rate = Math.min(1, Math.max(0, finite(s.verifiedSuccessRate)))
    const cost = Math.max(0, finite(s.costUsd))
    const bars = [
      {
        cls: 'bar passed',
        value: share,
        h: plotH * share,
        fill: PassInk,
        stroke: Accent,
        text: `${count(passed)}/${count(cases)}`,
        ink: '',
        tip: `${row.id}: ${count(passed)} of ${count(cases)} case(s) passed (every expectation held)`,
      },
      {
        cls: 'bar success',
        value: rate,
        h: plotH * rate,
        fill: Accent,
        stroke: Accent,
        text: percent(rate),
        ink: '',
        tip: `${row.id}: verified success ${percent(rate)} of ${count(cases)} case(s) (completed, with an answer that meets the case)`,
      },
      {
        cls: 'bar cost',
        value: cost,
        h: (plotH * cost) / costTop,
        fill: 'url(#hatch)',
        stroke: CostInk,
        text: usd(cost),
        ink: ' cost',
        tip: `${row.id}: cost ${usd(cost)} (${exact(cost)} USD)`,
      },
    ]
    parts.push(`<g class="variant" data-variant="${esc(row.id)}">`)
    bars.forEach((b, j) => {
      const x = cx - (3 * bar) / 2 - 2 + j * (bar + 2)
      parts.push(
        `<rect class="${b.cls}" data-variant="${esc(row.id)}" data-value="${b.value}" x="${px(x)}" y="${px(y0 - b.h)}" width="${px(bar)}" height="${px(b.h)}" fill="${b.fill}" stroke="${b.stroke}"><title>${esc(b.tip)}</title></rect>`,
        `<text class="value${b.ink}" x="${px(x + bar / 2)}" y="${px(y0 - b.h - (j === 1 ? 17 : 5))}" text-anchor="middle">${esc(b.text)}</text>`,
      )
    })
    parts.push(
      `<text class="label" x="${px(cx)}" y="${px(y0 + 18)}" text-anchor="middle">${label(row.id, 18)}</text>`,
      `<text class="sub" x="${px(cx)}" y="${px(y0 + 34)}" text-anchor="middle">${esc(`${count(passed)} of ${count(cases)} passed`)}</text>`,
      '</g>',
    )
  })
  parts.push(
    `<g class="legend" transform="translate(${left} 14)"><rect width="12" height="12" fill="${PassInk}" stroke="${Accent}"/><text x="18" y="10">cases passed, n/m (left)</text>`,
    `<rect x="190" width="12" height="12" fill="${Accent}"/><text x="208" y="10">verified success, % (left)</text>`,
    `<rect x="390" width="12" height="12" fill="url(#hatch)" stroke="${CostInk}"/><text x="408" y="10">cost, hatched (right)</text></g>`,
  )
  return figure('chart-success', caption, svg(W, H, caption, parts))
}

/** Numbers sort as numbers (2 before 10); anything else keeps the order the variants came in. */
function axisOrder(points: Row[]): Row[] {
  const numeric = points.every((p) => p.variant?.value !== undefined && p.variant.value !== '' && Number.isFinite(Number(p.variant.value)))
  if (!numeric) return points
  return [...points].sort((a, b) => Number(a.variant?.value) - Number(b.variant?.value))
}

/** Chart 2: for each `--vary` axis, verified success (solid, circles) and cost (dashed, squares) over its values. */
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

function curve(axis: string, points: Row[], full: Row | undefined): string {
  const W = Math.max(420, 140 + points.length * 90)
  const H = 290
  const left = 64
  const right = 78
  const top = 40
  const bottom = 52
  const plotW = W - left - right
  const plotH = H - top - bottom
  const y0 = top + plotH
  const costTop = niceMax(Math.max(0, ...points.map((p) => finite(p.summary.costUsd))))
  // Values are spread evenly in their order: sweeps are often 1, 3, 8 or 20, 200, where a linear axis crowds.
  const step = plotW / points.length
  const xOf = (i: number) => left + step * i + step / 2
  const yRate = (r: number) => y0 - plotH * Math.min(1, Math.max(0, finite(r)))
  const yCost = (c: number) => y0 - (plotH * Math.max(0, finite(c))) / costTop
  const parts: string[] = []
  parts.push(yTicks({ x0: left, x1: left + plotW, y0, height: plotH, top: 1, label: percent, side: 'left' }))
  parts.push(yTicks({ x0: left, x1: left + plotW, y0, height: plotH, top: costTop, label: usd, side: 'right' }))
  parts.push(`<line class="axis" x1="${left}" x2="${px(left + plotW)}" y1="${px(y0)}" y2="${px(y0)}"/>`)
  parts.push(
    `<text class="axis-title" transform="translate(16 ${px(top + plotH / 2)}) rotate(-90)" text-anchor="middle">verified success rate</text>`,
    `<text class="axis-title" transform="translate(${px(W - 12)} ${px(top + plotH / 2)}) rotate(90)" text-anchor="middle">cost (USD)</text>`,
    `<text class="axis-title" x="${px(left + plotW / 2)}" y="${px(H - 8)}" text-anchor="middle">${esc(axis)}</text>`,
  )
  if (full) {
    const y = yRate(full.summary.verifiedSuccessRate)
    const text = `full harness: ${percent(full.summary.verifiedSuccessRate)}`
    parts.push(
      `<g class="reference"><line x1="${left}" x2="${px(left + plotW)}" y1="${px(y)}" y2="${px(y)}" stroke-dasharray="2 4"><title>${esc(`${text} verified success (variant ${full.id})`)}</title></line>`,
      `<text x="${px(left + plotW - 4)}" y="${px(y < top + plotH / 2 ? y + 14 : y - 5)}" text-anchor="end">${esc(text)}</text></g>`,
    )
  }
  const line = (ys: number[]) => ys.map((y, i) => `${i === 0 ? 'M' : 'L'}${px(xOf(i))} ${px(y)}`).join(' ')
  parts.push(
    `<path class="line cost" d="${line(points.map((p) => yCost(p.summary.costUsd)))}" stroke="${CostInk}" stroke-dasharray="6 4"/>`,
  )
  parts.push(`<path class="line success" d="${line(points.map((p) => yRate(p.summary.verifiedSuccessRate)))}" stroke="${Accent}"/>`)
  points.forEach((p, i) => {
    const s = p.summary
    const value = String(p.variant?.value ?? p.id)
    const x = xOf(i)
    const rate = Math.min(1, Math.max(0, finite(s.verifiedSuccessRate)))
    const cost = Math.max(0, finite(s.costUsd))
    const yc = yCost(cost)
    const yr = yRate(rate)
    // The two labels go on opposite sides, away from each other (the success label never under the axis).
    const costAbove = yc < yr && y0 - yr > 24
    parts.push(
      `<circle class="point success" data-axis="${esc(axis)}" data-value="${esc(value)}" data-rate="${rate}" cx="${px(x)}" cy="${px(yr)}" r="5" fill="${Accent}"><title>${esc(`${axis}=${value} (${p.id}): verified success ${percent(rate)}, ${count(s.passed)} of ${count(s.cases)} passed`)}</title></circle>`,
      `<text class="value" x="${px(x)}" y="${px(costAbove ? yr + 19 : yr - 9)}" text-anchor="middle">${esc(percent(rate))}</text>`,
      `<rect class="point cost" data-axis="${esc(axis)}" data-value="${esc(value)}" x="${px(x - 4)}" y="${px(yc - 4)}" width="8" height="8" fill="#fff" stroke="${CostInk}" stroke-width="2"><title>${esc(`${axis}=${value} (${p.id}): cost ${usd(cost)} (${exact(cost)} USD)`)}</title></rect>`,
      `<text class="value cost" x="${px(x)}" y="${px(costAbove ? yc - 9 : yc + 19)}" text-anchor="middle">${esc(usd(cost))}</text>`,
      `<text class="label" x="${px(x)}" y="${px(y0 + 18)}" text-anchor="middle">${label(value, 14)}</text>`,
    )
  })
  parts.push(
    `<g class="legend" transform="translate(${left} 14)"><line x1="0" x2="22" y1="6" y2="6" stroke="${Accent}"/><circle cx="11" cy="6" r="4" fill="${Accent}"/><text x="28" y="10">verified success (left)</text>`,
    `<line x1="180" x2="202" y1="6" y2="6" stroke="${CostInk}" stroke-dasharray="6 4"/><rect x="187" y="2" width="8" height="8" fill="#fff" stroke="${CostInk}" stroke-width="2"/><text x="208" y="10">cost, dashed (right)</text></g>`,
  )
  return `<figure class="chart curve" data-axis="${esc(axis)}"><figcaption>${esc(axis)}</figcaption>${svg(W, H, `sensitivity to ${axis}`, parts)}</figure>`
}

/** Chart 3: per variant, the runs that did not complete, stacked by failure code. */
export function failureChart(rows: Row[]): string {
  const caption = 'Failure mix per variant: runs that did not complete, by failure code'
  if (rows.length === 0) return empty('chart-failures', caption, 'No variant ran, so there is nothing to chart.')
  if (rows.every((r) => Object.values(r.summary.failureMix ?? {}).every((n) => !finite(n))))
    return empty(
      'chart-failures',
      caption,
      'Every run completed, in every variant (a wrong answer that completed shows under verified success).',
    )
  const mixes = rows.map((r) => Object.entries(r.summary.failureMix ?? {}).map(([code, n]) => [code, Math.max(0, finite(n))] as const))
  const colours = codeColours(mixes.flat().map(([code]) => code))
  const totals = mixes.map((mix) => mix.reduce((sum, [, n]) => sum + n, 0))
  const labelW = 150
  const W = 860
  const barH = 24
  const gap = 12
  const top = 12
  const plotW = W - labelW - 70
  const legendRows = Math.ceil(colours.size / 3)
  const H = top + rows.length * (barH + gap) + 34 + legendRows * 20 + 8
  const scaleTop = countMax(Math.max(0, ...totals))
  const parts: string[] = []
  for (let i = 0; i <= 4; i++) {
    const x = labelW + (plotW * i) / 4
    const y1 = top + rows.length * (barH + gap)
    parts.push(`<line class="grid" x1="${px(x)}" x2="${px(x)}" y1="${top}" y2="${px(y1)}"/>`)
    parts.push(`<text class="tick" x="${px(x)}" y="${px(y1 + 14)}" text-anchor="middle">${esc(count((scaleTop * i) / 4))}</text>`)
  }
  const axisY = top + rows.length * (barH + gap) + 30
  parts.push(
    `<text class="axis-title" x="${px(labelW + plotW / 2)}" y="${px(axisY)}" text-anchor="middle">runs that did not complete</text>`,
  )
  rows.forEach((row, i) => {
    const y = top + i * (barH + gap)
    const total = totals[i] as number
    parts.push(
      `<g class="variant" data-variant="${esc(row.id)}" data-failures="${total}">`,
      `<text class="label" x="${labelW - 8}" y="${px(y + barH / 2 + 4)}" text-anchor="end">${label(row.id, 20)}</text>`,
    )
    let x = labelW
    for (const [code, n] of mixes[i] ?? []) {
      const w = (plotW * n) / scaleTop
      const fill = colours.get(code) as string
      const text = w >= code.length * 7 + 24 ? `${code} ${n}` : w >= 16 ? String(n) : ''
      parts.push(
        `<rect class="segment" data-variant="${esc(row.id)}" data-code="${esc(code)}" data-count="${n}" x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${barH}" fill="${fill}" stroke="#fff"><title>${esc(`${row.id}: ${code} ${n} of ${total} run(s) that did not complete`)}</title></rect>`,
      )
      if (text)
        parts.push(
          `<text class="in-bar" x="${px(x + w / 2)}" y="${px(y + barH / 2 + 4)}" text-anchor="middle" fill="${inkOn(fill)}">${esc(text)}</text>`,
        )
      x += w
    }
    const after = total === 0 ? 'all completed' : `${count(total)} of ${count(row.summary.cases)}`
    parts.push(`<text class="sub" x="${px(x + 6)}" y="${px(y + barH / 2 + 4)}">${esc(after)}</text>`, '</g>')
  })
  const legend: string[] = []
  ;[...colours].forEach(([code, fill], i) => {
    const x = (i % 3) * 230
    const y = Math.floor(i / 3) * 20
    const all = mixes.flat().reduce((sum, [c, n]) => sum + (c === code ? n : 0), 0)
    legend.push(
      `<g class="key" data-code="${esc(code)}"><rect x="${x}" y="${y}" width="12" height="12" fill="${fill}"/><text x="${x + 18}" y="${y + 10}">${label(code, 24)} (${all})</text></g>`,
    )
  })
  if (legend.length) parts.push(`<g class="legend" transform="translate(${labelW} ${px(axisY + 14)})">${legend.join('')}</g>`)
  return figure('chart-failures', caption, svg(W, H, caption, parts))
}

function svg(width: number, height: number, label: string, parts: string[]): string {
  return `<svg viewBox="0 0 ${px(width)} ${px(height)}" width="${px(width)}" height="${px(height)}" role="img" aria-label="${esc(label)}">${parts.join('')}</svg>`
}
