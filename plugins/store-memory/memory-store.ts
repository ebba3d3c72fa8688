/**
 * The store contract in process memory: an append-only log per run, a summary per run kept current on
 * append, the ledger, leases and cancel requests. No snapshots: replaying from memory is cheap.
 */
import {
  CordageError,
  summarize,
  type ApprovalGrant,
  type ApprovalGrantQuery,
  type AppendOptions,
  type CancelRequest,
  type Effect,
  type EffectWrite,
  type Lease,
  type ListFilter,
  type HistoryCheck,
  type RunEvent,
  type RunSummary,
  type StoredRun,
  type StoreService,
  type ClaimFilter,
  assertKernelWriter,
  type StoreWriter,
  type StoredArtifact,
  type ThreadSummary,
  type ThreadTurn,
  checkArtifactInput,
  checkThreadClose,
  checkThreadLink,
  checkThreadId,
} from 'cordage'

/** `ArtifactRef` (core/contracts/data.ts), which `cordage` does not export by that name. */
type ArtifactRef = Omit<StoredArtifact, 'runId' | 'actionId' | 'createdAt'>
import { MemoryGrants } from './grants.ts'
import { MemoryThreads } from './threads.ts'
import { MemoryArtifacts } from './artifacts.ts'

export class MemoryStore implements StoreService {
  private logs = new Map<string, RunEvent[]>()
  private summaries = new Map<string, RunSummary>()
  private ledger = new Map<string, Effect>()
  private leases = new Map<string, { worker: string; token: number; expiresAt: number; released: boolean }>()
  private cancels = new Map<string, CancelRequest>()
  private readonly grantList = new MemoryGrants()
  private readonly threadList = new MemoryThreads((runId) => this.summaries.get(runId))
  private readonly artifactList = new MemoryArtifacts()

  constructor(private maxEventsPerRun: number) {}

  /** Synchronous: memory is as durable as it gets, and the loop skips an await when nothing is returned. */
  append(runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions = {}): void {
    assertKernelWriter(options.writer, `append to run ${runId}`)
    // A malformed thread is the caller's mistake whatever the log holds: said first.
    const link = options.thread === undefined ? undefined : checkThreadLink(runId, options.thread, expectedSeq, events[0])
    const log = this.logs.get(runId)
    const last = log ? log.length : 0
    // The lease first: "another worker owns the run" says more than "you are behind".
    if (options.lease && log) this.checkLease(options.lease)
    if (last !== expectedSeq) {
      throw new CordageError('seq_conflict', `run ${runId}: writer expected last seq ${expectedSeq}, store has ${last}`)
    }
    events.forEach((event, i) => {
      if (event.seq !== expectedSeq + i + 1 || event.runId !== runId) {
        throw new CordageError(
          'invalid_event',
          `run ${runId}: batch item ${i} has seq ${event.seq} of run ${event.runId}, expected seq ${expectedSeq + i + 1}`,
        )
      }
    })
    if (last + events.length > this.maxEventsPerRun) {
      throw new CordageError('invalid_event', `run ${runId}: more than ${this.maxEventsPerRun} events (store-memory maxEventsPerRun)`)
    }
    if (!log && events[0]?.type !== 'run/start')
      throw new CordageError('invalid_event', `run ${runId}: the first event must be run/start, got ${events[0]?.type}`)
    if (options.lease && !log && options.lease.token !== 1)
      throw new CordageError('lease_lost', `run ${runId} is new: its first lease has token 1, not ${options.lease.token}`)
    const joinThread =
      options.thread === undefined
        ? undefined
        : this.threadList.prepare(runId, checkThreadLink(runId, options.thread, expectedSeq, events[0]))
    const inBatch = new Map<string, EffectWrite>()
    const effects = (options.effects ?? []).map((write) => {
      // Two intents of one batch under one key: the second is checked against the first, as if it were stored.
      const earlier = write.op === 'intent' ? inBatch.get(write.key) : undefined
      if (earlier && earlier.op === 'intent' && write.op === 'intent') {
        if (earlier.argsHash !== write.argsHash)
          throw new CordageError(
            'idempotency_conflict',
            `idempotency key ${write.key} is used twice in one batch, by ${earlier.actionId} and ${write.actionId}, with other arguments`,
          )
        if (earlier.runId !== write.runId || earlier.actionId !== write.actionId)
          throw new CordageError('effect_exists', `idempotency key ${write.key} belongs to ${earlier.runId} ${earlier.actionId} (pending)`)
      }
      if (write.op === 'intent') inBatch.set(write.key, write)
      return this.prepare(write)
    })

    // Everything checked: apply.
    if (!log && options.lease)
      this.leases.set(runId, { worker: options.lease.worker, token: 1, expiresAt: options.lease.expiresAt, released: false })
    if (!log) this.logs.set(runId, [...events])
    else for (const event of events) log.push(event)
    for (const apply of effects) apply()
    let summary = this.summaries.get(runId)
    for (const event of events) {
      summary = summarize(summary, event)
      if (event.type === 'run/end') this.cancels.delete(runId)
    }
    if (joinThread) {
      joinThread()
      summary = { ...summary!, threadId: link!.id, turn: link!.turn }
    }
    this.summaries.set(runId, summary!)
  }

