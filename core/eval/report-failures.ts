/**
 * @module eval/report-failures
 * The report's failure-mix chart: per variant, one horizontal bar of the runs that were not a verified success (a completion whose expectations failed is `completed-wrong`),
 * in segments by failure code (or status when there is none). Each code keeps one colour through the
 * chart, and a segment wide enough names its code and count; the legend gives each code's total.
 */
import type { Row } from './report-charts.ts'
import { codeColours, count, countMax, empty, esc, figure, finite, inkOn, label, px, svg } from './svg.ts'

type Mix = (readonly [string, number])[]

const LabelW = 150
const W = 860
const PlotW = W - LabelW - 70
const BarH = 24
const Gap = 12
const Top = 12

/** Chart 3: per variant, the runs that were not a verified success, stacked by failure code. */
export function failureChart(rows: Row[]): string {
  const caption = 'Failure mix per variant: runs that were not a verified success, by failure code'
  if (rows.length === 0) return empty('chart-failures', caption, 'No variant ran, so there is nothing to chart.')
  const mixes: Mix[] = rows.map((r) =>
    Object.entries(r.summary.failureMix ?? {}).map(([code, n]) => [code, Math.max(0, finite(n))] as const),
  )
  if (mixes.every((mix) => mix.every(([, n]) => n === 0)))
    return empty(
      'chart-failures',
      caption,
      'Every run completed, in every variant (a wrong answer that completed shows under verified success).',
    )
  const colours = codeColours(mixes.flat().map(([code]) => code))
  const totals = mixes.map((mix) => mix.reduce((sum, [, n]) => sum + n, 0))
  const scaleTop = countMax(Math.max(0, ...totals))
  const bottom = Top + rows.length * (BarH + Gap)
  const H = bottom + 34 + Math.ceil(colours.size / 3) * 20 + 8
  const parts: string[] = []
  for (let i = 0; i <= 4; i++) {
    const x = LabelW + (PlotW * i) / 4
    parts.push(
      `<line class="grid" x1="${px(x)}" x2="${px(x)}" y1="${Top}" y2="${px(bottom)}"/>`,
      `<text class="tick" x="${px(x)}" y="${px(bottom + 14)}" text-anchor="middle">${esc(count((scaleTop * i) / 4))}</text>`,
    )
  }
  parts.push(
    `<text class="axis-title" x="${px(LabelW + PlotW / 2)}" y="${px(bottom + 30)}" text-anchor="middle">runs that were not a verified success</text>`,
  )
  rows.forEach((row, i) => parts.push(failureRow(row, mixes[i] ?? [], Top + i * (BarH + Gap), scaleTop, colours)))
  parts.push(legend(mixes, colours, bottom + 44))
  return figure('chart-failures', caption, svg(W, H, caption, parts))
}

function failureRow(row: Row, mix: Mix, y: number, scaleTop: number, colours: Map<string, string>): string {
  const total = mix.reduce((sum, [, n]) => sum + n, 0)
  const middle = px(y + BarH / 2 + 4)
  const out = [
    `<g class="variant" data-variant="${esc(row.id)}" data-failures="${total}">`,
    `<text class="label" x="${LabelW - 8}" y="${middle}" text-anchor="end">${label(row.id, 20)}</text>`,
  ]
  let x = LabelW
  for (const [code, n] of mix) {
    const w = (PlotW * n) / scaleTop
    const fill = colours.get(code) as string
    const text = w >= code.length * 7 + 24 ? `${code} ${n}` : w >= 16 ? String(n) : ''
    out.push(
      `<rect class="segment" data-variant="${esc(row.id)}" data-code="${esc(code)}" data-count="${n}" x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${BarH}" fill="${fill}" stroke="#fff"><title>${esc(`${row.id}: ${code} ${n} of ${total} run(s) that were not a verified success`)}</title></rect>`,
    )
    if (text)
      out.push(`<text class="in-bar" x="${px(x + w / 2)}" y="${middle}" text-anchor="middle" fill="${inkOn(fill)}">${esc(text)}</text>`)
    x += w
  }
  const after = total === 0 ? 'all completed' : `${count(total)} of ${count(row.summary.cases)}`
  out.push(`<text class="sub" x="${px(x + 6)}" y="${middle}">${esc(after)}</text>`, '</g>')
  return out.join('')
}

/** Each code with its colour and its total over every variant, three to a line. */
function legend(mixes: Mix[], colours: Map<string, string>, y0: number): string {
  const keys = [...colours].map(([code, fill], i) => {
    const x = (i % 3) * 230
    const y = Math.floor(i / 3) * 20
    const all = mixes.flat().reduce((sum, [c, n]) => sum + (c === code ? n : 0), 0)
    return `<g class="key" data-code="${esc(code)}"><rect x="${x}" y="${y}" width="12" height="12" fill="${fill}"/><text x="${x + 18}" y="${y + 10}">${label(code, 24)} (${all})</text></g>`
  })
  return `<g class="legend" transform="translate(${LabelW} ${px(y0)})">${keys.join('')}</g>`
}
