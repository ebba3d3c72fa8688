/**
 * The store contract on SQLite. One append is one `BEGIN IMMEDIATE` transaction: the seq check, the
 * lease check, the events, the ledger writes, the run summary and the snapshot commit together or not
 * at all. WAL mode lets other processes read while one writes; `busy_timeout` makes concurrent writers
 * wait their turn instead of failing. Synchronous like better-sqlite3 itself: the loop skips an await.
 */
import type Database from 'better-sqlite3'
import {
  CordageError,
  summarize,
  chainHash,
  eventsFromRows,
  chainedEventsFromRows,
  snapshotFromRow,
  checkedSnapshot,
  snapshotLink,
  HistoryChecker,
  type HistoryCheck,
  type ChainStart,
  type ChainedEventRow,
  type ApprovalGrant,
  type ApprovalGrantQuery,
  type AppendOptions,
  type CancelRequest,
  type Effect,
  type EffectWrite,
  type Lease,
  type ListFilter,
  type RunEvent,
  type RunStatus,
  type RunSummary,
  type StoredRun,
  type StoreService,
  type ClaimFilter,
  assertKernelWriter,
  storeCorrupt,
  type StoreWriter,
  type StoredArtifact,
  type ThreadSummary,
  type ThreadTurn,
  artifactRefOfStored,
  checkArtifactInput,
  checkThreadClose,
  checkThreadId,
  checkThreadLink,
  type ThreadAppend,
} from 'cordage'
import { SqliteGrants } from './grants.ts'
import { SqliteThreads } from './threads.ts'
import { SqliteArtifacts } from './artifacts.ts'
import { openDatabase } from './open.ts'

interface RunRow {
  run_id: string
  agent: string
  task: string
  status: string
  failure_code: string | null
  last_seq: number
  created_at: number
  updated_at: number
  lease_worker: string | null
  lease_token: number
  lease_expires: number
  lease_released: number
  cancel_by: string | null
  cancel_reason: string | null
  cancel_at: number | null
  thread_id: string | null
  turn: number | null
}

interface EffectRow {
  key: string
  run_id: string
  action_id: string
  tool: string
  args_hash: string
  policy_version: string
  status: string
  attempts: number
  receipt: string | null
  output: string | null
  observation: string | null
  started_at: number
  ended_at: number | null
}

export interface SqliteOptions {
  synchronous: 'full' | 'normal'
  snapshotEvery: number
  busyTimeoutMs: number
  /** The key of the hash chain (HMAC-SHA-256); without it the chain is plain SHA-256. */
  chainKey?: string
  /**
   * `false` stores events without their chain hash. Only to measure what chaining costs
   * (bench/chain.ts): the plugin always chains, and `verify` then reports such events as not chained.
   */
  chain?: boolean
}

export class SqliteStore implements StoreService {
  readonly shared = true
  readonly snapshotEvery: number
  private readonly chainKey: string | undefined
  private readonly chain: boolean
  private db: Database.Database
  private sql: Statements
  private grantRows: SqliteGrants
  private threadRows: SqliteThreads
  private artifactRows: SqliteArtifacts
  private tx: {
    append: Database.Transaction<SqliteStore['appendInTx']>
    claim: Database.Transaction<SqliteStore['claimInTx']>
    claimNext: Database.Transaction<SqliteStore['claimNextInTx']>
  }

  constructor(
    readonly file: string,
    options: SqliteOptions,
  ) {
    // Opened, migrated and checked (open.ts): a file that is not Cordage's database is refused, by name.
    this.db = openDatabase(file, options)
    this.snapshotEvery = options.snapshotEvery
    this.chainKey = options.chainKey
    this.chain = options.chain !== false
    this.sql = statements(this.db)
    this.grantRows = new SqliteGrants(this.db)
    this.threadRows = new SqliteThreads(this.db)
    this.artifactRows = new SqliteArtifacts(this.db)
    // BEGIN IMMEDIATE takes the write lock at once, so a check and the write that depends on it (seq,
    // lease, ledger key, which run to claim) cannot interleave with another process's.
    this.tx = {
      append: this.db.transaction(this.appendInTx.bind(this)),
      claim: this.db.transaction(this.claimInTx.bind(this)),
      claimNext: this.db.transaction(this.claimNextInTx.bind(this)),
    }
  }