  async load(runId: string): Promise<RunEvent[]> {
    return [...this.log(runId)]
  }

  async loadRun(runId: string): Promise<StoredRun> {
    return { events: [...this.log(runId)] }
  }

  async read(runId: string, options: { after?: number; limit?: number } = {}): Promise<RunEvent[]> {
    const after = options.after ?? 0
    return this.log(runId).slice(after, options.limit === undefined ? undefined : after + options.limit)
  }

  /**
   * store-memory keeps event objects, not text: there is no stored body to chain or to damage, so it
   * answers `chained: false`. Its log is numbered 1..n by construction (append checks every batch).
   */
  async verify(runId: string): Promise<HistoryCheck> {
    return { runId, events: this.log(runId).length, chained: false, keyed: false }
  }

  /** The ledger entries a run holds (for `cordage scan`), oldest first. */
  async effectsOf(runId: string): Promise<Effect[]> {
    this.log(runId)
    return [...this.ledger.values()]
      .filter((e) => e.runId === runId)
      .sort((a, b) => a.startedAt - b.startedAt || (a.key < b.key ? -1 : 1))
      .map((e) => ({ ...e }))
  }

  async list(filter: ListFilter = {}): Promise<RunSummary[]> {
    const out: RunSummary[] = []
    const now = Date.now()
    for (const summary of this.summaries.values()) {
      if (filter.status && summary.status !== filter.status) continue
      if (filter.agent && summary.agent !== filter.agent) continue
      const lease = this.leases.get(summary.runId)
      out.push({ ...summary, owner: lease && !lease.released && lease.expiresAt > now ? lease.worker : undefined })
    }
    out.sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1))
    return out.slice(0, filter.limit ?? 100)
  }

  async effect(key: string): Promise<Effect | undefined> {
    const effect = this.ledger.get(key)
    return effect && { ...effect }
  }

  async claim(runId: string, worker: string, ttlMs: number, writer?: StoreWriter): Promise<Lease | undefined> {
    assertKernelWriter(writer, `claim of run ${runId}`)
    this.log(runId)
    const now = Date.now()
    const current = this.leases.get(runId)
    if (current && !current.released && current.expiresAt > now && current.worker !== worker) return undefined
    const token = (current?.token ?? 0) + 1
    const lease = { worker, token, expiresAt: now + ttlMs, released: false }
    this.leases.set(runId, lease)
    // Only a lease that ran out names its holder: a released one was given up, not taken over.
    const previous = current && !current.released && current.worker !== worker ? current.worker : undefined
    return { runId, worker, token, expiresAt: lease.expiresAt, previous }
  }

  async renew(lease: Lease, ttlMs: number, writer?: StoreWriter): Promise<boolean> {
    assertKernelWriter(writer, `renewal of the lease of run ${lease.runId}`)
    const current = this.leases.get(lease.runId)
    if (!current || current.released || current.token !== lease.token) return false
    current.expiresAt = Date.now() + ttlMs
    return true
  }

  async release(lease: Lease, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `release of the lease of run ${lease.runId}`)
    const current = this.leases.get(lease.runId)
    if (current && current.token === lease.token) current.released = true
  }

  async claimNext(worker: string, ttlMs: number, filter: ClaimFilter = {}, writer?: StoreWriter): Promise<Lease | undefined> {
    assertKernelWriter(writer, 'claim of the next run')
    const now = Date.now()
    const candidates = [...this.summaries.values()]
      .filter(
        (s) =>
          (s.status === 'RUNNING' || s.status === 'CANCELLING') &&
          (!filter.agents || filter.agents.includes(s.agent)) &&
          !filter.exclude?.includes(s.runId),
      )
      .filter((s) => {
        const l = this.leases.get(s.runId)
        return !l || l.released || l.expiresAt <= now
      })
      .sort((a, b) => a.createdAt - b.createdAt)
    return candidates.length ? this.claim(candidates[0].runId, worker, ttlMs, writer) : undefined
  }

  async requestCancel(runId: string, request: CancelRequest, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `cancel request for run ${runId}`)
    this.log(runId)
    if (!this.cancels.has(runId)) this.cancels.set(runId, { ...request })
  }

  async cancelRequest(runId: string): Promise<CancelRequest | undefined> {
    const request = this.cancels.get(runId)
    return request && { ...request }
  }

  private checkLease(lease: Lease) {
    const current = this.leases.get(lease.runId)
    if (!current || current.released || current.token !== lease.token) {
      throw new CordageError(
        'lease_lost',
        `run ${lease.runId}: worker ${lease.worker} (lease ${lease.token}) no longer owns it${current && !current.released ? `; ${current.worker} does (lease ${current.token})` : ''}`,
      )
    }
  }

  /** Check one ledger write; return the change to make once the whole batch is known to be good. */
  private prepare(write: EffectWrite): () => void {
    const existing = this.ledger.get(write.key)
    if (write.op === 'outcome') {
      if (!existing) throw new CordageError('invalid_event', `outcome for idempotency key ${write.key}, which has no intent`)
      return () => {
        Object.assign(existing, {
          status: write.status,
          receipt: write.receipt,
          output: write.output,
          observation: write.observation,
          endedAt: write.at,
        })
      }
    }
    if (existing) {
      const ours = existing.runId === write.runId && existing.actionId === write.actionId
      if (existing.argsHash !== write.argsHash) {
        throw new CordageError(
          'idempotency_conflict',
          `idempotency key ${write.key} was used by ${existing.runId} ${existing.actionId} with arguments ${existing.argsHash}, not ${write.argsHash}`,
          { data: { ...existing } },
        )
      }
      const free = existing.status === 'failed' || existing.status === 'not_committed'
      if (!ours && !free && !(write.takeover && existing.status === 'pending'))
        throw new CordageError(
          'effect_exists',
          `idempotency key ${write.key} belongs to ${existing.runId} ${existing.actionId} (${existing.status})`,
          { data: { ...existing } },
        )
      return () => {
        Object.assign(existing, {
          runId: write.runId,
          actionId: write.actionId,
          status: 'pending',
          attempts: existing.attempts + 1,
          policyVersion: write.policyVersion,
        })
      }
    }
    return () => {
      this.ledger.set(write.key, {
        key: write.key,
        runId: write.runId,
        actionId: write.actionId,
        tool: write.tool,
        argsHash: write.argsHash,
        policyVersion: write.policyVersion,
        status: 'pending',
        attempts: 1,
        startedAt: write.at,
      })
    }
  }

  private log(runId: string): RunEvent[] {
    const log = this.logs.get(runId)
    if (!log) throw new CordageError('run_not_found', `no run ${runId} in store-memory (it keeps runs only while this process lives)`)
    return log
  }

  async putGrant(grant: ApprovalGrant, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `standing grant ${grant.id}`)
    return this.grantList.put(grant)
  }

  grants(query: ApprovalGrantQuery): Promise<ApprovalGrant[]> {
    return this.grantList.list(query)
  }

  async revokeGrant(
    id: string,
    by: string,
    at: number,
    reason: string | undefined,
    writer?: StoreWriter,
  ): Promise<ApprovalGrant | undefined> {
    assertKernelWriter(writer, `revocation of grant ${id}`)
    return this.grantList.revoke(id, by, at, reason)
  }

  async threadTurns(threadId: string): Promise<ThreadTurn[]> {
    return this.threadList.turns(checkThreadId(threadId, 'threadTurns'))
  }

  async threads(filter: { agent?: string; limit?: number } = {}): Promise<ThreadSummary[]> {
    return this.threadList.list(filter)
  }

  async thread(threadId: string): Promise<ThreadSummary | undefined> {
    return this.threadList.get(checkThreadId(threadId, 'thread'))
  }

  async closeThread(threadId: string, close: { by: string; at: number; reason?: string }, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `close of thread ${threadId}`)
    const checked = checkThreadClose(threadId, close)
    this.threadList.close(checked.threadId, checked)
  }

  async putArtifact(
    artifact: { runId: string; actionId?: string; bytes: Uint8Array; mediaType: string; visibility?: 'ui' | 'audit' },
    writer?: StoreWriter,
  ): Promise<ArtifactRef> {
    assertKernelWriter(writer, `artifact of run ${artifact?.runId}`)
    const input = checkArtifactInput(artifact)
    this.log(input.runId)
    return this.artifactList.put(input)
  }

  async artifact(ref: string): Promise<StoredArtifact | undefined> {
    return this.artifactList.get(ref)
  }

  async readArtifact(ref: string, range?: { offset: number; length: number }): Promise<Uint8Array> {
    return this.artifactList.read(ref, range)
  }

  async artifactsOf(runId: string): Promise<StoredArtifact[]> {
    this.log(runId)
    return this.artifactList.of(runId)
  }
}

// The kernel writes only through a frozen class (core/kernel/store-writer.ts guardStore): nobody holding the
// store can replace a write method to catch the kernel's writer.
Object.freeze(MemoryStore.prototype)
