/**
 * @module services/store
 * The `store` contract: an append-only log of run events, plus what must be decided in the same
 * transaction as those events: the side-effect ledger (intents and outcomes by idempotency key), the
 * lease that makes one worker the owner of a run, and snapshots that spare replaying a long log. Run
 * state is a reduction of the log (core/kernel/state.ts); a store keeps events in order and refuses a writer
 * that is behind or no longer owns the run.
 */
import type { RunEvent } from '../events.ts'
import type { Code } from '../errors.ts'
import type { ApprovalGrant, ApprovalGrantQuery, ArtifactRef, RunStatus } from '../data.ts'

/**
 * 2.0.0: ledger, leases, cancel requests and snapshots joined the log (1.0.0 was the log alone).
 * 2.1.0: standing grants (optional methods: a store without them cannot keep approvals across runs).
 * 2.3.0: threads (`AppendOptions.thread`, `threadTurns`, `threads`, `closeThread`) and artifacts
 * (`putArtifact`, `artifact`, `readArtifact`, `artifactsOf`); optional: a store without them cannot
 * hold threads or artifacts, and the kernel says so when asked to use them.
 */
export const StoreContract = '2.3.0'

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
  /** The worker that holds the run's lease, while the lease is live. */
  owner?: string
  /** Set when the run is a turn of a thread. Since 2.3.0. */
  threadId?: string
  turn?: number
}

/** One turn of a thread: the run that is that turn. Since 2.3.0. */
export interface ThreadTurn {
  threadId: string
  turn: number
  runId: string
  agent: string
  task: string
  status: RunStatus
  failureCode?: Code
  createdAt: number
  updatedAt: number
}

/** One line of `cordage runs --threads`. Since 2.3.0. */
export interface ThreadSummary {
  threadId: string
  agent: string
  turns: number
  lastRunId: string
  lastStatus: RunStatus
  createdAt: number
  updatedAt: number
  /** Set once the thread was closed (cancelled as a whole): it takes no more turns. */
  closed?: { by: string; at: number; reason?: string }
}

/** A stored artifact as listed for a run. Since 2.3.0. */
export interface StoredArtifact extends ArtifactRef {
  runId: string
  actionId?: string
  createdAt: number
}

export interface ListFilter {
  status?: RunStatus
  agent?: string
  /** Newest first; default 100. */
  limit?: number
}

/** Ownership of a run by one worker until `expiresAt`. `token` grows with every claim (fencing). */
export interface Lease {
  runId: string
  worker: string
  token: number
  expiresAt: number
  /** Set by a claim that took the run over from another worker (whose lease had expired). */
  previous?: string
}

export type EffectStatus = 'pending' | 'committed' | 'failed' | 'not_committed'

/** One side effect in the ledger, by idempotency key. */
export interface Effect {
  key: string
  runId: string
  actionId: string
  tool: string
  argsHash: string
  policyVersion: string
  /** `pending` from the intent until the outcome: a pending effect whose process died is an unknown effect. */
  status: EffectStatus
  attempts: number
  receipt?: unknown
  output?: unknown
  /**
   * What the model was told of the outcome (`tool/end.observation`), so that a call deduplicated under
   * this key later gives its run the same observation, not a rendering of the raw output. Since 2.2.0.
   */
  observation?: string
  startedAt: number
  endedAt?: number
}

/** A ledger write, applied in the same transaction as the events it comes with. */
export type EffectWrite =
  | {
      op: 'intent'
      key: string
      runId: string
      actionId: string
      tool: string
      argsHash: string
      policyVersion: string
      attempt: number
      at: number
      /** Take the key over from another run whose effect is still pending (only for idempotent tools: the target deduplicates). */
      takeover?: boolean
    }
  | {
      op: 'outcome'
      key: string
      status: Exclude<EffectStatus, 'pending'>
      receipt?: unknown
      output?: unknown
      observation?: string
      at: number
    }

export interface AppendOptions {
  /** The writer's lease. The append is refused with `lease_lost` unless it is still the run's current lease. */
  lease?: Lease
  /** Ledger writes for this batch. */
  effects?: EffectWrite[]
  /** Run state as of the batch's last event; a store may keep it to load long runs faster. */
  snapshot?: { version: number; state: unknown }
  /** The kernel's writer (see {@link StoreWriter}). Since 2.2.0. */
  writer?: StoreWriter
  /**
   * Only with `expectedSeq` 0 (a new run): make the run turn `turn` of thread `id`, in the same
   * transaction. Refused with `thread_busy` (nothing written) when the thread has that turn already, or
   * a turn before it that has not ended, or is closed (`thread_closed`); turn 1 creates the thread
   * (for `agent`), a later turn needs turn - 1 to exist. Since 2.3.0.
   */
  thread?: { id: string; turn: number; agent: string }
}

