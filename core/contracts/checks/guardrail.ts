/**
 * @module checks/guardrail
 * The check of a `guardrail` service's verdict (services/guardrail.ts): see core/contracts/check.ts.
 */
import type { GuardVerdict } from '../services/guardrail.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'

export function checkGuardVerdict(answer: unknown): Checked<GuardVerdict> {
  const o = own(answer)
  if (!o) return bad(`a guardrail verdict is an object, got ${describe(answer)}`)
  if (o.action === 'pass') return { ok: true, value: { action: 'pass' } }
  if (o.action !== 'block' && o.action !== 'redact') return bad(`action must be pass, block or redact, got ${describe(o.action)}`)
  if (!nonEmpty(o.guard)) return bad(`guard must name the guard that tripped, got ${describe(o.guard)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  if (o.action === 'block') return { ok: true, value: { action: 'block', guard: o.guard, reason: o.reason } }
  if (typeof o.text !== 'string') return bad(`a redact verdict carries the cleaned text, got ${describe(o.text)}`)
  return { ok: true, value: { action: 'redact', guard: o.guard, reason: o.reason, text: o.text } }
}
