/**
 * @module checks/preview
 * The check of what a tool's `preview` answers (services/tools.ts Tool.preview; core/contracts/data.ts
 * Preview), and the preview as a model or a person reads it. How the kernel runs a preview, bounded in
 * time and screened by the guardrail, is core/kernel/preview.ts.
 */
import type { Preview } from '../data.ts'
import { bad, describe, own, type Checked } from '../check.ts'

/** Bounds on what a preview answers (checkPreview). */
export const PreviewLimits = { summaryChars: 500, diffBytes: 256 * 1024, recordBytes: 64 * 1024 } as const

/**
 * A preview, checked and copied to plain data: `summary` a non-empty string of at most 500 characters,
 * `diff` a string of at most 256 KB, `record` plain JSON of at most 64 KB, `amount` a finite `value`
 * and a three-letter upper-case `currency`; no other keys.
 */
export function checkPreview(answer: unknown): Checked<Preview> {
  const o = own(answer)
  if (!o) return bad(`a preview is an object, got ${describe(answer)}`)
  const extra = Object.keys(o).filter((k) => !['summary', 'diff', 'record', 'amount'].includes(k))
  if (extra.length) return bad(`unknown key(s) ${extra.join(', ')}: a preview has summary, diff, record and amount only`)
  if (typeof o.summary !== 'string' || o.summary.trim().length === 0)
    return bad(`summary must be a non-empty string, got ${describe(o.summary)}`)
  if (o.summary.length > PreviewLimits.summaryChars)
    return bad(`summary is ${o.summary.length} characters, more than ${PreviewLimits.summaryChars}`)
  const preview: Preview = { summary: o.summary }
  if (o.diff !== undefined) {
    if (typeof o.diff !== 'string') return bad(`diff must be a string (a unified diff), got ${describe(o.diff)}`)
    const bytes = Buffer.byteLength(o.diff, 'utf8')
    if (bytes > PreviewLimits.diffBytes) return bad(`diff is ${bytes} bytes, more than ${PreviewLimits.diffBytes}`)
    preview.diff = o.diff
  }
  if (o.record !== undefined) {
    let text: string | undefined
    try {
      text = JSON.stringify(o.record)
    } catch (error) {
      return bad(`record must be plain JSON: ${(error as Error)?.message ?? error}`)
    }
    if (text === undefined) return bad(`record must be plain JSON, got ${typeof o.record}`)
    const bytes = Buffer.byteLength(text, 'utf8')
    if (bytes > PreviewLimits.recordBytes) return bad(`record is ${bytes} bytes as JSON, more than ${PreviewLimits.recordBytes}`)
    preview.record = JSON.parse(text)
  }
  if (o.amount !== undefined) {
    const a = own(o.amount)
    if (!a) return bad(`amount must be { value, currency }, got ${describe(o.amount)}`)
    const extraA = Object.keys(a).filter((k) => k !== 'value' && k !== 'currency')
    if (extraA.length) return bad(`amount has unknown key(s) ${extraA.join(', ')}: it is { value, currency }`)
    if (typeof a.value !== 'number' || !Number.isFinite(a.value))
      return bad(`amount.value must be a finite number, got ${describe(a.value)}`)
    if (typeof a.currency !== 'string' || !/^[A-Z]{3}$/.test(a.currency))
      return bad(`amount.currency must be a three-letter currency code such as EUR, got ${describe(a.currency)}`)
    preview.amount = { value: a.value, currency: a.currency }
  }
  return { ok: true, value: preview }
}

/** The preview as the model reads it after a dry run, and as a person reads it in one block of text. */
export function renderPreview(preview: Preview): string {
  const parts = [`Dry run, nothing was done. ${preview.summary}`]
  if (preview.amount) parts.push(`Amount: ${preview.amount.value} ${preview.amount.currency}`)
  if (preview.record !== undefined) parts.push(`Record it would write: ${JSON.stringify(preview.record)}`)
  if (preview.diff !== undefined) parts.push(`Diff:\n${preview.diff}`)
  return parts.join('\n')
}
