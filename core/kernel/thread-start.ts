/**
 * @module thread-start
 * Starting a run as the next turn of a thread (decision 0017: a thread is a series of runs, one per
 * turn). Everything is checked before anything is recorded: the store holds threads, the thread is
 * open, its last turn has ended, and the thread's turn budget allows one more. The store then makes
 * the turn gap-free atomically with the run's first append (`AppendOptions.thread`): of two processes
 * adding the same turn, one gets `thread_busy` and nothing of its run is written. What the turns before
 * spent is read from the logs of the last turn and of the runs it started (core/kernel/thread-budget.ts).
 */
import type { Usage } from '../contracts/data.ts'
import { CordageError } from '../contracts/errors.ts'
import type { StoreService } from '../contracts/services/store.ts'
import type { RunState } from '../contracts/state.ts'
import type { ThreadLink } from '../contracts/data.ts'
import type { Budgets } from './budget.ts'
import { isTerminal } from './status.ts'
import { historyOf, turnIdOf, type ThreadHistory } from './thread-history.ts'
import type { RunSpending } from '../contracts/services/agents.ts'
import { spentByTurn } from './thread-budget.ts'

/** What a thread id may look like: it is typed by people and printed in commands. */
const ThreadIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

export interface ThreadStart {
  link: ThreadLink
  /** The turns before, as this turn sees them (absent for turn 1). */
  history?: ThreadHistory
  /** What the run's first append claims (AppendOptions.thread). */
  claim: { id: string; turn: number; agent: string }
}

/** `id` when it is a usable thread id; `invalid_input` otherwise. */
export function checkThreadId(id: unknown): string {
  if (typeof id !== 'string' || !ThreadIdPattern.test(id))
    throw new CordageError(
      'invalid_input',
      `thread id ${JSON.stringify(id)} is not usable: 1 to 128 characters, letters, digits and . _ : - (starting with a letter or digit)`,
    )
  return id
}

/** Throw `feature_unsupported` unless the store keeps threads. */
export function checkThreadStore(store: StoreService, agent: string): void {
  if (typeof store.threadTurns !== 'function' || typeof store.thread !== 'function')
    throw new CordageError(
      'feature_unsupported',
      `the store of agent "${agent}" does not keep threads (store contract 2.3.0 threadTurns/thread): use store-sqlite, store-postgres or store-memory at a version that has them`,
    )
}

/**
 * Work out the next turn of thread `id` for `agent`: which turn, the run before, what the thread used
 * so far, and the history the turn sees. `load` rebuilds a run's state from the store; `spent` says
 * what an ended turn spent with the runs it started (core/kernel/thread-budget.ts: turnSpending).
 * @throws CordageError thread_closed, thread_busy, thread_budget_exceeded, thread_spending_unknown, feature_unsupported
 */
export async function prepareThreadStart(
  store: StoreService,
  id: string,
  agent: string,
  budgets: Budgets,
  load: (runId: string) => Promise<RunState>,
  spent: (turn: RunState) => Promise<RunSpending>,
): Promise<ThreadStart> {
  checkThreadId(id)
  checkThreadStore(store, agent)
  const thread = await store.thread!(id)
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
  const turns = await store.threadTurns!(id)
  const last = turns[turns.length - 1]
  const turn = (last?.turn ?? 0) + 1
  const maxTurns = budgets.thread?.maxTurns
  let previous: RunState | undefined
  if (last) {
    previous = await load(last.runId)
    if (!isTerminal(previous.status)) throw busy(id, last.turn, previous)
  }
  if (maxTurns !== undefined && turn > maxTurns)
    throw new CordageError(
      'thread_budget_exceeded',
      `thread ${id} has had ${turn - 1} turn(s), its budget allows ${maxTurns} (budgets.thread.maxTurns): start a new thread`,
    )
  const usedBefore = previous
    ? addUsage(previous.thread?.usedBefore, await spentByTurn({ id, turn: last!.turn }, previous, spent))
    : { inputTokens: 0, outputTokens: 0, costUsd: 0 }
  // A thread whose tokens or cost are spent takes no turn that could only stop at once (and use up a turn number).
  const exhausted = threadSpent(budgets.thread, usedBefore)
  if (exhausted)
    throw new CordageError(
      'thread_budget_exceeded',
      `thread ${id} has used ${exhausted}: start a new thread, or raise budgets.thread in the preset (for one run: --set agents.${agent}.budgets.thread.…)`,
    )
  return {
    link: { id, turn, ...(previous ? { previousRunId: previous.runId } : {}), usedBefore },
    history: previous ? historyOf(previous, turn - 1) : undefined,
    claim: { id, turn, agent },
  }
}

/** `thread_busy`, saying which run holds the thread and what to do about it. */
export function busy(id: string, turn: number, run: Pick<RunState, 'runId' | 'status' | 'waiting'>): CordageError {
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

export { turnIdOf }

/** What a thread's budgets say is spent already, in words; undefined while both still hold. */
function threadSpent(thread: Budgets['thread'], used: Usage): string | undefined {
  const tokens = used.inputTokens + used.outputTokens
  if (thread?.maxTokens !== undefined && tokens >= thread.maxTokens)
    return `${tokens} tokens over its turns, its budget allows ${thread.maxTokens} (budgets.thread.maxTokens)`
  if (thread?.maxCostUsd !== undefined && used.costUsd >= thread.maxCostUsd)
    return `$${used.costUsd.toFixed(4)} over its turns, its budget allows $${thread.maxCostUsd} (budgets.thread.maxCostUsd)`
  return undefined
}
