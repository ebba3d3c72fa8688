/**
 * @module eval/svg
 * What the eval report's charts are drawn with: escaping, number formats that never print NaN or
 * Infinity, scales, and the colours of failure codes. The report is a file a browser opens from disk
 * with no script, so every chart is plain inline SVG, and every text in it may come from a model's
 * answer or a case file: it goes through `esc` and nothing else.
 */

const Entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text for HTML or SVG, in an element or in a quoted attribute. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => Entities[c] as string)
}

/** A finite number, or 0: a malformed result (NaN, Infinity) must not break the drawing. */
export function finite(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

/** A coordinate: two decimals at most, so the file stays small and stable. */
export function px(value: number): string {
  return String(Math.round(finite(value) * 100) / 100)
}

export function percent(rate: number): string {
  return `${Math.round(finite(rate) * 1000) / 10}%`
}

export function usd(value: number): string {
  const v = finite(value)
  if (v === 0) return '$0'
  return v >= 0.1 ? `$${v.toFixed(2)}` : `$${Number(v.toPrecision(2))}`
}

/** A figure for a tooltip: exact to 6 significant digits, without float noise (0.015, not 0.015000000000000001). */
export function exact(value: number): string {
  return String(Number(finite(value).toPrecision(6)))
}

export function count(value: number): string {
  return Math.round(finite(value)).toLocaleString('en-US')
}

export function duration(ms: number): string {
  const v = finite(ms)
  if (v < 1000) return `${Math.round(v)} ms`
  if (v < 60_000) return `${(v / 1000).toFixed(1)} s`
  return `${Math.floor(v / 60_000)} min ${Math.round((v % 60_000) / 1000)} s`
}

/** The top of an axis: a round number at or above `max` whose quarters are round too (1 when there is nothing to show). */
export function niceMax(max: number): number {
  const v = finite(max)
  if (v <= 0) return 1
  const step = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 1.2, 2, 4, 6, 8, 10]) if (m * step >= v) return m * step
  return 10 * step
}

/** The top of a count axis: its quarters are whole numbers (4 at least). */
export function countMax(max: number): number {
  return Math.max(4, 4 * Math.ceil(niceMax(max) / 4))
}

/**
 * Colours for failure codes, told apart by people with the common colour-vision deficiencies
 * (Okabe and Ito's set first); each code keeps its colour through every chart of one report.
 */
const Palette = [
  '#d55e00',
  '#0072b2',
  '#e69f00',
  '#009e73',
  '#cc79a7',
  '#56b4e9',
  '#7f3c8d',
  '#a5aa99',
  '#f0e442',
  '#3969ac',
  '#80ba5a',
  '#e68310',
]

export function codeColours(codes: Iterable<string>): Map<string, string> {
  const sorted = [...new Set(codes)].sort()
  return new Map(sorted.map((code, i) => [code, Palette[i % Palette.length] as string]))
}

/** Text colour that reads on `fill` (the palette's light colours take dark text). */
export function inkOn(fill: string): string {
  return ['#f0e442', '#e69f00', '#56b4e9', '#a5aa99', '#80ba5a'].includes(fill) ? '#1d232a' : '#fff'
}

/** Label text cut to `n` characters for inside a chart; the full text stays in the tooltip. */
export function clip(text: string, n: number): string {
  return text.length > n ? `${text.slice(0, Math.max(1, n - 1))}…` : text
}

/** The horizontal grid lines and tick labels of a value axis, at 0, ¼, ½, ¾ and the top. */
export function yTicks(opts: {
  x0: number
  x1: number
  y0: number
  height: number
  top: number
  label: (v: number) => string
  side: 'left' | 'right'
}): string {
  const out: string[] = []
  for (let i = 0; i <= 4; i++) {
    const value = (opts.top * i) / 4
    const y = opts.y0 - (opts.height * i) / 4
    if (opts.side === 'left') out.push(`<line class="grid" x1="${px(opts.x0)}" x2="${px(opts.x1)}" y1="${px(y)}" y2="${px(y)}"/>`)
    const x = opts.side === 'left' ? opts.x0 - 6 : opts.x1 + 6
    out.push(
      `<text class="tick" x="${px(x)}" y="${px(y + 4)}" text-anchor="${opts.side === 'left' ? 'end' : 'start'}">${esc(opts.label(value))}</text>`,
    )
  }
  return out.join('')
}

export const Accent = '#2456a6'
export const CostInk = '#b35900'
export const PassInk = '#c9d8f0'

/** A label cut to `n` characters; the whole text goes in a tooltip only when it was cut. */
export function label(text: string, n: number): string {
  const shown = clip(text, n)
  return shown === text ? esc(text) : `<title>${esc(text)}</title>${esc(shown)}`
}

export function figure(id: string, caption: string, body: string): string {
  return `<figure class="chart" id="${esc(id)}" data-chart="${esc(id)}"><figcaption>${esc(caption)}</figcaption>${body}</figure>`
}

/** A chart with nothing to draw says why, in words. */
export function empty(id: string, caption: string, why: string): string {
  return figure(id, caption, `<p class="empty">${esc(why)}</p>`)
}

export function svg(width: number, height: number, name: string, parts: string[]): string {
  return `<svg viewBox="0 0 ${px(width)} ${px(height)}" width="${px(width)}" height="${px(height)}" role="img" aria-label="${esc(name)}">${parts.join('')}</svg>`
}

/** Where a chart with a value axis on each side draws: its size and its plot area. */
export interface Frame {
  W: number
  H: number
  left: number
  top: number
  plotW: number
  plotH: number
  /** The baseline: where 0 is. */
  y0: number
}

export function frame(W: number, H: number, top: number, bottom: number): Frame {
  const left = 64
  const plotH = H - top - bottom
  return { W, H, left, top, plotW: W - left - 78, plotH, y0: top + plotH }
}

/** A share (0..1) on the left axis, a cost on the right one, and the baseline, with both axes titled. */
export function valueAxes(f: Frame, costTop: number, leftTitle: string): string {
  const span = { x0: f.left, x1: f.left + f.plotW, y0: f.y0, height: f.plotH }
  const middle = px(f.top + f.plotH / 2)
  return [
    yTicks({ ...span, top: 1, label: percent, side: 'left' }),
    yTicks({ ...span, top: costTop, label: usd, side: 'right' }),
    `<line class="axis" x1="${f.left}" x2="${px(f.left + f.plotW)}" y1="${px(f.y0)}" y2="${px(f.y0)}"/>`,
    `<text class="axis-title" transform="translate(16 ${middle}) rotate(-90)" text-anchor="middle">${esc(leftTitle)}</text>`,
    `<text class="axis-title" transform="translate(${px(f.W - 12)} ${middle}) rotate(90)" text-anchor="middle">cost (USD)</text>`,
  ].join('')
}
