/**
 * @module tool-search/semantic-index
 * Tool vectors from the agent's `embeddings` service, kept beside the BM25 index and in step with the
 * registry: a tool registered is queued and embedded in the background (batched, one request in
 * flight), a tool removed is dropped at once. Vectors of one model only: when the provider answers for
 * another model (it was swapped), every vector is dropped and the registry embedded again.
 *
 * A search never waits for the catalogue: tools not embedded yet are ranked by BM25 alone, so the first
 * searches after a large registration are as good as before, not slower.
 */
import { checkVectors, dotRow, type EmbeddingsService } from 'cordage'
import type { Indexable } from './search-index.ts'
import { Projection } from './projection.ts'
import { TopK } from './top-k.ts'
import { localName, namespaceOf, words } from './terms.ts'

/** Below this many vectors every one is compared exactly; above, sketches pick the candidates first. */
export const ExactBelow = 2000
/** Numbers in a sketch: 64 keep 98% of the exact top 10 among 400 candidates (measured on 1,209 tools). */
const SketchWidth = 64
/** Candidates ranked exactly after the sketch scan, at least; more when a search asks for many. */
const MinCandidates = 400

export interface SemanticHit {
  name: string
  score: number
}

/** The text a tool is embedded as: the words of its name and namespace, then its description. */
export function embeddingText(tool: Indexable): string {
  const space = namespaceOf(tool.name)
  const name = words(localName(tool.name)).join(' ')
  return `${space ? `${words(space).join(' ')} ` : ''}${name}: ${tool.description}`
}

export class SemanticIndex {
  /** Row-major vectors, `dimensions` wide; rows 0 … names.length-1 are in use. */
  private matrix = new Float32Array(0)
  /** The sketch of each row, SketchWidth wide, same row order as `matrix`. */
  private sketches = new Float32Array(0)
  private projection: Projection | undefined
  private dimensions = 0
  private model: string | undefined
  private readonly names: string[] = []
  private readonly rowOf = new Map<string, number>()
  /** Tools waiting for a vector, by name, with the text to embed. */
  private readonly pending = new Map<string, string>()
  private texts = new Map<string, string>()
  private running: Promise<void> | undefined
  /** The last background failure, for the log and the bench; cleared by a success. */
  lastError: unknown

  constructor(
    private readonly service: () => EmbeddingsService | undefined,
    private readonly options: { batch: number; onError: (error: unknown) => void },
  ) {}

  get size(): number {
    return this.names.length
  }

  get waiting(): number {
    return this.pending.size
  }

  add(tool: Indexable): void {
    const text = embeddingText(tool)
    this.texts.set(tool.name, text)
    this.pending.set(tool.name, text)
    this.schedule()
  }

  remove(name: string): void {
    this.texts.delete(name)
    this.pending.delete(name)
    const row = this.rowOf.get(name)
    if (row === undefined) return
    // Move the last row into the hole: removal is O(dimensions), and rows stay dense for the scan.
    const last = this.names.length - 1
    if (row !== last) {
      const moved = this.names[last]
      this.matrix.copyWithin(row * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions)
      this.sketches.copyWithin(row * SketchWidth, last * SketchWidth, (last + 1) * SketchWidth)
      this.names[row] = moved
      this.rowOf.set(moved, row)
    }
    this.names.pop()
    this.rowOf.delete(name)
  }

  /** Embeds what is pending now; resolves when the queue is empty (or a batch failed). */
  settle(): Promise<void> {
    this.schedule()
    return this.running ?? Promise.resolve()
  }

  private schedule(): void {
    if (this.running || this.pending.size === 0 || !this.service()) return
    this.running = (async () => {
      // Registrations come in bursts (a plugin registering its tools): batch them.
      await new Promise((r) => setImmediate(r))
      try {
        while (this.pending.size > 0) await this.embedBatch()
        this.lastError = undefined
      } catch (error) {
        this.lastError = error
        this.options.onError(error)
      } finally {
        this.running = undefined
      }
    })()
  }

  private async embedBatch(): Promise<void> {
    const service = this.service()
    if (!service) return this.pending.clear()
    this.follow(service)
    const batch = [...this.pending].slice(0, this.options.batch)
    const vectors = checkVectors(
      await service.embed(batch.map(([, text]) => text)),
      batch.length,
      service.dimensions,
      `embeddings (${service.model})`,
    )
    // A provider swapped while the batch was out answers for a space these rows are not in.
    if (service.model !== this.model) return
    batch.forEach(([name, text], i) => {
      // Removed, or registered again with another description, while the batch was out.
      if (this.pending.get(name) !== text) return
      this.pending.delete(name)
      this.put(name, vectors[i])
    })
  }

