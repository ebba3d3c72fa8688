/**
 * @module cli/verify-thread
 * Thread membership for `cordage verify`. A store keeps a run's thread and turn as columns of its run
 * row and the thread's agent in a thread row, outside the hash chain; what the chain holds is each
 * turn's `run/start.thread`: the thread, the turn and the run of the turn before (decision 0017). So
 * membership is proved by deriving it from those chained records and comparing it with the rows:
 *
 * - for one run ({@link checkMembership}): the store lists the run in the thread and turn its
 *   run/start names (or in none when it names none), the turn before is the run its run/start follows,
 *   and the thread belongs to the agent the run started as;
 * - for a thread ({@link checkThread}): each turn the store lists is the run whose run/start names that
 *   thread and turn and follows the turn before, the thread's agent is theirs, and no run of the store
 *   says in its run/start that it is a turn of the thread the store does not list.
 *
 * A problem is at seq 1 (the run/start it contradicts) for a run, at a turn for a thread.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { RunSummary, StoreService, ThreadSummary, ThreadTurn } from '../contracts/services/store.ts'
import type { RunProblem } from './verify-artifacts.ts'

/** What a run's chained run/start says of its thread. */
export interface ThreadClaim {
  id: string
  turn: number
  previousRunId?: string
}

/** A thread problem: at the turn it concerns, when there is one. */
export interface ThreadProblem {
  turn?: number
  runId?: string
  problem: string
}

/** run/start's thread: undefined for none, a string saying why when it is malformed. */
export function claimOf(start: RunEvent | undefined): ThreadClaim | undefined | string {
  if (start?.type !== 'run/start') return 'its first event is not run/start'
  const thread = (start.data as { thread?: unknown }).thread
  if (thread === undefined) return undefined
  const t = (typeof thread === 'object' && thread !== null ? thread : {}) as Record<string, unknown>
  if (typeof t.id !== 'string' || !t.id || typeof t.turn !== 'number' || !Number.isSafeInteger(t.turn) || t.turn < 1)
    return 'its run/start names a thread without a usable id and turn'
  if (t.previousRunId !== undefined && typeof t.previousRunId !== 'string') return 'its run/start names a malformed previous run'
  return { id: t.id, turn: t.turn, ...(typeof t.previousRunId === 'string' ? { previousRunId: t.previousRunId } : {}) }
}

const describeClaim = (c: ThreadClaim | undefined) => (c ? `turn ${c.turn} of thread ${c.id}` : 'in no thread')

/** Every run the store lists, by id. */
export async function allRuns(store: StoreService): Promise<Map<string, RunSummary>> {
  return new Map((await store.list({ limit: Number.MAX_SAFE_INTEGER })).map((r) => [r.runId, r]))
}

/** One run's membership: its run/start's claim, and where its rows disagree with it. */
export async function checkMembership(
  store: StoreService,
  runId: string,
  events: readonly RunEvent[],
): Promise<{ thread?: ThreadClaim; problems: RunProblem[] }> {
  const start = events[0]
  const claim = claimOf(start)
  const at = (problem: string): RunProblem => ({ seq: start?.seq ?? 1, problem })
  if (typeof claim === 'string') return { problems: [at(claim)] }
  const thread = claim ? { thread: claim } : {}
  const row = (await allRuns(store)).get(runId)
  if (!row) return { ...thread, problems: [at('the store lists no run row for it (its row was removed)')] }
  const listed = row.threadId !== undefined ? { id: row.threadId, turn: row.turn ?? 0 } : undefined
  if (listed?.id !== claim?.id || listed?.turn !== claim?.turn) {
    const says = claim ? `says ${describeClaim(claim)}` : 'says it is in no thread'
    const lists = listed ? `lists it as ${describeClaim(listed)}` : 'lists it in no thread'
    return { ...thread, problems: [at(`the store ${lists}, but its run/start ${says}`)] }
  }
  if (!claim) return { problems: [] }
  const problems: RunProblem[] = []
  const turns = await turnsOf(store, claim.id)
  if (typeof turns === 'string') problems.push(at(turns))
  else if (claim.turn > 1) {
    const before = turns.find((t) => t.turn === claim.turn - 1)?.runId
    if (before !== claim.previousRunId)
      problems.push(
        at(
          `its run/start says it follows run ${claim.previousRunId ?? '(none)'}, but the store lists ${before ? `run ${before}` : 'no run'} as turn ${claim.turn - 1} of thread ${claim.id}`,
        ),
      )
  }
  const summary = await threadOf(store, claim.id)
  const agent = (start as RunEvent<'run/start'>).data.agent
  if (typeof summary === 'string') problems.push(at(summary))
  else if (summary && summary.agent !== agent)
    problems.push(at(`the store says thread ${claim.id} belongs to agent ${summary.agent}, but its run/start says agent ${agent}`))
  else if (!summary) problems.push(at(`the store has no row for thread ${claim.id} (its agent and close are gone)`))
  return { thread: claim, problems }
}

