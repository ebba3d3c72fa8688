/**
 * @module services/embeddings
 * The `embeddings` contract (optional, not used by the loop): texts in, one vector per text out. A
 * plugin that ranks by meaning (tool-search) requires it optionally; a provider plugin fills it with a
 * model shipped in a package (embeddings-local) or an API (embeddings-openai). Vectors of different
 * models live in different spaces, so `model` names the space and whoever keeps vectors keys them by it.
 */
export const EmbeddingsContract = '1.0.0'

export interface EmbedOptions {
  /** Aborted when the caller stops waiting (its time limit, or the run ending). */
  signal?: AbortSignal
}

export interface EmbeddingsService {
  /** The vector space: provider and model (for example `use-lite@1` or `openai:text-embedding-3-small`). */
  readonly model: string
  /** Length of every vector. */
  readonly dimensions: number
  /**
   * Contract: resolves to exactly one vector per text, in order, each `dimensions` long and of finite
   * numbers. Callers check this (kit `checkVectors`) and treat anything else as a failed call.
   */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<ArrayLike<number>[]>
}
