/**
 * @module checks/waits
 * The checks of what a tool says it waits on (ToolResult.waitsFor) and of what a condition's owner says
 * of it (services/waits.ts): see core/contracts/check.ts. A condition is flat and plain, so what is
 * recorded of it (run/paused) stays small and cannot carry an object a reader would trip on.
 */
import type { WaitCondition, WaitingStatus } from '../data.ts'
import { WaitKind, type WaitLook } from '../services/waits.ts'
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'

const Waiting: readonly string[] = ['WAITING_APPROVAL', 'WAITING_USER', 'WAITING_RECONCILIATION', 'SUSPENDED']
const MaxFields = 16
const MaxText = 512
const MaxReason = 4000

/**
 * A tool's `waitsFor`, checked and copied: `{ on, status, reason }` with a well-formed condition and a
 * waiting status. The spelling of issue 17, `{ child: { runId, agent, actionId? } }`, is a condition of
 * kind `child`.
 */
export function checkWaitsFor(value: unknown): Checked<{ on: WaitCondition; status: WaitingStatus; reason: string }> {
  const w = own(value)
  if (!w) return bad(`it must be { on, status, reason }, got ${describe(value)}`)
  const legacy = w.on === undefined && w.child !== undefined ? own(w.child) : undefined
  const on = checkCondition(legacy ? { ...legacy, kind: 'child' } : w.on)
  if (!on.ok) return on
  if (typeof w.status !== 'string' || !Waiting.includes(w.status)) return bad(`status must be a waiting status, got ${describe(w.status)}`)
  if (typeof w.reason !== 'string') return bad(`reason must be a string, got ${describe(w.reason)}`)
  // Only words for a person (a chain of children repeats each one's): cut, never refused.
  const reason = w.reason.length > MaxReason ? `${w.reason.slice(0, MaxReason)}…` : w.reason
  return { ok: true, value: { on: on.value, status: w.status as WaitingStatus, reason } }
}

/** A condition, checked and copied (own fields only). */
export function checkCondition(value: unknown): Checked<WaitCondition> {
  const o = own(value)
  if (!o) return bad(`the condition must be an object { kind, ... }, got ${describe(value)}`)
  if (typeof o.kind !== 'string' || !WaitKind.test(o.kind)) return bad(`its kind must match ${WaitKind}, got ${describe(o.kind)}`)
  const keys = Object.keys(o)
  if (keys.length > MaxFields) return bad(`it may have at most ${MaxFields} fields, got ${keys.length}`)
  for (const key of keys) {
    const v = o[key]
    const plain = (typeof v === 'string' && v.length <= MaxText) || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
    if (!plain)
      return bad(`its field ${key} must be a string (at most ${MaxText} characters), a finite number or a boolean, got ${describe(v)}`)
  }
  return { ok: true, value: { ...o } as WaitCondition }
}

/** An owner's answer, checked and copied; anything else is a problem (the kernel takes it as `unknown`). */
export function checkWaitLook(value: unknown): Checked<WaitLook> {
  const o = own(value)
  if (!o || (o.state !== 'going' && o.state !== 'ended' && o.state !== 'unknown'))
    return bad(`an owner answers { state: going|ended|unknown, says }, got ${describe(value)}`)
  if (!nonEmpty(o.says)) return bad(`says must be a non-empty string, got ${describe(o.says)}`)
  return { ok: true, value: { state: o.state, says: o.says.slice(0, 2 * MaxText) } }
}
