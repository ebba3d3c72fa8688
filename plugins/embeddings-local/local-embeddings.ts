/**
 * @module embeddings-local/local-embeddings
 * The `embeddings` service over a model in this process. Texts are cut to `maxChars`, looked up in a
 * bounded cache, and the rest embedded in batches with the event loop given back between them (the
 * model runs on the main thread: a catalogue of thousands of tools must not stall runs for seconds).
 */
import { CordageError, type EmbedOptions, type EmbeddingsService } from 'cordage'
import type { Config } from './manifest.ts'

/** What the service needs of a model: a batch of texts in, one vector per text out. */
export interface SentenceModel {
  embed(texts: string[]): Promise<number[][]>
}

export class LocalEmbeddings implements EmbeddingsService {
  private readonly cache = new Map<string, number[]>()

  constructor(
    readonly model: string,
    readonly dimensions: number,
    private readonly load: () => Promise<SentenceModel>,
    private readonly config: Config,
  ) {}

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    const cut = texts.map((t) => (typeof t === 'string' ? t.slice(0, this.config.maxChars) : ''))
    const out: (number[] | undefined)[] = cut.map((t) => this.cached(t))
    const todo = [...new Set(cut.filter((_, i) => out[i] === undefined))]
    if (todo.length) {
      // This call's own vectors: the cache may be off, smaller than the call, or emptied by another
      // call while this one waits for the model.
      const fresh = new Map<string, number[]>()
      const model = await this.load()
      for (let at = 0; at < todo.length; at += this.config.batchSize) {
        stopIfAborted(options.signal)
        const batch = todo.slice(at, at + this.config.batchSize)
        const vectors = await model.embed(batch)
        batch.forEach((text, i) => {
          fresh.set(text, vectors[i])
          this.keep(text, vectors[i])
        })
        // Give runs their turn between batches.
        if (at + this.config.batchSize < todo.length) await new Promise((r) => setImmediate(r))
      }
      cut.forEach((t, i) => {
        out[i] ??= fresh.get(t)
      })
    }
    return out as number[][]
  }

  private cached(text: string): number[] | undefined {
    const v = this.cache.get(text)
    if (v) {
      // Least recently used goes first: move a hit to the end.
      this.cache.delete(text)
      this.cache.set(text, v)
    }
    return v
  }

  private keep(text: string, vector: number[]): void {
    if (this.config.cacheSize === 0) return
    this.cache.set(text, vector)
    if (this.cache.size > this.config.cacheSize) this.cache.delete(this.cache.keys().next().value!)
  }
}

function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CordageError('cancelled', 'embedding was cancelled by its caller')
}
