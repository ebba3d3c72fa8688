/**
 * Threads in memory: which run is which turn of which thread. A run's status and times live in its
 * summary (the store's), so a thread's status and times follow its runs without being copied.
 */
import {
  CordageError,
  threadListLimit,
  threadRefusal,
  type RunSummary,
  type ThreadAppend,
  type ThreadSummary,
  type ThreadTurn,
} from 'cordage'

interface Thread {
  agent: string
  /** Run ids by turn (turn 1 at index 0). */
  runs: string[]
  closed?: { by: string; at: number; reason?: string }
}

export class MemoryThreads {
  private threads = new Map<string, Thread>()

  constructor(private summary: (runId: string) => RunSummary | undefined) {}

  /** Throws the refusal when the thread does not take the turn now; returns the change to make. */
  prepare(runId: string, link: ThreadAppend): () => void {
    const thread = this.threads.get(link.id)
    const previousRun = thread?.runs[link.turn - 2]
    const previous = previousRun ? this.summary(previousRun) : undefined
    const refusal = threadRefusal(
      link,
      thread && {
        agent: thread.agent,
        closed: !!thread.closed,
        taken: thread.runs[link.turn - 1],
        previous: previous && { runId: previous.runId, status: previous.status },
      },
    )
    if (refusal) throw refusal
    return () => {
      const into = thread ?? { agent: link.agent, runs: [] }
      into.runs[link.turn - 1] = runId
      this.threads.set(link.id, into)
    }
  }

  turns(threadId: string): ThreadTurn[] {
    const thread = this.threads.get(threadId)
    if (!thread) return []
    return thread.runs.map((runId, i) => {
      const s = this.summary(runId)!
      return {
        threadId,
        turn: i + 1,
        runId,
        agent: s.agent,
        task: s.task,
        status: s.status,
        ...(s.failureCode ? { failureCode: s.failureCode } : {}),
        createdAt: s.createdAt,
        updatedAt: s.updatedAt,
      }
    })
  }

  get(threadId: string): ThreadSummary | undefined {
    const thread = this.threads.get(threadId)
    if (!thread) return undefined
    const runs = thread.runs.map((runId) => this.summary(runId)!)
    const last = runs[runs.length - 1]
    return {
      threadId,
      agent: thread.agent,
      turns: runs.length,
      lastRunId: last.runId,
      lastStatus: last.status,
      createdAt: runs[0].createdAt,
      updatedAt: Math.max(...runs.map((r) => r.updatedAt)),
      ...(thread.closed ? { closed: { ...thread.closed } } : {}),
    }
  }

  list(filter: { agent?: string; limit?: number } = {}): ThreadSummary[] {
    const limit = threadListLimit(filter.limit)
    const out: ThreadSummary[] = []
    for (const [id, thread] of this.threads) if (!filter.agent || thread.agent === filter.agent) out.push(this.get(id)!)
    out.sort((a, b) => b.updatedAt - a.updatedAt || (a.threadId < b.threadId ? 1 : -1))
    return out.slice(0, limit)
  }

  close(threadId: string, close: { by: string; at: number; reason?: string }): void {
    const thread = this.threads.get(threadId)
    if (!thread) throw new CordageError('thread_not_found', `no thread ${threadId} in store-memory`, { data: { threadId } })
    thread.closed ??= { by: close.by, at: close.at, ...(close.reason !== undefined ? { reason: close.reason } : {}) }
  }
}
