/**
 * @module check
 * What every check of a service's answer shares (core/contracts/checks/): its result, the plain copy of
 * the object it reads, and how a problem message shows a value.
 *
 * Deciding services are checked strictly (invariant 9, fail closed). The loop acts on a verdict only
 * after it passed its check, and acts on the clean copy the check returns, built from the verdict's own
 * properties, never on the object the plugin handed back (a getter, an inherited `verdict` from a
 * polluted Object.prototype, or a later change by the plugin cannot reach the decision).
 *
 * Each check returns `{ ok: true, value }` or `{ ok: false, problem }`, the problem saying what was wrong
 * in words a plugin author can act on. What the loop does with a problem is its own rule: policy denies,
 * the guardrail blocks, a verifier or progress service fails the run with `verdict_invalid`.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string }

export function bad<T>(problem: string): Checked<T> {
  return { ok: false, problem }
}

/** The object's own enumerable data, or undefined when it is not a plain object. Getters are read once. */
export function own(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const out: Record<string, unknown> = Object.create(null)
  for (const key of Object.keys(value)) out[key] = (value as Record<string, unknown>)[key]
  return out
}

export function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

/**
 * A value as a short text for a problem message: its JSON cut at 80 characters, or `nothing`. Shared by
 * the checks of verdicts, previews and constraints, so they describe what they refused the same way.
 */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  try {
    const text = JSON.stringify(value)
    return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 80)}…` : text
  } catch {
    return String(value)
  }
}
