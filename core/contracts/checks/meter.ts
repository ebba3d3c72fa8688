/**
 * @module checks/meter
 * The checks of what a `meter` service answers (services/meter.ts): see core/contracts/check.ts. A
 * reservation is checked against the calls it was asked about, so a meter cannot reserve for a call
 * that is not starting, twice for one call, or a figure the budgets cannot count.
 */
import type { Reservation } from '../data.ts'
import { MeterCodes, type MeterAnswer, type MeterBound, type MeterCall, type MeterCode, type Settlement } from '../services/meter.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'

const figure = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0

export function checkMeterBound(answer: unknown): Checked<MeterBound> {
  const o = own(answer)
  if (!o) return bad(`a bound is an object, got ${describe(answer)}`)
  if (o.kind === 'ok') return { ok: true, value: { kind: 'ok' } }
  if (o.kind !== 'stop') return bad(`kind must be ok or stop, got ${describe(o.kind)}`)
  if (!MeterCodes.includes(o.code as never)) return bad(`a stop's code must be one of ${MeterCodes.join(', ')}, got ${describe(o.code)}`)
  if (!nonEmpty(o.reason)) return bad(`a stop carries its reason, got ${describe(o.reason)}`)
  return { ok: true, value: { kind: 'stop', code: o.code as MeterCode, reason: o.reason } }
}

export function checkMeterAnswer(answer: unknown, calls: readonly MeterCall[]): Checked<MeterAnswer> {
  const o = own(answer)
  if (!o) return bad(`an answer is an object, got ${describe(answer)}`)
  if (o.kind === 'refuse')
    return nonEmpty(o.reason)
      ? { ok: true, value: { kind: 'refuse', reason: o.reason } }
      : bad(`a refusal carries its reason, got ${describe(o.reason)}`)
  if (o.kind !== 'reserve') return bad(`kind must be reserve or refuse, got ${describe(o.kind)}`)
  if (!Array.isArray(o.reservations)) return bad(`reservations must be a list, got ${describe(o.reservations)}`)
  const open = new Set(calls.map((c) => (c.kind === 'model' ? 'model' : `tool ${c.actionId}`)))
  const reservations: Reservation[] = []
  for (const item of o.reservations) {
    const r = own(item)
    const call = r?.kind === 'model' ? 'model' : r?.kind === 'tool' && nonEmpty(r.actionId) ? `tool ${r.actionId}` : undefined
    if (!r || !call) return bad(`a reservation names its call (kind model, or kind tool with its actionId), got ${describe(item)}`)
    if (!open.delete(call)) return bad(`a reservation for a call not asked about, or reserved twice: ${describe(item)}`)
    if (!figure(r.tokens) || !Number.isSafeInteger(r.tokens) || !figure(r.costUsd))
      return bad(`a reservation's tokens must be a whole number and its costUsd a number, neither negative, got ${describe(item)}`)
    reservations.push(
      r.kind === 'model'
        ? { kind: 'model', tokens: r.tokens, costUsd: r.costUsd }
        : { actionId: r.actionId as string, kind: 'tool', tokens: r.tokens, costUsd: r.costUsd },
    )
  }
  const a = own(o.available)
  const finite = (v: unknown) => v === undefined || (typeof v === 'number' && Number.isFinite(v))
  if (!a || Object.keys(a).some((k) => k !== 'tokens' && k !== 'costUsd') || !finite(a.tokens) || !finite(a.costUsd))
    return bad(`available must be { tokens?, costUsd? } of numbers, got ${describe(o.available)}`)
  const available = {
    ...(a.tokens === undefined ? {} : { tokens: a.tokens as number }),
    ...(a.costUsd === undefined ? {} : { costUsd: a.costUsd as number }),
  }
  return { ok: true, value: { kind: 'reserve', reservations, available } }
}

export function checkSettlement(answer: unknown): Checked<Settlement> {
  const o = own(answer)
  if (!o || !figure(o.tokens) || !figure(o.costUsd))
    return bad(`a settlement is { tokens, costUsd } of numbers, neither negative, got ${describe(answer)}`)
  return { ok: true, value: { tokens: o.tokens, costUsd: o.costUsd } }
}