  append(runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions = {}): void {
    assertKernelWriter(options.writer, `append to run ${runId}`)
    // A malformed thread is the caller's mistake whatever the log holds: said first.
    const thread = options.thread === undefined ? undefined : checkThreadLink(runId, options.thread, expectedSeq, events[0])
    this.tx.append.immediate(runId, events, expectedSeq, options, thread)
  }

  private appendInTx(runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions, thread?: ThreadAppend): void {
    const row = this.sql.run.get(runId)
    const last = row?.last_seq ?? 0
    // The lease first: "another worker owns the run" says more than "you are behind".
    if (options.lease && !row && options.lease.token !== 1)
      throw new CordageError('lease_lost', `run ${runId} is new: its first lease has token 1, not ${options.lease.token}`)
    if (options.lease && row && (row.lease_released || row.lease_token !== options.lease.token)) {
      throw new CordageError(
        'lease_lost',
        `run ${runId}: worker ${options.lease.worker} (lease ${options.lease.token}) no longer owns it${row && !row.lease_released ? `; ${row.lease_worker} does (lease ${row.lease_token})` : ''}`,
      )
    }
    if (last !== expectedSeq)
      throw new CordageError('seq_conflict', `run ${runId}: writer expected last seq ${expectedSeq}, store has ${last}`)
    events.forEach((event, i) => {
      if (event.seq !== expectedSeq + i + 1 || event.runId !== runId) {
        throw new CordageError(
          'invalid_event',
          `run ${runId}: batch item ${i} has seq ${event.seq} of run ${event.runId}, expected seq ${expectedSeq + i + 1}`,
        )
      }
    })
    if (!row && events[0]?.type !== 'run/start')
      throw new CordageError('invalid_event', `run ${runId}: the first event must be run/start, got ${events[0]?.type}`)
    // The turn is checked (and a new thread created) in this transaction: a refusal rolls back everything.
    if (thread) this.threadRows.join(thread)
    for (const write of options.effects ?? []) this.writeEffect(write)
    // Each event is chained to the one before over the exact text stored (core/kit/store-kit.ts): one hash
    // per event, nothing serialised again. A run stored before chaining continues from the empty link.
    // The link is kept as the digest's 32 bytes (half the hex text: the chain adds ~35 bytes an event).
    let link = this.chain && expectedSeq > 0 ? (hex(this.sql.chainAt.get(runId, expectedSeq)?.chain) ?? '') : ''
    for (const event of events) {
      const body = JSON.stringify(event)
      if (this.chain) link = chainHash(link, body, this.chainKey)
      try {
        this.sql.insertEvent.run(runId, event.seq, event.type, body, this.chain ? Buffer.from(link, 'hex') : null)
      } catch (error) {
        // The run's last seq said this seq was free: a row was put there behind the store's back.
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
          throw storeCorrupt(
            runId,
            event.seq,
            `a row for seq ${event.seq} exists beyond the run's last seq (${expectedSeq}): it was written behind the store's back`,
          )
        throw error
      }
    }

    let summary = row ? summaryOf(row) : undefined
    for (const event of events) summary = summarize(summary, event)
    const values = {
      runId,
      agent: summary!.agent,
      task: summary!.task,
      status: summary!.status,
      failureCode: summary!.failureCode ?? null,
      lastSeq: summary!.lastSeq,
      createdAt: summary!.createdAt,
      updatedAt: summary!.updatedAt,
    }
    if (row) this.sql.updateRun.run(values)
    else
      try {
        this.sql.insertRun.run({ ...values, threadId: thread?.id ?? null, turn: thread?.turn ?? null })
      } catch (error) {
        // The turn was checked free in this transaction: only a row written behind the store's back takes it.
        if (thread && (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
          throw new CordageError('thread_busy', `thread ${thread.id} has a turn ${thread.turn} already`, {
            data: { threadId: thread.id, turn: thread.turn },
          })
        throw error
      }
    if (!row && options.lease) this.sql.firstLease.run({ runId, worker: options.lease.worker, expires: options.lease.expiresAt })
    if (events.some((e) => e.type === 'run/end')) this.sql.clearCancel.run(runId)
    if (options.snapshot) {
      // Linked to the chain at its seq (core/kit/store-kit.ts), so a resume can tell it is the state written.
      const state = JSON.stringify(options.snapshot.state)
      this.sql.upsertSnapshot.run(
        runId,
        events[events.length - 1].seq,
        options.snapshot.version,
        state,
        this.chain ? Buffer.from(snapshotLink(link, state, this.chainKey), 'hex') : null,
      )
    }
  }

  private writeEffect(write: EffectWrite) {
    const existing = this.sql.effect.get(write.key)
    if (write.op === 'outcome') {
      if (!existing) throw new CordageError('invalid_event', `outcome for idempotency key ${write.key}, which has no intent`)
      this.sql.effectOutcome.run({
        key: write.key,
        status: write.status,
        receipt: json(write.receipt),
        output: json(write.output),
        observation: typeof write.observation === 'string' ? write.observation : null,
        at: write.at,
      })
      return
    }
    if (!existing) {
      this.sql.insertEffect.run(write)
      return
    }
    const effect = effectOf(existing)
    if (effect.argsHash !== write.argsHash) {
      throw new CordageError(
        'idempotency_conflict',
        `idempotency key ${write.key} was used by ${effect.runId} ${effect.actionId} with arguments ${effect.argsHash}, not ${write.argsHash}`,
        { data: effect },
      )
    }
    const ours = effect.runId === write.runId && effect.actionId === write.actionId
    const free = effect.status === 'failed' || effect.status === 'not_committed'
    if (!ours && !free && !(write.takeover && existing.status === 'pending'))
      throw new CordageError(
        'effect_exists',
        `idempotency key ${write.key} belongs to ${effect.runId} ${effect.actionId} (${effect.status})`,
        { data: effect },
      )
    this.sql.retryEffect.run(write)
  }

  // Reads check what they return (core/kit/store-kit.ts): a body that does not parse, an event under
  // another seq or of another run, or a gap up to the run's last seq is store_corrupt, by seq. The run's
  // last seq is read before its events, so a concurrent append can only add rows, never fake a gap.
  // Each row's link is recomputed from its body, on from the link of the event the read starts after,
  // and a snapshot is checked against its link: an edit `verify` finds is never resumed from.
  async load(runId: string): Promise<RunEvent[]> {
    const { last_seq } = this.need(runId)
    return this.eventsAfter(runId, 0, last_seq)
  }

  async loadRun(runId: string): Promise<StoredRun> {
    const { last_seq } = this.need(runId)
    // The snapshot with the link of the event at its seq, in one statement.
    const snap = this.sql.snapshot.get(runId)
    if (!snap) return { events: this.eventsAfter(runId, 0, last_seq) }
    if (!this.chain)
      return {
        snapshot: { seq: snap.seq, version: snap.version, state: snapshotFromRow(runId, snap.seq, snap.state) },
        events: this.eventsAfter(runId, snap.seq, last_seq),
      }
    const eventLink = snap.event_seq === null ? undefined : (hex(snap.event_chain) ?? null)
    const snapshot = checkedSnapshot(
      runId,
      { seq: snap.seq, version: snap.version, state: snap.state, chain: hex(snap.chain) ?? null },
      eventLink,
      this.chainKey,
    )
    // checkedSnapshot passed: the event at the snapshot's seq is chained, and its link is where the rows go on.
    return { snapshot, events: this.eventsAfter(runId, snap.seq, last_seq, undefined, eventLink as string) }
  }

  async read(runId: string, options: { after?: number; limit?: number } = {}): Promise<RunEvent[]> {
    const { last_seq } = this.need(runId)
    return this.eventsAfter(runId, options.after ?? 0, last_seq, options.limit)
  }

  /**
   * The events after `after`, checked. Chained on from `startLink` (the link of the event at `after`)
   * when the caller read it already, else from the link read here, after the rows: an append adds the
   * rows after an event only once that event is there, so rows read first never outrun their start.
   */
  private eventsAfter(runId: string, after: number, lastSeq: number, limit?: number, startLink?: string): RunEvent[] {
    const rows = limit === undefined ? this.sql.events.all(runId, after) : this.sql.eventsLimit.all(runId, after, limit)
    // A page that stops at its limit need not reach the last seq.
    const last = limit !== undefined && rows.length >= limit ? undefined : lastSeq
    if (!this.chain) return eventsFromRows(runId, rows, after, last)
    for (const row of rows) row.chain = hex(row.chain) ?? null
    const start: ChainStart = after <= 0 ? { link: '' } : startLink !== undefined ? { link: startLink } : this.chainStart(runId, after)
    return chainedEventsFromRows(runId, rows as ChainedEventRow[], after, last, start, this.chainKey)
  }

  /** Where a read after `after` picks up the chain: the link of the event there (core/kit/store-kit.ts ChainStart). */
  private chainStart(runId: string, after: number): ChainStart {
    const at = this.sql.chainAt.get(runId, after)
    if (!at) return { link: undefined }
    const link = hex(at.chain)
    if (link !== undefined) return { link }
    // An event without a link (rare: a run stored before the store chained): was one before it chained?
    const before = this.sql.chainedBefore.get(runId, after)?.seq
    return typeof before === 'number' ? { link: null, chainedBefore: before } : { link: null }
  }

  /**
   * Check a run's stored history: numbering, parsing, run ids, and each event's chain hash recomputed
   * from its stored body (core/kit/store-kit.ts). A damaged history is a result (`firstBad`), not an error.
   */
  async verify(runId: string): Promise<HistoryCheck> {
    const { last_seq } = this.need(runId)
    const check = new HistoryChecker(runId, this.chainKey)
    // The snapshot first: one read after the rows could be newer than them.
    const snap = this.sql.snapshot.get(runId)
    if (snap) check.snapshot({ seq: snap.seq, version: snap.version, state: snap.state, chain: hex(snap.chain) ?? null })
    for (const row of this.sql.chainRows.iterate(runId)) check.add({ seq: row.seq, body: row.body, chain: hex(row.chain) ?? null })
    return check.finish(last_seq)
  }

  /** The ledger entries a run holds (for `cordage scan`), oldest first. */
  async effectsOf(runId: string): Promise<Effect[]> {
    this.need(runId)
    return this.sql.effectsOf.all(runId).map(effectOf)
  }

  async list(filter: ListFilter = {}): Promise<RunSummary[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.status) {
      where.push('status = ?')
      params.push(filter.status)
    }
    if (filter.agent) {
      where.push('agent = ?')
      params.push(filter.agent)
    }
    params.push(filter.limit ?? 100)
    const rows = this.db
      .prepare(`SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, run_id DESC LIMIT ?`)
      .all(...params) as RunRow[]
    const now = Date.now()
    return rows.map((row) => ({
      ...summaryOf(row),
      owner: !row.lease_released && row.lease_expires > now ? (row.lease_worker ?? undefined) : undefined,
    }))
  }

  async effect(key: string): Promise<Effect | undefined> {
    const row = this.sql.effect.get(key)
    return row && effectOf(row)
  }

  async claim(runId: string, worker: string, ttlMs: number, writer?: StoreWriter): Promise<Lease | undefined> {
    assertKernelWriter(writer, `claim of run ${runId}`)
    return this.tx.claim.immediate(runId, worker, ttlMs)
  }

  private claimInTx(runId: string, worker: string, ttlMs: number): Lease | undefined {
    const row = this.need(runId)
    const now = Date.now()
    if (!row.lease_released && row.lease_expires > now && row.lease_worker !== worker) return undefined
    const expiresAt = now + ttlMs
    const { token } = this.sql.lease.get({ runId, worker, expires: expiresAt }) as { token: number }
    return {
      runId,
      worker,
      token,
      expiresAt,
      previous: row.lease_worker && !row.lease_released && row.lease_worker !== worker ? row.lease_worker : undefined,
    }
  }

  async renew(lease: Lease, ttlMs: number, writer?: StoreWriter): Promise<boolean> {
    assertKernelWriter(writer, `renewal of the lease of run ${lease.runId}`)
    return this.sql.renew.run({ runId: lease.runId, token: lease.token, expires: Date.now() + ttlMs }).changes === 1
  }

  async release(lease: Lease, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `release of the lease of run ${lease.runId}`)
    this.sql.release.run({ runId: lease.runId, token: lease.token })
  }