/**
 * Proof that a store write comes from the kernel. Every write method of the contract takes it (since
 * 2.2.0); a store checks it with {@link assertKernelWriter} (core/kernel/store-writer.ts) before it writes anything, so a plugin that
 * can see the `store` service can read runs but not forge an event, a lease or a standing grant.
 */
export interface StoreWriter {
  readonly writer: 'cordage-kernel'
}

export interface StoredRun {
  /** The newest snapshot, when the store keeps them. */
  snapshot?: { seq: number; version: number; state: unknown }
  /** Events after the snapshot (all events when there is none), in seq order. */
  events: RunEvent[]
}

/** What a store found when it checked a run's stored history (`verify`). */
export interface HistoryCheck {
  runId: string
  /** Events stored. */
  events: number
  /** Whether the store chains events (each to the hash of the one before) at all. */
  chained: boolean
  /** Whether the chain is keyed (HMAC): edits cannot be hidden without the key. */
  keyed: boolean
  /** The last event's chain hash, to keep elsewhere as an anchor. */
  head?: string
  /** Events recorded before the store chained (seq 1..unchainedUpTo carry no chain). */
  unchainedUpTo?: number
  /** The first event that does not hold together, and why; absent when the history is intact. */
  firstBad?: { seq: number; problem: string }
}

/** Which runs `claimNext` may hand out. */
export interface ClaimFilter {
  /** Only runs of these agents. */
  agents?: string[]
  /** Never these runs (the worker found them damaged). Since 2.2.0. */
  exclude?: string[]
}

export interface CancelRequest {
  by: string
  reason?: string
  at: number
}

export interface StoreService {
  /** When set, the kernel sends a state snapshot with an append once this many events, and a tenth of the run's, passed since the last. */
  readonly snapshotEvery?: number
  /** True when other processes may write to the same store (the kernel then watches for cancel requests). */
  readonly shared?: boolean
  /**
   * Append a batch of events to a run, with its ledger writes and optional snapshot, atomically.
   *
   * Contract: refused with `store_write_refused` unless `options.writer` is the kernel's (2.2.0).
   * `expectedSeq` is the seq of the last event the writer has seen (0 for a new run). The
   * batch must continue it without gaps (`expectedSeq + 1`, `+ 2`, ...). If the run's last seq is not
   * `expectedSeq`, nothing is written and the append fails with `seq_conflict`; if `options.lease` is
   * given and is not the run's current lease (expired and taken, or released), with `lease_lost`, which
   * is checked first (it says more).
   * An `intent` for a key the ledger already holds for another run or action fails with
   * `idempotency_conflict` when its arguments hash differs, and with `effect_exists` when it is the same
   * (the caller should use that effect, see {@link effect}), unless the held effect failed, did not
   * commit, or is pending and the intent says `takeover`; an intent for the same run and action is a
   * retry and counts an attempt. For a new run (`expectedSeq` 0), `options.lease` with token 1 makes the
   * writer its owner from the first event, so no other worker can claim it in between. Either everything is durable when the call returns (or its promise
   * resolves), or nothing is. A store that writes synchronously may return nothing and throw instead of
   * rejecting.
   */
  append(runId: string, events: readonly RunEvent[], expectedSeq: number, options?: AppendOptions): Promise<void> | void
  /** Every event of a run in seq order. Rejects with `run_not_found` for an unknown run. */
  load(runId: string): Promise<RunEvent[]>
  /** The newest snapshot (if any) and the events after it. Rejects with `run_not_found`. */
  loadRun(runId: string): Promise<StoredRun>
  /** Events with seq > `after` (default 0), at most `limit`, in seq order. Unknown run: `run_not_found`. */
  read(runId: string, options?: { after?: number; limit?: number }): Promise<RunEvent[]>
  /** Runs, newest first. */
  list(filter?: ListFilter): Promise<RunSummary[]>

  /** The ledger entry for an idempotency key. */
  effect(key: string): Promise<Effect | undefined>