  /** A new model (or the first): drop every vector and queue the registry again. */
  private follow(service: EmbeddingsService): void {
    if (service.model === this.model && service.dimensions === this.dimensions) return
    this.model = service.model
    this.dimensions = service.dimensions
    this.names.length = 0
    this.rowOf.clear()
    this.matrix = new Float32Array(0)
    this.sketches = new Float32Array(0)
    this.projection = new Projection(this.dimensions, SketchWidth)
    for (const [name, text] of this.texts) this.pending.set(name, text)
  }

  private put(name: string, vector: Float32Array): void {
    let row = this.rowOf.get(name)
    if (row === undefined) {
      row = this.names.length
      this.names.push(name)
      this.rowOf.set(name, row)
      if ((row + 1) * this.dimensions > this.matrix.length) {
        const grown = new Float32Array(Math.max(64, (row + 1) * 2) * this.dimensions)
        grown.set(this.matrix)
        this.matrix = grown
        const sketches = new Float32Array((grown.length / this.dimensions) * SketchWidth)
        sketches.set(this.sketches)
        this.sketches = sketches
      }
    }
    this.matrix.set(vector, row * this.dimensions)
    this.projection!.project(vector, this.sketches, row * SketchWidth)
  }

  /**
   * The query's vector from the current provider, or undefined when there is none, it answered for
   * another model than the index holds, or it failed (the caller then ranks by words alone).
   */
  async queryVector(query: string, signal: AbortSignal): Promise<Float32Array | undefined> {
    const service = this.service()
    if (!service) return undefined
    this.follow(service)
    const [vector] = checkVectors(await service.embed([query], { signal }), 1, service.dimensions, `embeddings (${service.model})`)
    return service.model === this.model ? vector : undefined
  }

  /**
   * Embedded tools by cosine to `vector`, best first, at most `limit`, among those `accept` allows. Up
   * to ExactBelow tools every vector is compared; above, the sketches pick the candidates and only
   * those are compared exactly (the result is then the exact top `limit` of the candidates).
   */
  nearest(vector: Float32Array, limit: number, accept?: (name: string) => boolean): SemanticHit[] {
    if (vector.length !== this.dimensions || limit <= 0) return []
    if (this.names.length < ExactBelow) return this.top(vector, limit, this.matrix, this.dimensions, accept)
    const sketch = new Float32Array(SketchWidth)
    this.projection!.project(vector, sketch)
    // Candidates are not filtered: the filter is a call per row, and most candidates are dropped anyway.
    const candidates = new TopK(Math.max(MinCandidates, limit * 8))
    for (let row = 0; row < this.names.length; row++) {
      const score = dotRow(sketch, this.sketches, row, SketchWidth)
      if (score > candidates.floor) candidates.push(row, score)
    }
    const best = new TopK(limit)
    for (const { row } of candidates.sorted()) {
      const score = dotRow(vector, this.matrix, row)
      if (score > best.floor && (!accept || accept(this.names[row]))) best.push(row, score)
    }
    return best.sorted().map(({ row, score }) => ({ name: this.names[row], score }))
  }

  /** The best `limit` rows of `matrix` (rows `width` wide) by dot product with `query`, best first. */
  private top(query: Float32Array, limit: number, matrix: Float32Array, width: number, accept?: (name: string) => boolean): SemanticHit[] {
    const best = new TopK(limit)
    for (let row = 0; row < this.names.length; row++) {
      const score = dotRow(query, matrix, row, width)
      // The filter is a closure call: only for rows that would be kept.
      if (score <= best.floor || (accept && !accept(this.names[row]))) continue
      best.push(row, score)
    }
    return best.sorted().map(({ row, score }) => ({ name: this.names[row], score }))
  }
}

/**
 * Reciprocal rank fusion: each list gives 1 / (k + rank) to what it ranks, the semantic list times
 * `weight`; a tool in both lists gets both. Scores of different kinds (BM25, cosine) are never added.
 */
export function fuse(
  lexical: readonly { name: string }[],
  semantic: readonly { name: string }[],
  k: number,
  weight: number,
): SemanticHit[] {
  const scores = new Map<string, number>()
  lexical.forEach((h, i) => scores.set(h.name, 1 / (k + i + 1)))
  semantic.forEach((h, i) => scores.set(h.name, (scores.get(h.name) ?? 0) + weight / (k + i + 1)))
  return [...scores].map(([name, score]) => ({ name, score })).sort((a, b) => b.score - a.score)
}