  async claimNext(worker: string, ttlMs: number, filter: ClaimFilter = {}, writer?: StoreWriter): Promise<Lease | undefined> {
    assertKernelWriter(writer, 'claim of the next run')
    return this.tx.claimNext.immediate(worker, ttlMs, filter)
  }

  private claimNextInTx(worker: string, ttlMs: number, { agents, exclude }: ClaimFilter): Lease | undefined {
    const candidate = this.sql.claimable.all(Date.now()).find((r) => (!agents || agents.includes(r.agent)) && !exclude?.includes(r.run_id))
    return candidate ? this.claimInTx(candidate.run_id, worker, ttlMs) : undefined
  }

  async requestCancel(runId: string, request: CancelRequest, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `cancel request for run ${runId}`)
    this.need(runId)
    this.sql.requestCancel.run({ runId, by: request.by, reason: request.reason ?? null, at: request.at })
  }

  async cancelRequest(runId: string): Promise<CancelRequest | undefined> {
    const row = this.sql.run.get(runId)
    return row?.cancel_at ? { by: row.cancel_by!, reason: row.cancel_reason ?? undefined, at: row.cancel_at } : undefined
  }

  close(): void {
    this.db.close()
  }

  private need(runId: string): RunRow {
    const row = this.sql.run.get(runId)
    if (!row) throw new CordageError('run_not_found', `no run ${runId} in ${this.file}`)
    return row
  }

  async putGrant(grant: ApprovalGrant, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `standing grant ${grant.id}`)
    this.grantRows.put(grant)
  }

  async grants(query: ApprovalGrantQuery): Promise<ApprovalGrant[]> {
    return this.grantRows.list(query)
  }

  async revokeGrant(
    id: string,
    by: string,
    at: number,
    reason: string | undefined,
    writer?: StoreWriter,
  ): Promise<ApprovalGrant | undefined> {
    assertKernelWriter(writer, `revocation of grant ${id}`)
    return this.grantRows.revoke(id, by, at, reason)
  }

  async threadTurns(threadId: string): Promise<ThreadTurn[]> {
    return this.threadRows.turns(checkThreadId(threadId, 'threadTurns'))
  }

  async threads(filter: { agent?: string; limit?: number } = {}): Promise<ThreadSummary[]> {
    return this.threadRows.list(filter)
  }

  async thread(threadId: string): Promise<ThreadSummary | undefined> {
    return this.threadRows.get(checkThreadId(threadId, 'thread'))
  }

  async closeThread(threadId: string, close: { by: string; at: number; reason?: string }, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `close of thread ${threadId}`)
    const checked = checkThreadClose(threadId, close)
    this.threadRows.closeThread(checked.threadId, checked)
  }

  async putArtifact(
    artifact: { runId: string; actionId?: string; bytes: Uint8Array; mediaType: string; visibility?: 'ui' | 'audit' },
    writer?: StoreWriter,
  ): Promise<Omit<StoredArtifact, 'runId' | 'actionId' | 'createdAt'>> {
    assertKernelWriter(writer, `artifact of run ${artifact?.runId}`)
    const input = checkArtifactInput(artifact)
    this.need(input.runId)
    return { ...artifactRefOfStored(this.artifactRows.store(input)), visibility: input.visibility }
  }

  async artifact(ref: string): Promise<StoredArtifact | undefined> {
    return this.artifactRows.get(ref)
  }

  async readArtifact(ref: string, range?: { offset: number; length: number }): Promise<Uint8Array> {
    return this.artifactRows.read(ref, range)
  }

  async artifactsOf(runId: string): Promise<StoredArtifact[]> {
    this.need(runId)
    return this.artifactRows.of(runId)
  }
}

