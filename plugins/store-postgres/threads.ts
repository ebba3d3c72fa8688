/**
 * Threads in PostgreSQL (store contract 2.3.0). A run's thread and turn are columns of its run row
 * (the unique index `runs_thread_turn` keeps one run per turn); the `threads` row holds the thread's
 * agent and its close. A new turn locks the thread's row (`FOR UPDATE`) in the append transaction
 * before it looks at the turns, so two workers adding a turn to one thread take turns: the second
 * sees the first's run once it committed, and is refused. Two first turns race on the thread's
 * primary key: the second waits for the first to commit, then finds the thread there.
 */
import type pg from 'pg'
import {
  CordageError,
  checkedThreadRow,
  checkedThreadTurns,
  threadListLimit,
  threadRefusal,
  type StoredThreadRow,
  type StoredTurnRow,
  type ThreadAppend,
  type ThreadSummary,
  type ThreadTurn,
} from 'cordage'

type Query = (sql: string, params: unknown[]) => Promise<{ rows: any[]; rowCount: number | null }>

// The aggregate of a thread's runs: its times follow them; the last turn's run and status.
const summary = `
  SELECT t.thread_id AS "threadId", t.agent AS agent, t.closed_by AS "closedBy", t.closed_at AS "closedAt",
    t.closed_reason AS "closedReason", count(r.run_id) AS turns, min(r.created_at) AS "createdAt",
    max(r.updated_at) AS "updatedAt",
    (SELECT l.run_id FROM runs l WHERE l.thread_id = t.thread_id ORDER BY l.turn DESC LIMIT 1) AS "lastRunId",
    (SELECT l.status FROM runs l WHERE l.thread_id = t.thread_id ORDER BY l.turn DESC LIMIT 1) AS "lastStatus"
  FROM threads t JOIN runs r ON r.thread_id = t.thread_id`

export class PostgresThreads {
  constructor(private query: Query) {}

  /** In the append transaction (client `c`), before the run is written: refuse the turn, or create the thread for turn 1. */
  async join(c: pg.PoolClient, link: ThreadAppend): Promise<void> {
    if (link.turn === 1) {
      const created = await c.query('INSERT INTO threads (thread_id, agent) VALUES ($1, $2) ON CONFLICT (thread_id) DO NOTHING', [
        link.id,
        link.agent,
      ])
      if (created.rowCount === 1) return
    }
    const thread = (
      await c.query<{ agent: string; closed_at: string | null }>('SELECT agent, closed_at FROM threads WHERE thread_id = $1 FOR UPDATE', [
        link.id,
      ])
    ).rows[0]
    // Read after the lock: READ COMMITTED gives each statement a new snapshot, so a turn committed by the holder before is seen.
    const turns = thread
      ? (
          await c.query<{ turn: number; run_id: string; status: string }>(
            'SELECT turn, run_id, status FROM runs WHERE thread_id = $1 AND turn IN ($2, $3)',
            [link.id, link.turn, link.turn - 1],
          )
        ).rows
      : []
    const taken = turns.find((t) => t.turn === link.turn)
    const previous = turns.find((t) => t.turn === link.turn - 1)
    const refusal = threadRefusal(
      link,
      thread && {
        agent: thread.agent,
        closed: thread.closed_at !== null,
        taken: taken?.run_id,
        previous: previous && { runId: previous.run_id, status: previous.status as ThreadTurn['status'] },
      },
    )
    if (refusal) throw refusal
    // Turn 1 of a thread that did not exist was created above; no other case gets here without a thread.
    if (!thread) throw new CordageError('thread_busy', `thread ${link.id} could not be created`, { data: { threadId: link.id } })
  }

  async turns(threadId: string): Promise<ThreadTurn[]> {
    const rows = (
      await this.query(
        'SELECT turn, run_id AS "runId", agent, task, status, failure_code AS "failureCode", created_at AS "createdAt", updated_at AS "updatedAt" FROM runs WHERE thread_id = $1 ORDER BY turn',
        [threadId],
      )
    ).rows as StoredTurnRow[]
    return checkedThreadTurns(threadId, rows)
  }

  async get(threadId: string): Promise<ThreadSummary | undefined> {
    const row = (await this.query(`${summary} WHERE t.thread_id = $1 GROUP BY t.thread_id`, [threadId])).rows[0] as
      | StoredThreadRow
      | undefined
    return row && checkedThreadRow(row)
  }

  async list(filter: { agent?: string; limit?: number } = {}): Promise<ThreadSummary[]> {
    const limit = threadListLimit(filter.limit)
    const rows = (
      filter.agent === undefined
        ? await this.query(`${summary} GROUP BY t.thread_id ORDER BY "updatedAt" DESC, t.thread_id DESC LIMIT $1`, [limit])
        : await this.query(`${summary} WHERE t.agent = $1 GROUP BY t.thread_id ORDER BY "updatedAt" DESC, t.thread_id DESC LIMIT $2`, [
            filter.agent,
            limit,
          ])
    ).rows as StoredThreadRow[]
    return rows.map(checkedThreadRow)
  }

  async close(threadId: string, close: { by: string; at: number; reason?: string }): Promise<void> {
    const closed = await this.query(
      'UPDATE threads SET closed_by = $2, closed_at = $3, closed_reason = $4 WHERE thread_id = $1 AND closed_at IS NULL',
      [threadId, close.by, close.at, close.reason ?? null],
    )
    if (closed.rowCount === 1) return
    // Closed already (the first close is kept), or no such thread.
    if (!(await this.query('SELECT 1 FROM threads WHERE thread_id = $1', [threadId])).rows.length)
      throw new CordageError('thread_not_found', `no thread ${threadId} in this store`, { data: { threadId } })
  }
}
