/**
 * @module checks/context
 * The check of a projection, a `context` service's or a `compactor`'s (services/context.ts): a list of
 * messages and a token count. See core/contracts/check.ts.
 */
import type { Projection } from '../services/context.ts'
import { bad, describe, own, type Checked } from '../check.ts'

/** A list of messages that passed {@link checkProjection}, and how long it was then. */
export interface CheckedMessages {
  list: readonly unknown[]
  length: number
}

/**
 * @param before the messages of the run's last projection that passed: the leading messages that are
 * the very objects found there are not read again (a context provider that appends to its projection
 * hands back the same objects step after step, and reading each again costs more the longer the run)
 */
export function checkProjection(answer: unknown, before?: CheckedMessages): Checked<Projection> {
  const o = own(answer)
  if (!o) return bad(`a projection is an object, got ${describe(answer)}`)
  // Checked in place, not copied: the list grows with the run, and this runs at every step.
  if (!Array.isArray(o.messages) || !allMessages(o.messages, before)) return bad('messages must be a list of messages, each with a role')
  if (typeof o.tokens !== 'number' || !Number.isFinite(o.tokens) || o.tokens < 0)
    return bad(`tokens must be a non-negative number, got ${describe(o.tokens)}`)
  return { ok: true, value: answer as Projection }
}

/**
 * Whether every item is a message. Items at the head of `list` that are the objects at the same place in
 * `before` passed already: comparing two references reads neither object, so a long projection costs a
 * pass over two arrays rather than a visit to every message. The same list again (changed in place)
 * counts only up to the length it had.
 */
function allMessages(list: readonly unknown[], before: CheckedMessages | undefined): boolean {
  let i = 0
  if (before) {
    const same = Math.min(list.length, before.length)
    if (list === before.list) i = same
    else while (i < same && list[i] === before.list[i]) i++
  }
  for (; i < list.length; i++) if (!isMessage(list[i])) return false
  return true
}

function isMessage(m: unknown): boolean {
  return m !== null && typeof m === 'object' && !Array.isArray(m) && typeof (m as { role?: unknown }).role === 'string'
}