// The kernel writes only through a frozen class (core/kernel/store-writer.ts guardStore): nobody holding the
// store can replace a write method to catch the kernel's writer.
Object.freeze(SqliteStore.prototype)

type Statements = ReturnType<typeof statements>

function statements(db: Database.Database) {
  return {
    run: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE run_id = ?'),
    insertRun: db.prepare(
      'INSERT INTO runs (run_id, agent, task, status, failure_code, last_seq, created_at, updated_at, thread_id, turn) VALUES (@runId, @agent, @task, @status, @failureCode, @lastSeq, @createdAt, @updatedAt, @threadId, @turn)',
    ),
    updateRun: db.prepare(
      'UPDATE runs SET status = @status, failure_code = @failureCode, last_seq = @lastSeq, updated_at = @updatedAt, agent = @agent WHERE run_id = @runId',
    ),
    clearCancel: db.prepare('UPDATE runs SET cancel_by = NULL, cancel_reason = NULL, cancel_at = NULL WHERE run_id = ?'),
    insertEvent: db.prepare('INSERT INTO events (run_id, seq, type, body, chain) VALUES (?, ?, ?, ?, ?)'),
    chainAt: db.prepare<[string, number], { chain: Buffer | string | null }>('SELECT chain FROM events WHERE run_id = ? AND seq = ?'),
    chainRows: db.prepare<[string], { seq: number; body: string; chain: Buffer | string | null }>(
      'SELECT seq, body, chain FROM events WHERE run_id = ? AND seq > 0 ORDER BY seq',
    ),
    chainedBefore: db.prepare<[string, number], { seq: number | null }>(
      'SELECT max(seq) AS seq FROM events WHERE run_id = ? AND seq < ? AND chain IS NOT NULL',
    ),
    events: db.prepare<[string, number], { seq: number; body: string; chain: Buffer | string | null }>(
      'SELECT seq, body, chain FROM events WHERE run_id = ? AND seq > ? ORDER BY seq',
    ),
    eventsLimit: db.prepare<[string, number, number], { seq: number; body: string; chain: Buffer | string | null }>(
      'SELECT seq, body, chain FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    snapshot: db.prepare<
      [string],
      {
        seq: number
        version: number
        state: string
        chain: Buffer | string | null
        event_seq: number | null
        event_chain: Buffer | string | null
      }
    >(
      'SELECT s.seq, s.version, s.state, s.chain, e.seq AS event_seq, e.chain AS event_chain FROM snapshots s LEFT JOIN events e ON e.run_id = s.run_id AND e.seq = s.seq WHERE s.run_id = ?',
    ),
    upsertSnapshot: db.prepare(
      'INSERT INTO snapshots (run_id, seq, version, state, chain) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, version = excluded.version, state = excluded.state, chain = excluded.chain',
    ),
    effect: db.prepare<[string], EffectRow>('SELECT * FROM effects WHERE key = ?'),
    effectsOf: db.prepare<[string], EffectRow>('SELECT * FROM effects WHERE run_id = ? ORDER BY started_at, key'),
    insertEffect: db.prepare(
      "INSERT INTO effects (key, run_id, action_id, tool, args_hash, policy_version, status, attempts, started_at) VALUES (@key, @runId, @actionId, @tool, @argsHash, @policyVersion, 'pending', 1, @at)",
    ),
    retryEffect: db.prepare(
      "UPDATE effects SET run_id = @runId, action_id = @actionId, policy_version = @policyVersion, status = 'pending', attempts = attempts + 1, ended_at = NULL WHERE key = @key",
    ),
    effectOutcome: db.prepare(
      'UPDATE effects SET status = @status, receipt = @receipt, output = @output, observation = @observation, ended_at = @at WHERE key = @key',
    ),
    lease: db.prepare(
      'UPDATE runs SET lease_worker = @worker, lease_token = lease_token + 1, lease_expires = @expires, lease_released = 0 WHERE run_id = @runId RETURNING lease_token AS token',
    ),
    renew: db.prepare('UPDATE runs SET lease_expires = @expires WHERE run_id = @runId AND lease_token = @token AND lease_released = 0'),
    release: db.prepare('UPDATE runs SET lease_released = 1 WHERE run_id = @runId AND lease_token = @token'),
    claimable: db.prepare<[number], { run_id: string; agent: string }>(
      `SELECT run_id, agent FROM runs WHERE status IN ('RUNNING', 'CANCELLING') AND (lease_released = 1 OR lease_expires <= ?) ORDER BY created_at, run_id`,
    ),
    firstLease: db.prepare(
      'UPDATE runs SET lease_worker = @worker, lease_token = 1, lease_expires = @expires, lease_released = 0 WHERE run_id = @runId',
    ),
    requestCancel: db.prepare(
      'UPDATE runs SET cancel_by = @by, cancel_reason = @reason, cancel_at = @at WHERE run_id = @runId AND cancel_at IS NULL',
    ),
  }
}

function summaryOf(row: RunRow): RunSummary {
  return {
    runId: row.run_id,
    agent: row.agent,
    task: row.task,
    status: row.status as RunStatus,
    failureCode: (row.failure_code ?? undefined) as RunSummary['failureCode'],
    lastSeq: row.last_seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.thread_id !== null ? { threadId: row.thread_id, turn: row.turn ?? undefined } : {}),
  }
}

