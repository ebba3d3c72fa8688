/**
 * @module checks/progress
 * The check of a `progress` service's verdict (services/progress.ts): see core/contracts/check.ts.
 */
import type { ProgressVerdict, Stall } from '../services/progress.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'

export function checkProgressVerdict(answer: unknown): Checked<ProgressVerdict> {
  const o = own(answer)
  if (!o) return bad(`a progress verdict is an object, got ${describe(answer)}`)
  if (o.kind === 'continue') return { ok: true, value: { kind: 'continue' } }
  if (o.kind !== 'feedback' && o.kind !== 'ask' && o.kind !== 'stop')
    return bad(`kind must be continue, feedback, ask or stop, got ${describe(o.kind)}`)
  if (!nonEmpty(o.detector)) return bad(`detector must name the detector, got ${describe(o.detector)}`)
  if (typeof o.reason !== 'string') return bad(`reason must be a string, got ${describe(o.reason)}`)
  const t = own(o.thresholds)
  if (!t || !Object.values(t).every((n) => typeof n === 'number' && Number.isFinite(n)))
    return bad(`thresholds must map names to numbers, got ${describe(o.thresholds)}`)
  const stall: Stall = { detector: o.detector, reason: o.reason, thresholds: { ...t } as Record<string, number> }
  if (o.kind === 'stop') return { ok: true, value: { ...stall, kind: 'stop' } }
  if (o.kind === 'feedback')
    return typeof o.text === 'string'
      ? { ok: true, value: { ...stall, kind: 'feedback', text: o.text } }
      : bad(`a feedback verdict carries its text, got ${describe(o.text)}`)
  return nonEmpty(o.question)
    ? { ok: true, value: { ...stall, kind: 'ask', question: o.question } }
    : bad(`an ask verdict carries its question, got ${describe(o.question)}`)
}
