/**
 * @module checks/drift
 * The check of what the host's binding check (core/contracts/drift.ts) answers: a list of changes, each
 * naming a plugin and a decision, copied as plain data (see core/contracts/check.ts).
 */
import { bad, describe, nonEmpty, own, type Checked } from '../check.ts'
import type { DriftChange } from '../drift.ts'

const Decisions: readonly string[] = ['refused', 'accepted', 'pinned']
const Texts = ['from', 'to', 'fromHash', 'toHash', 'note'] as const
// The order the host writes them in, kept: a recorded change reads the same whoever built it.
const Order = ['plugin', 'from', 'to', 'fromHash', 'toHash', 'decision', 'note'] as const

/** The changes, checked and copied (own fields only); anything else is a problem, and the run does not go on. */
export function checkDriftChanges(value: unknown): Checked<DriftChange[]> {
  if (!Array.isArray(value)) return bad(`it must be a list of changes, got ${describe(value)}`)
  const changes: DriftChange[] = []
  for (const item of value) {
    const c = own(item)
    if (!c || !nonEmpty(c.plugin) || typeof c.decision !== 'string' || !Decisions.includes(c.decision))
      return bad(`each change must be { plugin, decision: refused|accepted|pinned }, got ${describe(item)}`)
    for (const key of Texts)
      if (c[key] !== undefined && typeof c[key] !== 'string') return bad(`${key} of ${c.plugin} must be a string, got ${describe(c[key])}`)
    changes.push(Object.fromEntries(Order.filter((key) => key in c).map((key) => [key, c[key]])) as unknown as DriftChange)
  }
  return { ok: true, value: changes }
}
