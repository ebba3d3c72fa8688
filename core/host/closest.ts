/**
 * @module host/closest
 * "Did you mean": the known name nearest to a misspelt one.
 */

/** The known name nearest to a misspelt one (edit distance at most 3). */
export function closest(name: string, known: string[]): string | undefined {
  let best: string | undefined
  let bestDistance = 4
  for (const candidate of known) {
    const d = distance(name, candidate)
    if (d < bestDistance) { best = candidate; bestDistance = d }
  }
  return best
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
