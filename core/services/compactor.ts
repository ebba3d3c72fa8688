/**
 * @module services/compactor
 * The `compactor` contract (optional service): shrink a projection that no longer fits. Compaction
 * changes only the projection, never run state (invariant 5); the kernel checks the result before it
 * is used and falls back to the uncompacted projection if the check fails.
 */
import type { Projection } from './context.ts'
import type { RunState } from '../state.ts'

export const CompactorContract = '1.0.0'

export interface CompactRequest {
  state: Readonly<RunState>
  projection: Projection
  /** The token limit the result must fit under. */
  limit: number
  signal: AbortSignal
}

export interface CompactResult extends Projection {
  /** Seqs whose content is now only summarised (still in the store, retrievable by seq). */
  summarised: number[]
}

export interface CompactorService {
  /**
   * Contract: returns a projection of at most `limit` tokens that keeps every tool call with its
   * result, the first user message (the goal) and the last message. The kernel checks these and records
   * `step/compacted`; a result that breaks them, or a throw, is recorded with `rejected` and not used.
   */
  compact(request: CompactRequest): Promise<CompactResult>
}

declare module 'cordis' {
  interface Context {
    compactor: CompactorService
  }
}
