/**
 * @module services/compactor
 * The `compactor` contract (optional service): shrink a projection that no longer fits. Compaction
 * changes only the projection, never run state (invariant 5); the kernel checks the result before it
 * is used and falls back to the uncompacted projection if the check fails.
 */
import type { Projection } from './context.ts'
import type { Usage } from '../data.ts'
import type { RunState } from '../state.ts'

export const CompactorContract = '1.1.0'

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
  /** What producing the result cost (a summary asked of the model); counts toward the run's budgets. Since 1.1.0. */
  usage?: Usage
}

export interface CompactorService {
  /**
   * Name and version of the strategy, recorded with each compaction so a run says which one produced
   * its context (for example `summary@1`). Default: the providing plugin's name@version. Since 1.1.0.
   */
  readonly strategy?: string
  /**
   * Compact when the projection is over this many tokens (for example a context window minus a reserve).
   * Default: the agent's `contextTokens`. Since 1.1.0.
   */
  readonly threshold?: number
  /**
   * Contract: returns a projection of at most `limit` tokens that keeps every tool call with its
   * result, the first user message (the goal) and the last message. The kernel records `compaction/start`
   * before and `compaction/end` after; a result that breaks these promises, or a throw, is recorded with
   * `rejected` and not used.
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
