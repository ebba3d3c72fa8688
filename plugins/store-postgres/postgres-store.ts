/**
 * The store contract on PostgreSQL. One append is one transaction that locks the run's row first
 * (`SELECT ... FOR UPDATE`): the seq check, the lease check, the ledger writes, the events, the summary
 * and the snapshot cannot interleave with another worker's. Claiming the next run uses
 * `FOR UPDATE SKIP LOCKED`, so concurrent workers each get a different run. Lease times are the
 * database's clock, not the workers': workers on several machines may disagree about the time.
 */
import pg from 'pg'
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
} from 'cordage'
import { PostgresGrants } from './grants.ts'
import { PostgresThreads } from './threads.ts'
import { PostgresArtifacts } from './artifacts.ts'
import { migrate } from './schema.ts'

const nowMs = `(extract(epoch from clock_timestamp()) * 1000)::bigint`

interface RunRow {
  run_id: string
  agent: string
  task: string
  status: string
  failure_code: string | null
  last_seq: number
  created_at: string
  updated_at: string
  lease_worker: string | null
  lease_token: number
  lease_expires: string
  lease_released: boolean
  cancel_by: string | null
  cancel_reason: string | null
  cancel_at: string | null
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
  started_at: string
  ended_at: string | null
}

export interface PostgresOptions {
  /** The key of the hash chain (HMAC-SHA-256); without it the chain is plain SHA-256. */
  chainKey?: string
  /**
   * `false` stores events without their chain hash. Only to measure what chaining costs
   * (bench/chain.ts): the plugin always chains, and `verify` then reports such events as not chained.
   */
  chain?: boolean
}

/** Rows a verify reads at a time: a long run is checked page by page, not held in memory whole. */
const VerifyPage = 2000

export class PostgresStore implements StoreService {
  readonly shared = true
  private pool: pg.Pool
  private ready: Promise<void>
  private grantRows = new PostgresGrants(
    (sql, params) => this.query(sql, params),
    (body) => this.tx(body),
  )

  private threadRows = new PostgresThreads((sql, params) => this.query(sql, params))
  private artifactRows = new PostgresArtifacts(
    (sql, params) => this.query(sql, params),
    (body) => this.tx(body),
  )

  private readonly chainKey: string | undefined
  private readonly chain: boolean

