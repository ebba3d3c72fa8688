/**
 * @module cli/color
 * Whether the readable lines are coloured. NO_COLOR (any value but empty) turns colour off whatever else
 * is set: it is the user's standing choice, where FORCE_COLOR is often set by a CI system or a parent
 * tool. Otherwise FORCE_COLOR decides when set, as in Node (0 or false: never; empty, 1, 2, 3 or true:
 * always, even into a pipe or a file); otherwise colour is on when stdout is a terminal (not TERM=dumb).
 */
export interface ColorChoice {
  color: boolean
  /** Set when FORCE_COLOR holds a value that means nothing: it was ignored, and this says so. */
  warning?: string
}

export function colorChoice(outIsTTY: boolean, env: Record<string, string | undefined>): ColorChoice {
  if (env.NO_COLOR) return { color: false }
  const force = env.FORCE_COLOR
  let warning: string | undefined
  if (force !== undefined) {
    const value = force.trim().toLowerCase()
    if (value === '0' || value === 'false') return { color: false }
    if (['', '1', '2', '3', 'true'].includes(value)) return { color: true }
    warning = `FORCE_COLOR=${JSON.stringify(force)} is ignored: use 0 or false to turn colour off, 1, 2, 3, true or empty to turn it on`
  }
  return { color: outIsTTY && env.TERM !== 'dumb', warning }
}
