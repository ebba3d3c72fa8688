/**
 * @module threads/turn
 * The next turn of a thread (decision 0017: a thread is a series of runs, one per turn), worked out
 * before anything of its run is recorded: the store keeps threads, the thread is open and this agent's,
 * its last turn has ended (with every child run it started), and the thread's budgets allow one more
 * turn. What comes back is what the kernel records in run/start (the link), in thread/history, and the
 * claim its first append makes: the store gives each turn to one run, gap-free, in that transaction.
 */
import {
  CordageError,
  isTerminal,
  replay,
  replayFrom,
  type Budgets,
  type RunDraft,
  type RunSpending,
  type RunState,
  type StoreService,
  type Usage,
} from 'cordage'
import type { Config } from './manifest.ts'
import { historyOf } from './history.ts'
import { spentByTurn } from './spending.ts'

/** Where the turns before are read: the agent's store, and what an ended turn spent with its children. */
export interface TurnReaders {
  store: StoreService | undefined
  spent: (turn: RunState) => Promise<RunSpending>
}

/**
 * Thread `draft.threadAsked`'s next turn for `agent`.
 * @throws CordageError thread_closed, thread_busy, thread_budget_exceeded, thread_spending_unknown, feature_unsupported, invalid_input
 */
export async function nextTurn(
  draft: Readonly<RunDraft>,
  agent: string,
  readers: TurnReaders,
  config: Config,
): Promise<Required<Pick<RunDraft, 'thread' | 'claim'>> & Pick<RunDraft, 'history'>> {
  const id = draft.threadAsked!
  const store = threadStore(readers.store, agent)
  const thread = await store.thread(id)
  if (thread?.closed)
    throw new CordageError(
      'thread_closed',
      `thread ${id} was closed by ${thread.closed.by}${thread.closed.reason ? ` (${thread.closed.reason})` : ''} and takes no more turns: start a new thread`,
    )
  if (thread && thread.agent !== agent)
    throw new CordageError(
      'invalid_input',
      `thread ${id} belongs to agent "${thread.agent}", not "${agent}": add its turns with that agent`,
    )
  const last = (await store.threadTurns(id)).at(-1)
  const turn = (last?.turn ?? 0) + 1
  let previous: RunState | undefined
  if (last) {
    previous = await load(store, last.runId)
    if (!isTerminal(previous.status)) throw busy(id, last.turn, previous)
  }
  const maxTurns = draft.budgets.thread?.maxTurns
  if (maxTurns !== undefined && turn > maxTurns)
    throw new CordageError(
      'thread_budget_exceeded',
      `thread ${id} has had ${turn - 1} turn(s), its budget allows ${maxTurns} (budgets.thread.maxTurns): start a new thread`,
    )
  const usedBefore = previous
    ? addUsage(previous.thread?.usedBefore, await spentByTurn({ id, turn: last!.turn }, previous, readers.spent))
    : { inputTokens: 0, outputTokens: 0, costUsd: 0 }
  // A thread whose tokens or cost are spent takes no turn that could only stop at once (and use up a turn number).
  const exhausted = threadSpent(draft.budgets.thread, usedBefore)
  if (exhausted)
    throw new CordageError(
      'thread_budget_exceeded',
      `thread ${id} has used ${exhausted}: start a new thread, or raise budgets.thread in the preset (for one run: --set agents.${agent}.budgets.thread.…)`,
    )
  return {
    thread: { id, turn, ...(previous ? { previousRunId: previous.runId } : {}), usedBefore },
    ...(previous ? { history: historyOf(previous, turn - 1, config.historyBytes, config.clipChars) } : {}),
    claim: { id, turn, agent },
  }
}

type ThreadStore = StoreService & Required<Pick<StoreService, 'thread' | 'threadTurns'>>

function threadStore(store: StoreService | undefined, agent: string): ThreadStore {
  if (typeof store?.threadTurns !== 'function' || typeof store.thread !== 'function')
    throw new CordageError(
      'feature_unsupported',
      `the store of agent "${agent}" does not keep threads (store contract 2.3.0 threadTurns/thread): use store-sqlite, store-postgres or store-memory at a version that has them`,
    )
  return store as ThreadStore
}

/** A run's state from the store, from its newest snapshot on (as the kernel rebuilds it). */
async function load(store: StoreService, runId: string): Promise<RunState> {
  const stored = await store.loadRun(runId)
  return replayFrom(runId, stored.snapshot, stored.events) ?? replay(runId, await store.load(runId))
}

/** `thread_busy`, saying which run holds the thread and what to do about it. */
function busy(id: string, turn: number, run: Pick<RunState, 'runId' | 'status' | 'waiting'>): CordageError {
  const todo =
    run.status === 'WAITING_APPROVAL'
      ? `approve or reject its pending action (cordage approve ${run.runId} ${run.waiting?.actionId ?? 'ACTION'}) or cancel it (cordage cancel ${run.runId})`
      : run.status === 'WAITING_USER'
        ? `answer it (cordage resume ${run.runId} --input "...") or cancel it (cordage cancel ${run.runId})`
        : run.status === 'WAITING_RECONCILIATION'
          ? `reconcile it (cordage reconcile ${run.runId} ...) or cancel it (cordage cancel ${run.runId})`
          : `let it end, resume it (cordage resume ${run.runId}) or cancel it (cordage cancel ${run.runId})`
  return new CordageError('thread_busy', `thread ${id}: turn ${turn} (run ${run.runId}) is ${run.status}, not ended: ${todo} first`)
}

function addUsage(before: Usage | undefined, usage: Usage): Usage {
  return {
    inputTokens: (before?.inputTokens ?? 0) + usage.inputTokens,
    outputTokens: (before?.outputTokens ?? 0) + usage.outputTokens,
    costUsd: (before?.costUsd ?? 0) + usage.costUsd,
  }
}

/** What a thread's budgets say is spent already, in words; undefined while both still hold. */
function threadSpent(thread: Budgets['thread'], used: Usage): string | undefined {
  const tokens = used.inputTokens + used.outputTokens
  if (thread?.maxTokens !== undefined && tokens >= thread.maxTokens)
    return `${tokens} tokens over its turns, its budget allows ${thread.maxTokens} (budgets.thread.maxTokens)`
  if (thread?.maxCostUsd !== undefined && used.costUsd >= thread.maxCostUsd)
    return `$${used.costUsd.toFixed(4)} over its turns, its budget allows $${thread.maxCostUsd} (budgets.thread.maxCostUsd)`
  return undefined
}