  constructor(
    url: string | undefined,
    readonly schema: string,
    poolSize: number,
    readonly snapshotEvery: number,
    options: PostgresOptions = {},
  ) {
    this.chainKey = options.chainKey
    this.chain = options.chain !== false
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
      throw new CordageError('plugin_config_invalid', `store-postgres: schema "${schema}" must be a plain lower-case identifier`)
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, options: `-c search_path=${schema}` })
    // An idle connection that dies (server restart) must not take the process down with it.
    this.pool.on('error', () => {})
    this.ready = this.pool.connect().then(async (client) => {
      try {
        await migrate(client, schema)
      } finally {
        client.release()
      }
    })
  }

  /** Resolves when the schema is there (rejects with the connection or migration error). */
  start(): Promise<void> {
    return this.ready
  }

  async append(runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions = {}): Promise<void> {
    assertKernelWriter(options.writer, `append to run ${runId}`)
    // A malformed thread is the caller's mistake whatever the log holds: said first.
    const thread = options.thread === undefined ? undefined : checkThreadLink(runId, options.thread, expectedSeq, events[0])
    await this.tx(async (c) => {
      // With the run's row, the chain hash of its last event: the link the batch continues.
      const row = (
        await c.query<RunRow & { head: string | null }>(
          `SELECT runs.*, (SELECT encode(chain, 'hex') FROM events WHERE events.run_id = runs.run_id AND events.seq = runs.last_seq) AS head FROM runs WHERE run_id = $1 FOR UPDATE`,
          [runId],
        )
      ).rows[0]
      const last = row?.last_seq ?? 0
      // The lease first: "another worker owns the run" says more than "you are behind".
      if (options.lease && !row && options.lease.token !== 1)
        throw new CordageError('lease_lost', `run ${runId} is new: its first lease has token 1, not ${options.lease.token}`)
      if (options.lease && row && (row.lease_released || row.lease_token !== options.lease.token)) {
        throw new CordageError(
          'lease_lost',
          `run ${runId}: worker ${options.lease.worker} (lease ${options.lease.token}) no longer owns it${!row.lease_released ? `; ${row.lease_worker} does (lease ${row.lease_token})` : ''}`,
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

      // The turn is checked (and a new thread created) under the thread's row lock, in this transaction.
      if (thread) await this.threadRows.join(c, thread)

      let summary = row ? summaryOf(row) : undefined
      for (const event of events) summary = summarize(summary, event)
      const s = summary!
      if (!row) {
        const created = await c
          .query(
            // The first lease's lifetime is counted on the database clock, like every other lease time.
            `INSERT INTO runs (run_id, agent, task, status, failure_code, last_seq, created_at, updated_at, lease_worker, lease_token, lease_expires, lease_released, thread_id, turn)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, ${nowMs} + $11, $12, $13, $14) ON CONFLICT (run_id) DO NOTHING`,
            [
              runId,
              s.agent,
              s.task,
              s.status,
              s.failureCode ?? null,
              s.lastSeq,
              s.createdAt,
              s.updatedAt,
              options.lease?.worker ?? null,
              options.lease ? 1 : 0,
              options.lease ? Math.max(0, options.lease.expiresAt - Date.now()) : 0,
              !options.lease,
              thread?.id ?? null,
              thread?.turn ?? null,
            ],
          )
          .catch((error: { code?: string; constraint?: string }) => {
            // The turn was checked free under the thread's lock: only a row written behind the store's back takes it.
            if (thread && error.code === '23505' && error.constraint === 'runs_thread_turn')
              throw new CordageError('thread_busy', `thread ${thread.id} has a turn ${thread.turn} already`, {
                data: { threadId: thread.id, turn: thread.turn },
              })
            throw error
          })
        if (created.rowCount === 0) throw new CordageError('seq_conflict', `run ${runId}: another writer created it first`)
      } else {
        await c.query('UPDATE runs SET status = $2, failure_code = $3, last_seq = $4, updated_at = $5, agent = $6 WHERE run_id = $1', [
          runId,
          s.status,
          s.failureCode ?? null,
          s.lastSeq,
          s.updatedAt,
          s.agent,
        ])
      }
      for (const write of options.effects ?? []) await this.writeEffect(c, write)

      // Each event is chained to the one before over the exact text stored (core/kit/store-kit.ts): one hash
      // per event, nothing serialised again. A run stored before chaining continues from the empty link.
      let link = this.chain ? (row?.head ?? '') : ''
      const values: unknown[] = []
      const rows = events.map((event, i) => {
        const body = JSON.stringify(event)
        if (this.chain) link = chainHash(link, body, this.chainKey)
        values.push(runId, event.seq, event.type, body, this.chain ? link : null)
        // The link is kept as the digest's 32 bytes (half the hex text).
        return `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, decode($${i * 5 + 5}, 'hex'))`
      })
      await c
        .query(`INSERT INTO events (run_id, seq, type, body, chain) VALUES ${rows.join(', ')}`, values)
        .catch((error: { code?: string; constraint?: string }) => {
          // The run's last seq said these seqs were free: a row was put there behind the store's back.
          if (error.code === '23505' && error.constraint === 'events_pkey')
            throw storeCorrupt(
              runId,
              expectedSeq + 1,
              `a row exists beyond the run's last seq (${expectedSeq}): it was written behind the store's back`,
            )
          throw error
        })
      if (events.some((e) => e.type === 'run/end'))
        await c.query('UPDATE runs SET cancel_by = NULL, cancel_reason = NULL, cancel_at = NULL WHERE run_id = $1', [runId])
      if (options.snapshot) {
        // Linked to the chain at its seq (core/kit/store-kit.ts), so a resume can tell it is the state written.
        const state = JSON.stringify(options.snapshot.state)
        await c.query(
          `INSERT INTO snapshots (run_id, seq, version, state, chain) VALUES ($1, $2, $3, $4, decode($5, 'hex'))
          ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, version = excluded.version, state = excluded.state, chain = excluded.chain`,
          [
            runId,
            events[events.length - 1].seq,
            options.snapshot.version,
            state,
            this.chain ? snapshotLink(link, state, this.chainKey) : null,
          ],
        )
      }
    })
  }

  private async writeEffect(c: pg.PoolClient, write: EffectWrite) {
    if (write.op === 'outcome') {
      const updated = await c.query(
        'UPDATE effects SET status = $2, receipt = $3, output = $4, observation = $5, ended_at = $6 WHERE key = $1',
        [
          write.key,
          write.status,
          json(write.receipt),
          json(write.output),
          typeof write.observation === 'string' ? write.observation : null,
          write.at,
        ],
      )
      if (updated.rowCount === 0) throw new CordageError('invalid_event', `outcome for idempotency key ${write.key}, which has no intent`)
      return
    }
    const inserted = await c.query(
      `INSERT INTO effects (key, run_id, action_id, tool, args_hash, policy_version, status, attempts, started_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'pending', 1, $7) ON CONFLICT (key) DO NOTHING`,
      [write.key, write.runId, write.actionId, write.tool, write.argsHash, write.policyVersion, write.at],
    )
    if (inserted.rowCount === 1) return
    const effect = effectOf((await c.query<EffectRow>('SELECT * FROM effects WHERE key = $1 FOR UPDATE', [write.key])).rows[0])
    if (effect.argsHash !== write.argsHash) {
      throw new CordageError(
        'idempotency_conflict',
        `idempotency key ${write.key} was used by ${effect.runId} ${effect.actionId} with arguments ${effect.argsHash}, not ${write.argsHash}`,
        { data: effect },
      )
    }
    const ours = effect.runId === write.runId && effect.actionId === write.actionId
    const free = effect.status === 'failed' || effect.status === 'not_committed'
    if (!ours && !free && !(write.takeover && effect.status === 'pending')) {
      throw new CordageError(
        'effect_exists',
        `idempotency key ${write.key} belongs to ${effect.runId} ${effect.actionId} (${effect.status})`,
        { data: effect },
      )
    }
    await c.query(
      `UPDATE effects SET run_id = $2, action_id = $3, policy_version = $4, status = 'pending', attempts = attempts + 1, ended_at = NULL WHERE key = $1`,
      [write.key, write.runId, write.actionId, write.policyVersion],
    )
  }

  // Reads check what they return (core/kit/store-kit.ts): a body that does not parse, an event under
  // another seq or of another run, or a gap up to the run's last seq is store_corrupt, by seq. The run's
  // last seq is read before its events, so a concurrent append can only add rows, never fake a gap.
  // Each row's link is recomputed from its body, on from the link of the event the read starts after,
  // and a snapshot is checked against its link: an edit `verify` finds is never resumed from.
  async load(runId: string): Promise<RunEvent[]> {
    const lastSeq = await this.need(runId)
    return this.eventsAfter(runId, 0, lastSeq)
  }

  async loadRun(runId: string): Promise<StoredRun> {
    const lastSeq = await this.need(runId)
    const snap = await this.snapshotOf(runId)
    if (!snap) return { events: await this.eventsAfter(runId, 0, lastSeq) }
    if (!this.chain)
      return {
        snapshot: { seq: snap.seq, version: snap.version, state: snapshotFromRow(runId, snap.seq, snap.state) },
        events: await this.eventsAfter(runId, snap.seq, lastSeq),
      }
    const eventLink = snap.event_seq === null ? undefined : snap.event_chain
    const snapshot = checkedSnapshot(runId, snap, eventLink, this.chainKey)
    // checkedSnapshot passed: the event at the snapshot's seq is chained, and its link is where the rows go on.
    return { snapshot, events: await this.eventsAfter(runId, snap.seq, lastSeq, undefined, eventLink as string) }
  }

  /** The run's snapshot with the link of the event at its seq (event_seq null: there is no such event), in one statement. */
  private async snapshotOf(runId: string) {
    return (
      await this.query<{
        seq: number
        version: number
        state: string
        chain: string | null
        event_seq: number | null
        event_chain: string | null
      }>(
        `SELECT s.seq, s.version, s.state, encode(s.chain, 'hex') AS chain, e.seq AS event_seq, encode(e.chain, 'hex') AS event_chain
       FROM snapshots s LEFT JOIN events e ON e.run_id = s.run_id AND e.seq = s.seq WHERE s.run_id = $1`,
        [runId],
      )
    ).rows[0]
  }

  async read(runId: string, options: { after?: number; limit?: number } = {}): Promise<RunEvent[]> {
    const lastSeq = await this.need(runId)
    return this.eventsAfter(runId, options.after ?? 0, lastSeq, options.limit)
  }

  /**
   * Check a run's stored history: numbering, parsing, run ids, and each event's chain hash recomputed
   * from its stored body (core/kit/store-kit.ts), page by page. A damaged history is a result, not an error.
   */
  async verify(runId: string): Promise<HistoryCheck> {
    const lastSeq = await this.need(runId)
    const check = new HistoryChecker(runId, this.chainKey)
    // The snapshot first: one read after the rows could be newer than them.
    const snap = await this.snapshotOf(runId)
    if (snap) check.snapshot({ seq: snap.seq, version: snap.version, state: snap.state, chain: snap.chain })
    for (let after = 0; ; ) {
      const rows = (
        await this.query<{ seq: number; body: string; chain: string | null }>(
          `SELECT seq, body, encode(chain, 'hex') AS chain FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
          [runId, after, VerifyPage],
        )
      ).rows
      for (const row of rows) check.add(row)
      if (rows.length < VerifyPage) break
      after = rows[rows.length - 1].seq
    }
    return check.finish(lastSeq)
  }

  /** The ledger entries a run holds (for `cordage scan`), oldest first. */
  async effectsOf(runId: string): Promise<Effect[]> {
    await this.need(runId)
    return (await this.query<EffectRow>('SELECT * FROM effects WHERE run_id = $1 ORDER BY started_at, key', [runId])).rows.map(effectOf)
  }

  async list(filter: ListFilter = {}): Promise<RunSummary[]> {
    const where: string[] = []
    const params: unknown[] = []
    if (filter.status) {
      params.push(filter.status)
      where.push(`status = $${params.length}`)
    }
    if (filter.agent) {
      params.push(filter.agent)
      where.push(`agent = $${params.length}`)
    }
    params.push(filter.limit ?? 100)
    const rows = (
      await this.query<RunRow & { now: string }>(
        `SELECT *, ${nowMs} AS now FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, run_id DESC LIMIT $${params.length}`,
        params,
      )
    ).rows
    return rows.map((row) => ({
      ...summaryOf(row),
      owner: !row.lease_released && Number(row.lease_expires) > Number(row.now) ? (row.lease_worker ?? undefined) : undefined,
    }))
  }

  async effect(key: string): Promise<Effect | undefined> {
    const row = (await this.query<EffectRow>('SELECT * FROM effects WHERE key = $1', [key])).rows[0]
    return row && effectOf(row)
  }

  async claim(runId: string, worker: string, ttlMs: number, writer?: StoreWriter): Promise<Lease | undefined> {
    assertKernelWriter(writer, `claim of run ${runId}`)
    return this.tx(async (c) => {
      const row = (await c.query<RunRow & { now: string }>(`SELECT *, ${nowMs} AS now FROM runs WHERE run_id = $1 FOR UPDATE`, [runId]))
        .rows[0]
      if (!row) throw new CordageError('run_not_found', `no run ${runId} in PostgreSQL schema ${this.schema}`)
      if (!row.lease_released && Number(row.lease_expires) > Number(row.now) && row.lease_worker !== worker) return undefined
      const updated = (
        await c.query<{ lease_token: number; lease_expires: string }>(
          `UPDATE runs SET lease_worker = $2, lease_token = lease_token + 1, lease_expires = ${nowMs} + $3, lease_released = FALSE WHERE run_id = $1 RETURNING lease_token, lease_expires`,
          [runId, worker, ttlMs],
        )
      ).rows[0]
      return {
        runId,
        worker,
        token: updated.lease_token,
        expiresAt: Number(updated.lease_expires),
        previous: row.lease_worker && !row.lease_released && row.lease_worker !== worker ? row.lease_worker : undefined,
      }
    })
  }

  async renew(lease: Lease, ttlMs: number, writer?: StoreWriter): Promise<boolean> {
    assertKernelWriter(writer, `renewal of the lease of run ${lease.runId}`)
    const result = await this.query(
      `UPDATE runs SET lease_expires = ${nowMs} + $3 WHERE run_id = $1 AND lease_token = $2 AND NOT lease_released`,
      [lease.runId, lease.token, ttlMs],
    )
    return result.rowCount === 1
  }

  async release(lease: Lease, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `release of the lease of run ${lease.runId}`)
    await this.query('UPDATE runs SET lease_released = TRUE WHERE run_id = $1 AND lease_token = $2', [lease.runId, lease.token])
  }

  async claimNext(worker: string, ttlMs: number, filter: ClaimFilter = {}, writer?: StoreWriter): Promise<Lease | undefined> {
    assertKernelWriter(writer, 'claim of the next run')
    const row = (
      await this.query<{ run_id: string; lease_token: number; lease_expires: string; previous: string | null }>(
        `WITH candidate AS (
         SELECT run_id, CASE WHEN lease_released THEN NULL ELSE lease_worker END AS previous FROM runs
         WHERE status IN ('RUNNING', 'CANCELLING') AND (lease_released OR lease_expires <= ${nowMs})
           AND ($3::text[] IS NULL OR agent = ANY($3::text[]))
           AND NOT (run_id = ANY($4::text[]))
         ORDER BY created_at, run_id LIMIT 1 FOR UPDATE SKIP LOCKED)
       UPDATE runs SET lease_worker = $1, lease_token = runs.lease_token + 1, lease_expires = ${nowMs} + $2, lease_released = FALSE
       FROM candidate WHERE runs.run_id = candidate.run_id
       RETURNING runs.run_id, runs.lease_token, runs.lease_expires, candidate.previous`,
        [worker, ttlMs, filter.agents ?? null, filter.exclude ?? []],
      )
    ).rows[0]
    if (!row) return undefined
    return {
      runId: row.run_id,
      worker,
      token: row.lease_token,
      expiresAt: Number(row.lease_expires),
      previous: row.previous && row.previous !== worker ? row.previous : undefined,
    }
  }

  async requestCancel(runId: string, request: CancelRequest, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `cancel request for run ${runId}`)
    await this.need(runId)
    await this.query('UPDATE runs SET cancel_by = $2, cancel_reason = $3, cancel_at = $4 WHERE run_id = $1 AND cancel_at IS NULL', [
      runId,
      request.by,
      request.reason ?? null,
      request.at,
    ])
  }

  async cancelRequest(runId: string): Promise<CancelRequest | undefined> {
    const row = (await this.query<RunRow>('SELECT cancel_by, cancel_reason, cancel_at FROM runs WHERE run_id = $1', [runId])).rows[0]
    return row?.cancel_at ? { by: row.cancel_by!, reason: row.cancel_reason ?? undefined, at: Number(row.cancel_at) } : undefined
  }

  async putGrant(grant: ApprovalGrant, writer?: StoreWriter): Promise<void> {
    assertKernelWriter(writer, `standing grant ${grant.id}`)
    await this.grantRows.put(grant)
  }

  grants(query: ApprovalGrantQuery): Promise<ApprovalGrant[]> {
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

  /** Drop the schema and everything in it (tests and benches that made a throwaway schema). */
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
    await this.threadRows.close(checked.threadId, checked)
  }

  async putArtifact(
    artifact: { runId: string; actionId?: string; bytes: Uint8Array; mediaType: string; visibility?: 'ui' | 'audit' },
    writer?: StoreWriter,
  ): Promise<Omit<StoredArtifact, 'runId' | 'actionId' | 'createdAt'>> {
    assertKernelWriter(writer, `artifact of run ${artifact?.runId}`)
    const input = checkArtifactInput(artifact)
    return { ...artifactRefOfStored(await this.artifactRows.store(input)), visibility: input.visibility }
  }

  async artifact(ref: string): Promise<StoredArtifact | undefined> {
    return this.artifactRows.get(ref)
  }

  async readArtifact(ref: string, range?: { offset: number; length: number }): Promise<Uint8Array> {
    return this.artifactRows.read(ref, range)
  }

  async artifactsOf(runId: string): Promise<StoredArtifact[]> {
    await this.need(runId)
    return this.artifactRows.of(runId)
  }

  async dropSchema(): Promise<void> {
    await this.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`, [])
  }

  async close(): Promise<void> {
    await this.ready.catch(() => {})
    await this.pool.end()
  }

  /**
   * The events after `after`, checked. Chained on from `startLink` (the link of the event at `after`)
   * when the caller read it already; else the event at `after` is read in the same statement as the
   * rows (its link, not its body), so both are of one moment: an append cannot come in between.
   */
  private async eventsAfter(runId: string, after: number, lastSeq: number, limit?: number, startLink?: string): Promise<RunEvent[]> {
    if (!this.chain) {
      const rows =
        limit === undefined
          ? (
              await this.query<{ seq: number; body: string }>('SELECT seq, body FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq', [
                runId,
                after,
              ])
            ).rows
          : (
              await this.query<{ seq: number; body: string }>(
                'SELECT seq, body FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
                [runId, after, limit],
              )
            ).rows
      // A page that stops at its limit need not reach the last seq.
      return eventsFromRows(runId, rows, after, limit !== undefined && rows.length >= limit ? undefined : lastSeq)
    }
    const withStart = after > 0 && startLink === undefined
    const read = (
      await this.query<{ seq: number; body: string | null; chain: string | null }>(
        `SELECT seq, CASE WHEN seq > $2 THEN body END AS body, encode(chain, 'hex') AS chain FROM events
       WHERE run_id = $1 AND seq ${withStart ? '>=' : '>'} $2 ORDER BY seq${limit === undefined ? '' : ' LIMIT $3'}`,
        limit === undefined ? [runId, after] : [runId, after, withStart ? limit + 1 : limit],
      )
    ).rows
    let start: ChainStart = after <= 0 ? { link: '' } : { link: startLink }
    if (withStart) {
      const at = read[0]?.seq === after ? read.shift()! : undefined
      start = !at ? { link: undefined } : at.chain !== null ? { link: at.chain } : await this.unlinkedStart(runId, after)
    }
    const rows = read as ChainedEventRow[]
    // A page that stops at its limit need not reach the last seq.
    return chainedEventsFromRows(
      runId,
      rows,
      after,
      limit !== undefined && rows.length >= limit ? undefined : lastSeq,
      start,
      this.chainKey,
    )
  }

  /** The start of a read after an event without a link (rare: a run stored before chaining): was one before it chained? */
  private async unlinkedStart(runId: string, after: number): Promise<ChainStart> {
    const before = (
      await this.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM events WHERE run_id = $1 AND seq < $2 AND chain IS NOT NULL', [
        runId,
        after,
      ])
    ).rows[0]?.seq
    return typeof before === 'number' ? { link: null, chainedBefore: before } : { link: null }
  }

  /** The run's last seq; `run_not_found` when there is no such run. */
  private async need(runId: string): Promise<number> {
    const row = (await this.query<{ last_seq: number }>('SELECT last_seq FROM runs WHERE run_id = $1', [runId])).rows[0]
    if (!row) throw new CordageError('run_not_found', `no run ${runId} in PostgreSQL schema ${this.schema}`)
    return row.last_seq
  }

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    await this.ready
    return this.pool.query<R>(sql, params)
  }

  private async tx<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ready
    const client = await this.pool.connect()
    try {
      await client.query('BEGIN')
      const result = await body(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
  }
}

// The kernel writes only through a frozen class (core/kernel/store-writer.ts guardStore): nobody holding the
// store can replace a write method to catch the kernel's writer.
Object.freeze(PostgresStore.prototype)

function summaryOf(row: RunRow): RunSummary {
  return {
    runId: row.run_id,
    agent: row.agent,
    task: row.task,
    status: row.status as RunStatus,
    failureCode: (row.failure_code ?? undefined) as RunSummary['failureCode'],
    lastSeq: row.last_seq,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ...(row.thread_id !== null && row.thread_id !== undefined ? { threadId: row.thread_id, turn: row.turn ?? undefined } : {}),
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
    startedAt: Number(row.started_at),
    endedAt: row.ended_at === null ? undefined : Number(row.ended_at),
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

function json(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}