/** The turns of a thread, or the store's words for why they do not hold together. */
async function turnsOf(store: StoreService, threadId: string): Promise<ThreadTurn[] | string> {
  if (typeof store.threadTurns !== 'function') return 'the store keeps no threads, so its thread cannot be checked'
  try {
    return await store.threadTurns(threadId)
  } catch (error) {
    if (!CordageError.is(error, 'store_corrupt')) throw error
    return error.message
  }
}

async function threadOf(store: StoreService, threadId: string): Promise<ThreadSummary | undefined | string> {
  if (typeof store.thread !== 'function') return 'the store keeps no threads, so its thread cannot be checked'
  try {
    return await store.thread(threadId)
  } catch (error) {
    if (!CordageError.is(error, 'store_corrupt')) throw error
    return error.message
  }
}

export interface ThreadCheck {
  threadId: string
  agent?: string
  closed?: ThreadSummary['closed']
  /** The turns as the store lists them. */
  turns: { turn: number; runId: string }[]
  /** Runs of the store read for their run/start. */
  runsRead: number
  problems: ThreadProblem[]
}

/**
 * A thread's turns compared with the chained run/start of every run of the store; undefined when the
 * store knows nothing of the thread (no row, no turn, no run that says it is one).
 */
export async function checkThread(store: StoreService, threadId: string): Promise<ThreadCheck | undefined> {
  const problems: ThreadProblem[] = []
  const summary = await threadOf(store, threadId)
  if (typeof summary === 'string') problems.push({ problem: summary })
  const listedTurns = await turnsOf(store, threadId)
  if (typeof listedTurns === 'string') problems.push({ problem: listedTurns })
  const turns = typeof listedTurns === 'string' ? [] : listedTurns
  // Every run's first event: a run that says it is a turn of this thread may have been taken out of its rows.
  const starts = new Map<string, RunEvent | undefined>()
  const claims = new Map<string, ThreadClaim>()
  for (const runId of (await allRuns(store)).keys()) {
    let start: RunEvent | undefined
    try {
      ;[start] = await store.read(runId, { limit: 1 })
    } catch (error) {
      if (!CordageError.is(error)) throw error
      problems.push({
        runId,
        problem: `run ${runId} could not be read (error [${error.code}]), so whether it is a turn of this thread is not known: cordage verify ${runId}`,
      })
      continue
    }
    starts.set(runId, start)
    const claim = claimOf(start)
    if (typeof claim === 'object' && claim.id === threadId) claims.set(runId, claim)
  }
  const thread = typeof summary === 'object' ? summary : undefined
  if (!thread && !turns.length && !claims.size) return undefined
  if (!thread && typeof summary !== 'string')
    problems.push({ turn: 1, problem: `the store has no row for thread ${threadId} (its agent and close are gone)` })
  for (const [i, t] of turns.entries()) {
    if (!starts.has(t.runId)) continue // unreadable: said above
    const start = starts.get(t.runId)
    const at = (problem: string) => problems.push({ turn: t.turn, runId: t.runId, problem })
    const claim = claimOf(start)
    if (typeof claim === 'string') at(`run ${t.runId}: ${claim}`)
    else if (!claim) at(`run ${t.runId}'s run/start says it is in no thread`)
    else if (claim.id !== threadId) at(`run ${t.runId}'s run/start says it is ${describeClaim(claim)}, not of ${threadId}`)
    else if (claim.turn !== t.turn) at(`run ${t.runId}'s run/start says it is ${describeClaim(claim)}, not turn ${t.turn}`)
    else if (t.turn > 1 && claim.previousRunId !== turns[i - 1]?.runId)
      at(
        `run ${t.runId}'s run/start says it follows run ${claim.previousRunId ?? '(none)'}, but the store lists run ${turns[i - 1]?.runId} as turn ${t.turn - 1}`,
      )
    const agent = start?.type === 'run/start' ? start.data.agent : undefined
    if (thread && agent !== undefined && agent !== thread.agent)
      at(`the store says the thread belongs to agent ${thread.agent}, but run ${t.runId} started as agent ${agent}`)
  }
  const listed = new Set(turns.map((t) => t.runId))
  for (const [runId, claim] of claims)
    if (!listed.has(runId))
      problems.push({
        turn: claim.turn,
        runId,
        problem: `run ${runId}'s run/start says it is ${describeClaim(claim)}, but the store does not list it there`,
      })
  problems.sort((a, b) => (a.turn ?? Number.MAX_SAFE_INTEGER) - (b.turn ?? Number.MAX_SAFE_INTEGER))
  return {
    threadId,
    ...(thread ? { agent: thread.agent, ...(thread.closed ? { closed: thread.closed } : {}) } : {}),
    turns: turns.map((t) => ({ turn: t.turn, runId: t.runId })),
    runsRead: starts.size,
    problems,
  }
}
