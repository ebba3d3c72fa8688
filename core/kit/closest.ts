/**
 * @module host/closest
 * "Did you mean": the known name nearest to a misspelt one. Exported for plugins that check names in
 * their own config (mcp-tools does, for tool names).
 */

/** The known name nearest to a misspelt one: at most 3 edits away ignoring case, or the one it starts like. */
export function closest(name: string, known: string[]): string | undefined {
  const wanted = name.toLowerCase()
  let best: string | undefined
  let bestDistance = 4
  for (const candidate of known) {
    const d = distance(wanted, candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best ?? known.find((k) => k.toLowerCase().startsWith(wanted) || wanted.startsWith(k.toLowerCase()))
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = current
    }
  }
  return row[b.length]
}
