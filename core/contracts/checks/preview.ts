/**
 * @module checks/preview
 * The check of what a tool's `preview` answers (services/tools.ts Tool.preview; core/contracts/data.ts
 * Preview), of what a `tool/preview` handler answers (core/contracts/phases.ts; the previews plugin runs
 * the tool's preview, bounded in time), and the preview as a model or a person reads it. What the kernel
 * does with a checked outcome (the guardrail, the record) is core/kernel/preview.ts.
 */
import type { Preview, PreviewOutcome } from '../data.ts'
import { Codes } from '../errors.ts'
import type { PreviewCall } from '../phases.ts'
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

/**
 * A preview's outcome as a `tool/preview` handler answers it, checked and copied: `ok` with a preview
 * that passes {@link checkPreview} and a `durationMs`, `unavailable`, or `failed` with a code of the
 * error table and a message of at most 1000 characters. `redacted` is refused: only the kernel's
 * guardrail says a preview was redacted.
 */
export function checkPreviewOutcome(answer: unknown): Checked<PreviewOutcome> {
  const o = own(answer)
  if (!o) return bad(`a preview outcome is an object, got ${describe(answer)}`)
  const keys = { ok: ['status', 'preview', 'durationMs'], unavailable: ['status'], failed: ['status', 'code', 'message'] }[
    String(o.status) as 'ok'
  ]
  if (!keys) return bad(`status must be ok, unavailable or failed, got ${describe(o.status)}`)
  const extra = Object.keys(o).filter((k) => !keys.includes(k))
  if (extra.length) return bad(`unknown key(s) ${extra.join(', ')}: a ${o.status} outcome has ${keys.join(', ')} only`)
  if (o.status === 'unavailable') return { ok: true, value: { status: 'unavailable' } }
  if (o.status === 'failed') {
    if (typeof o.code !== 'string' || !Object.hasOwn(Codes, o.code))
      return bad(`code must be a code of the error table, got ${describe(o.code)}`)
    if (typeof o.message !== 'string' || o.message.length > 1000) return bad('message must be a string of at most 1000 characters')
    return { ok: true, value: { status: 'failed', code: o.code, message: o.message } }
  }
  const preview = checkPreview(o.preview)
  if (!preview.ok) return preview
  if (typeof o.durationMs !== 'number' || !(o.durationMs >= 0) || !Number.isFinite(o.durationMs))
    return bad(`durationMs must be a finite number of at least 0, got ${describe(o.durationMs)}`)
  return { ok: true, value: { status: 'ok', preview: preview.value, durationMs: o.durationMs } }
}

/** Why a `tool/preview` handler's answer is refused (it must be the call it was given, with a preview outcome or none), or undefined. */
export function previewCallProblem(answer: unknown, was: PreviewCall): string | undefined {
  const o = own(answer)
  if (!o) return `a tool/preview handler returns the call with its preview, got ${describe(answer)}`
  for (const key of ['actionId', 'tool', 'argsHash', 'dryRun'] as const)
    if (o[key] !== was[key]) return `a tool/preview handler may not change the call's ${key}`
  // Handlers see a sealed copy (core/kernel/phases.ts), so the arguments come back equal, not the same object.
  if (!sameJson(o.args, was.args)) return "a tool/preview handler may not change the call's args"
  if (o.preview === undefined) return undefined
  const checked = checkPreviewOutcome(o.preview)
  return checked.ok ? undefined : `its preview is not a preview outcome: ${checked.problem}`
}

/** The preview as the model reads it after a dry run, and as a person reads it in one block of text. */
export function renderPreview(preview: Preview): string {
  const parts = [`Dry run, nothing was done. ${preview.summary}`]
  if (preview.amount) parts.push(`Amount: ${preview.amount.value} ${preview.amount.currency}`)
  if (preview.record !== undefined) parts.push(`Record it would write: ${JSON.stringify(preview.record)}`)
  if (preview.diff !== undefined) parts.push(`Diff:\n${preview.diff}`)
  return parts.join('\n')
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(a) === JSON.stringify(b)
  } catch {
    return false
  }
}
