/**
 * @module cli/help
 * The two-column lists of `cordage --help` (commands) and `cordage CMD --help` (flags): every
 * description starts at one column, past the longest name and a gap, and wraps within the width.
 */

/** Lines are wrapped to this width when the terminal's is not known (output into a pipe or a file). */
export const DefaultWidth = 100
const Indent = 2
const Gap = 2
/** A description never gets less room than this, however narrow the terminal or long a name. */
const MinRoom = 30

export function table(rows: [name: string, text: string][], width = DefaultWidth): string[] {
  if (rows.length === 0) return []
  const column = Indent + Math.max(...rows.map(([name]) => name.length)) + Gap
  const room = Math.max(MinRoom, width - column)
  return rows.flatMap(([name, text]) =>
    wrap(text, room).map((line, i) => (i === 0 ? `${' '.repeat(Indent)}${name.padEnd(column - Indent)}` : ' '.repeat(column)) + line),
  )
}

/** Greedy wrap at spaces; a word longer than the room gets a line of its own. */
export function wrap(text: string, room: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  return [...lines, line]
}
