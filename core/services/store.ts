/**
 * @module services/store
 * The `store` contract: an append-only log of run events. Run state is a reduction of the log
 * (core/state.ts), so a store only has to keep events in order and refuse a writer that is behind.
 */
import type { RunEvent } from '../events.ts'
import type { RunStatus } from '../status.ts'
import type { Code } from '../errors.ts'

export const StoreContract = '1.0.0'

/** One line of `cordage runs`. */
export interface RunSummary {
  runId: string
  agent: string
  task: string
  status: RunStatus
  failureCode?: Code
  lastSeq: number
  createdAt: number
  updatedAt: number
}

export interface ListFilter {
  status?: RunStatus
  agent?: string
  /** Newest first; default 100. */
  limit?: number
}

export interface StoreService {
  /**
   * Append a batch of events to a run, atomically.
   *
   * Contract: `expectedSeq` is the seq of the last event the writer has seen (0 for a new run). The
   * batch must continue it without gaps (`expectedSeq + 1`, `+ 2`, ...). If the run's last seq is not
   * `expectedSeq`, nothing is written and the promise rejects with CordageError `seq_conflict`.
   * Either the whole batch is durable when the promise resolves, or none of it is. A store that writes
   * synchronously (memory, SQLite) may return nothing instead of a promise, and throw instead of rejecting.
   */
  append(runId: string, events: readonly RunEvent[], expectedSeq: number): Promise<void> | void
  /** Every event of a run in seq order. Rejects with `run_not_found` for an unknown run. */
  load(runId: string): Promise<RunEvent[]>
  /** Events with seq > `after` (default 0), at most `limit`, in seq order. Unknown run: `run_not_found`. */
  read(runId: string, options?: { after?: number; limit?: number }): Promise<RunEvent[]>
  /** Runs, newest first. */
  list(filter?: ListFilter): Promise<RunSummary[]>
}

declare module 'cordis' {
  interface Context {
    store: StoreService
  }
}
