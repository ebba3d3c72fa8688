/**
 * @module describe-value
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
