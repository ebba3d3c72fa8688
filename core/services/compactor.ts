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

/**
 * What a compacted projection broke, or undefined when it keeps the contract: under the limit, the goal
 * (first user message) and the last message still there, and every tool call with its result.
 */
export function checkCompacted(before: Projection, after: Projection, limit: number): string | undefined {
  if (after.tokens > limit) return 'still over the limit'
  const firstUser = before.messages.find((m) => m.role === 'user')
  if (firstUser && !after.messages.some((m) => m.role === 'user' && m.source === firstUser.source)) return 'the goal is gone'
  const last = before.messages[before.messages.length - 1]
  if (last && !after.messages.some((m) => m.source === last.source && m.role === last.role)) return 'the last message is gone'
  const calls = new Set<string>()
  const results = new Set<string>()
  for (const m of after.messages) {
    for (const c of m.calls ?? []) calls.add(c.actionId)
    if (m.role === 'tool' && m.actionId) results.add(m.actionId)
  }
  for (const id of calls) if (!results.has(id)) return `call ${id} lost its result`
  for (const id of results) if (!calls.has(id)) return `result ${id} lost its call`
  return undefined
}
