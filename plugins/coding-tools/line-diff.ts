/**
 * A unified diff of two texts, line by line, for edit_file's preview (no diff library is a dependency
 * of the project). The common head and tail are taken off first; the middle is diffed by longest common
 * subsequence when it is small enough (at most {@link MaxCells} table cells), else shown as all of the
 * old middle removed and all of the new added: still a correct diff, only not the smallest.
 */

/** Cells of the LCS table at most (4 M: 16 MB of Uint32). */
export const MaxCells = 4_000_000

type Op = { kind: ' ' | '-' | '+'; text: string }

/** The diff of `before` (undefined: the file does not exist) and `after`, with `context` lines around each change; '' when equal. */
export function unifiedDiff(path: string, before: string | undefined, after: string, context = 3): string {
  const a = lines(before ?? '')
  const b = lines(after)
  const ops = diffLines(a, b)
  if (!ops.some((op) => op.kind !== ' ')) return ''
  const head = [`--- ${before === undefined ? '/dev/null' : `a/${path}`}`, `+++ b/${path}`]
  return `${[...head, ...hunks(ops, context)].join('\n')}\n`
}

/** The lines of a text: a final newline ends the last line rather than starting an empty one. */
export function lines(text: string): string[] {
  if (text === '') return []
  const all = text.split('\n')
  if (all[all.length - 1] === '') all.pop()
  return all
}

export function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const ops: Op[] = a.slice(0, start).map((text) => ({ kind: ' ', text }))
  ops.push(...middle(a.slice(start, endA), b.slice(start, endB)))
  for (const text of a.slice(endA)) ops.push({ kind: ' ', text })
  return ops
}

function middle(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length
  const m = b.length
  if (n === 0 || m === 0 || (n + 1) * (m + 1) > MaxCells)
    return [...a.map((text): Op => ({ kind: '-', text })), ...b.map((text): Op => ({ kind: '+', text }))]
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const width = m + 1
  const lcs = new Uint32Array((n + 1) * width)
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1] + 1 : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1])
  const ops: Op[] = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', text: a[i] })
      i++
      j++
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) ops.push({ kind: '-', text: a[i++] })
    else ops.push({ kind: '+', text: b[j++] })
  }
  while (i < n) ops.push({ kind: '-', text: a[i++] })
  while (j < m) ops.push({ kind: '+', text: b[j++] })
  return ops
}

/** The ops as hunks: each change with `context` unchanged lines around it, changes closer than twice that in one hunk. */
function hunks(ops: Op[], context: number): string[] {
  const out: string[] = []
  const changed = ops.map((op, i) => (op.kind === ' ' ? -1 : i)).filter((i) => i >= 0)
  let k = 0
  while (k < changed.length) {
    const first = changed[k]
    let last = first
    while (k + 1 < changed.length && changed[k + 1] - last <= 2 * context + 1) last = changed[++k]
    k++
    const from = Math.max(0, first - context)
    const to = Math.min(ops.length, last + context + 1)
    // Line numbers where the hunk starts: count the lines of each side before it.
    let aLine = 0
    let bLine = 0
    for (let i = 0; i < from; i++) {
      if (ops[i].kind !== '+') aLine++
      if (ops[i].kind !== '-') bLine++
    }
    const body = ops.slice(from, to)
    const aLen = body.filter((op) => op.kind !== '+').length
    const bLen = body.filter((op) => op.kind !== '-').length
    out.push(`@@ -${aLen === 0 ? aLine : aLine + 1},${aLen} +${bLen === 0 ? bLine : bLine + 1},${bLen} @@`)
    for (const op of body) out.push(`${op.kind}${op.text}`)
  }
  return out
}