  /**
   * Make `worker` the owner of a run for `ttlMs`. Contract: succeeds (with a token larger than any
   * before it for this run) when the run has no lease, its lease expired, or `worker` holds it already;
   * resolves undefined while another worker's lease is live. `run_not_found` for an unknown run.
   */
  claim(runId: string, worker: string, ttlMs: number, writer: StoreWriter): Promise<Lease | undefined>
  /** Extend a lease. Resolves false when it is no longer the run's current lease. */
  renew(lease: Lease, ttlMs: number, writer: StoreWriter): Promise<boolean>
  /** Give a lease up (a no-op when it is no longer current). */
  release(lease: Lease, writer: StoreWriter): Promise<void>
  /**
   * Claim the oldest run that needs a driver: RUNNING or CANCELLING with no live lease (its worker
   * died, or it was submitted to be driven by a worker), of one of `agents` when given. Each such run
   * goes to one worker only, even when several ask at once.
   */
  claimNext(worker: string, ttlMs: number, filter: ClaimFilter | undefined, writer: StoreWriter): Promise<Lease | undefined>

  /** Ask whoever drives a run to cancel it. Kept until the run ends. */
  requestCancel(runId: string, request: CancelRequest, writer: StoreWriter): Promise<void>
  /** The pending cancel request of a run, if any. */
  cancelRequest(runId: string): Promise<CancelRequest | undefined>

  /**
   * Keep a standing grant (an approval that holds across runs). Since 2.1.0, optional. Contract: a
   * grant with an id that exists already fails with `invalid_input`.
   */
  putGrant?(grant: ApprovalGrant, writer: StoreWriter): Promise<void>
  /** Grants of an agent (and tool), oldest first; revoked and expired ones only with `inactive`. Since 2.1.0. */
  grants?(query: ApprovalGrantQuery): Promise<ApprovalGrant[]>
  /**
   * Check a run's stored history: every event parses, is numbered 1..n without gaps, belongs to the
   * run and, when the store chains events, matches its chain. Optional, since 2.2.0. Contract: reads
   * only; rejects with `run_not_found` for an unknown run; a damaged history is a result, not an error.
   */
  verify?(runId: string): Promise<HistoryCheck>
  /** The ledger entries a run wrote (for `cordage scan`). Optional, since 2.2.0. */
  effectsOf?(runId: string): Promise<Effect[]>
  /** The turns of a thread, in turn order; empty for an unknown thread. Since 2.3.0, optional. */
  threadTurns?(threadId: string): Promise<ThreadTurn[]>
  /** Threads, most recently updated first (default limit 100). Since 2.3.0, optional. */
  threads?(filter?: { agent?: string; limit?: number }): Promise<ThreadSummary[]>
  /** The thread, or undefined. Since 2.3.0, optional. */
  thread?(threadId: string): Promise<ThreadSummary | undefined>
  /** Close a thread: it takes no more turns. Closing twice keeps the first. `run_not_found`-like `thread_not_found` for an unknown one. Since 2.3.0. */
  closeThread?(threadId: string, close: { by: string; at: number; reason?: string }, writer: StoreWriter): Promise<void>

  /**
   * Keep a blob by content (sha256) and list it under `runId` (and `actionId`). Storing the same bytes
   * again stores nothing new and returns the same ref; the listing is added. Since 2.3.0, optional.
   */
  putArtifact?(
    artifact: { runId: string; actionId?: string; bytes: Uint8Array; mediaType: string; visibility?: 'ui' | 'audit' },
    writer: StoreWriter,
  ): Promise<ArtifactRef>
  /** The artifact's metadata, or undefined. Since 2.3.0. */
  artifact?(ref: string): Promise<StoredArtifact | undefined>
  /**
   * Bytes `offset` .. `offset + length` of an artifact (fewer at its end), checked against its sha256
   * when read whole. `artifact_not_found` for an unknown ref. Since 2.3.0.
   */
  readArtifact?(ref: string, range?: { offset: number; length: number }): Promise<Uint8Array>
  /** Artifacts listed under a run, oldest first. Since 2.3.0. */
  artifactsOf?(runId: string): Promise<StoredArtifact[]>

  /** Revoke a grant; resolves with it, or undefined when there is no such grant. Revoking twice keeps the first. Since 2.1.0. */
  revokeGrant?(id: string, by: string, at: number, reason: string | undefined, writer: StoreWriter): Promise<ApprovalGrant | undefined>
}

declare module 'cordis' {
  interface Context {
    store: StoreService
  }
}