function effectOf(row: EffectRow): Effect {
  return {
    key: row.key,
    runId: row.run_id,
    actionId: row.action_id,
    tool: row.tool,
    argsHash: row.args_hash,
    policyVersion: row.policy_version,
    status: row.status as Effect['status'],
    attempts: row.attempts,
    receipt: parsed(row, 'receipt'),
    output: parsed(row, 'output'),
    ...(row.observation === null ? {} : { observation: row.observation }),
    startedAt: row.started_at,
    endedAt: row.ended_at ?? undefined,
  }
}

/** A JSON column of a ledger entry; one that does not parse is store_corrupt, naming the key. */
function parsed(row: EffectRow, column: 'receipt' | 'output'): unknown {
  const text = row[column]
  if (text === null) return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw new CordageError(
      'store_corrupt',
      `the ledger entry for idempotency key ${row.key} (run ${row.run_id} ${row.action_id}): its ${column} is not valid JSON; the store was damaged or edited after it was written`,
      { data: { key: row.key, runId: row.run_id, problem: `${column} is not valid JSON` } },
    )
  }
}

/** A stored link as hex: the store writes the digest's bytes; a link stored as text is taken as it is. */
function hex(chain: Buffer | string | null | undefined): string | undefined {
  return chain === null || chain === undefined ? undefined : typeof chain === 'string' ? chain : chain.toString('hex')
}

function json(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}
