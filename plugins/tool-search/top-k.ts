/**
 * @module tool-search/top-k
 * The k best of a stream of (row, score), kept in a binary min-heap of typed arrays: the worst kept
 * score is at the root, so most rows cost one comparison, and an insertion O(log k) without allocating.
 */
export class TopK {
  private readonly scores: Float64Array
  private readonly rows: Int32Array
  size = 0

  constructor(readonly k: number) {
    this.scores = new Float64Array(k)
    this.rows = new Int32Array(k)
  }

  /** The score a row must beat to be kept (-Infinity while fewer than k are kept). */
  get floor(): number {
    return this.size < this.k ? Number.NEGATIVE_INFINITY : this.scores[0]
  }

  push(row: number, score: number): void {
    const { scores, rows } = this
    if (this.size < this.k) {
      // Sift up from the end.
      let i = this.size++
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (scores[parent] <= score) break
        scores[i] = scores[parent]
        rows[i] = rows[parent]
        i = parent
      }
      scores[i] = score
      rows[i] = row
      return
    }
    if (score <= scores[0]) return
    // Replace the root and sift down.
    let i = 0
    const n = this.size
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && scores[right] < scores[left] ? right : left
      if (scores[child] >= score) break
      scores[i] = scores[child]
      rows[i] = rows[child]
      i = child
    }
    scores[i] = score
    rows[i] = row
  }

  /** The kept rows with their scores, best first. */
  sorted(): { row: number; score: number }[] {
    const out: { row: number; score: number }[] = []
    for (let i = 0; i < this.size; i++) out.push({ row: this.rows[i], score: this.scores[i] })
    return out.sort((a, b) => b.score - a.score || a.row - b.row)
  }
}
