/**
 * An append-only event log per run, in memory. The summary of each run is kept up to date on append,
 * so listing runs never replays logs.
 */
import { CordageError, summarize, type ListFilter, type RunEvent, type RunSummary, type StoreService } from 'cordage'

export class MemoryStore implements StoreService {
  private logs = new Map<string, RunEvent[]>()
  private summaries = new Map<string, RunSummary>()

  constructor(private maxEventsPerRun: number) {}

  /** Synchronous: memory is as durable as it gets, and the loop skips an await when nothing is returned. */
  append(runId: string, events: readonly RunEvent[], expectedSeq: number): void {
    const log = this.logs.get(runId)
    const last = log ? log.length : 0
    if (last !== expectedSeq) {
      throw new CordageError('seq_conflict', `run ${runId}: writer expected last seq ${expectedSeq}, store has ${last}`)
    }
    events.forEach((event, i) => {
      if (event.seq !== expectedSeq + i + 1 || event.runId !== runId) {
        throw new CordageError('invalid_event', `run ${runId}: batch item ${i} has seq ${event.seq} of run ${event.runId}, expected seq ${expectedSeq + i + 1}`)
      }
    })
    if (last + events.length > this.maxEventsPerRun) {
      throw new CordageError('invalid_event', `run ${runId}: more than ${this.maxEventsPerRun} events (store-memory maxEventsPerRun)`)
    }
    if (!log) {
      if (events[0]?.type !== 'run/start') throw new CordageError('invalid_event', `run ${runId}: the first event must be run/start, got ${events[0]?.type}`)
      this.logs.set(runId, [...events])
    } else {
      for (const event of events) log.push(event)
    }
    let summary = this.summaries.get(runId)
    for (const event of events) summary = summarize(summary, event)
    this.summaries.set(runId, summary!)
  }

  async load(runId: string): Promise<RunEvent[]> {
    return [...this.log(runId)]
  }

  async read(runId: string, options: { after?: number; limit?: number } = {}): Promise<RunEvent[]> {
    const after = options.after ?? 0
    return this.log(runId).slice(after, options.limit === undefined ? undefined : after + options.limit)
  }

  async list(filter: ListFilter = {}): Promise<RunSummary[]> {
    const out: RunSummary[] = []
    for (const summary of this.summaries.values()) {
      if (filter.status && summary.status !== filter.status) continue
      if (filter.agent && summary.agent !== filter.agent) continue
      out.push({ ...summary })
    }
    out.sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1))
    return out.slice(0, filter.limit ?? 100)
  }

  private log(runId: string): RunEvent[] {
    const log = this.logs.get(runId)
    if (!log) throw new CordageError('run_not_found', `no run ${runId} in store-memory (it keeps runs only while this process lives)`)
    return log
  }
}
