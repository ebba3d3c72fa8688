/**
 * Threads in the SQLite database (store contract 2.3.0). A run's thread and turn are columns of its
 * run row (a unique index keeps one run per turn); the `threads` row holds the thread's agent and
 * its close. The check of a new turn runs inside the append's BEGIN IMMEDIATE transaction, so two
 * connections that race for one turn are serialised: the second sees the first's turn and is refused.
 */
import type Database from 'better-sqlite3'
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

// The aggregate of a thread's runs: its times follow them; the last turn's run and status.
const summary = `
  SELECT t.thread_id AS threadId, t.agent AS agent, t.closed_by AS closedBy, t.closed_at AS closedAt,
    t.closed_reason AS closedReason, count(r.run_id) AS turns, min(r.created_at) AS createdAt,
    max(r.updated_at) AS updatedAt,
    (SELECT l.run_id FROM runs l WHERE l.thread_id = t.thread_id ORDER BY l.turn DESC LIMIT 1) AS lastRunId,
    (SELECT l.status FROM runs l WHERE l.thread_id = t.thread_id ORDER BY l.turn DESC LIMIT 1) AS lastStatus
  FROM threads t JOIN runs r ON r.thread_id = t.thread_id`

export class SqliteThreads {
  private find: Database.Statement<[string], { agent: string; closed_at: number | null }>
  private turn: Database.Statement<[string, number], { run_id: string; status: string }>
  private insert: Database.Statement<[string, string]>
  private turnRows: Database.Statement<[string], StoredTurnRow>
  private one: Database.Statement<[string], StoredThreadRow>
  private close: Database.Statement<[string | null, number, string | null, string]>

  constructor(private db: Database.Database) {
    this.find = db.prepare('SELECT agent, closed_at FROM threads WHERE thread_id = ?')
    this.turn = db.prepare('SELECT run_id, status FROM runs WHERE thread_id = ? AND turn = ?')
    this.insert = db.prepare('INSERT INTO threads (thread_id, agent) VALUES (?, ?)')
    this.turnRows = db.prepare(
      'SELECT turn, run_id AS runId, agent, task, status, failure_code AS failureCode, created_at AS createdAt, updated_at AS updatedAt FROM runs WHERE thread_id = ? ORDER BY turn',
    )
    this.one = db.prepare(`${summary} WHERE t.thread_id = ? GROUP BY t.thread_id`)
    this.close = db.prepare('UPDATE threads SET closed_by = ?, closed_at = ?, closed_reason = ? WHERE thread_id = ? AND closed_at IS NULL')
  }

  /** In the append transaction, before anything is written: refuse the turn, or create the thread for turn 1. */
  join(link: ThreadAppend): void {
    const thread = this.find.get(link.id)
    const taken = thread && this.turn.get(link.id, link.turn)
    const previous = thread && link.turn > 1 ? this.turn.get(link.id, link.turn - 1) : undefined
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
    if (!thread) this.insert.run(link.id, link.agent)
  }

  turns(threadId: string): ThreadTurn[] {
    return checkedThreadTurns(threadId, this.turnRows.all(threadId))
  }

  get(threadId: string): ThreadSummary | undefined {
    const row = this.one.get(threadId)
    return row && checkedThreadRow(row)
  }

  list(filter: { agent?: string; limit?: number } = {}): ThreadSummary[] {
    const limit = threadListLimit(filter.limit)
    const rows = (
      filter.agent === undefined
        ? this.db.prepare(`${summary} GROUP BY t.thread_id ORDER BY updatedAt DESC, t.thread_id DESC LIMIT ?`).all(limit)
        : this.db
            .prepare(`${summary} WHERE t.agent = ? GROUP BY t.thread_id ORDER BY updatedAt DESC, t.thread_id DESC LIMIT ?`)
            .all(filter.agent, limit)
    ) as StoredThreadRow[]
    return rows.map(checkedThreadRow)
  }

  closeThread(threadId: string, close: { by: string; at: number; reason?: string }): void {
    if (!this.find.get(threadId)) throw new CordageError('thread_not_found', `no thread ${threadId} in this store`, { data: { threadId } })
    this.close.run(close.by, close.at, close.reason ?? null, threadId)
  }
}
