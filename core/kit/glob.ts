/**
 * @module glob
 * Name patterns as used in presets (`crm_*`, `/tmp/*`): `*` matches any run of characters, everything
 * else matches itself. Shared by plugins that match tool names and argument values.
 *
 * Matched without regular expressions: a pattern like `*a*a*a*a*b` compiled to a backtracking RegExp
 * takes polynomial time in the length of the text, and argument values come from the model. Here each
 * literal part is found left to right with indexOf; taking the leftmost place for each part is always
 * right when `*` is the only wildcard, so the cost is at most (length of text) x (number of parts).
 */

/** A compiled glob. `test` has RegExp's signature, so a glob can stand where a pattern is tested. */
export interface Glob {
  readonly source: string
  test(text: string): boolean
}

export function globPattern(glob: string): Glob {
  const parts = glob.split('*')
  const first = parts[0]
  const last = parts[parts.length - 1]
  const middle = parts.slice(1, -1).filter((p) => p.length > 0)
  const exact = parts.length === 1
  return Object.freeze({
    source: glob,
    test(text: string): boolean {
      if (typeof text !== 'string') return false
      if (exact) return text === glob
      if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false
      let at = first.length
      const end = text.length - last.length
      for (const part of middle) {
        const found = text.indexOf(part, at)
        if (found < 0 || found + part.length > end) return false
        at = found + part.length
      }
      return true
    },
  })
}
