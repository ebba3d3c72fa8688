/**
 * @module thread-budget
 * A thread's token and cost budgets (`budgets.thread`) hold over all its turns: what the turns before
 * used (run/start `thread.usedBefore`) plus what this turn used so far. The meter checks them at the
 * same boundaries as the run's own (core/kernel/meter.ts); the turn then ends STOPPED
 * `thread_budget_exceeded`. The turn budget (`maxTurns`) is checked before a turn starts
 * (core/kernel/thread-start.ts).
 *
 * What the turns before used is summed when a turn starts, from the logs: the previous turn's own
 * model calls and every child run it started, whatever their status, also those that ended after the
 * turn did (a cancel cuts the call that waits for a child short; a crash leaves it open). The host's
 * agents service finds the children in their agents' stores (`spent`); a child still going, or a log
 * that cannot be read, refuses the next turn rather than giving it the thread's whole budget.
 */
import type { RunStatus, Usage } from '../contracts/data.ts'
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { AgentDirectory, RunSpending } from '../contracts/services/agents.ts'
import type { RunState } from '../contracts/state.ts'
import { readService, type Context } from './cordis.ts'
import { isWaiting } from './status.ts'

/** What one run's log records: its own spending, each call's, and what it needs to find its children. */
export interface RecordedSpending {
  /** The agents that drove the run, in order (run/start, then each run/handoff): whose children it may have. */
  agents: string[]
  parent?: { runId: string; actionId: string }
  status: RunStatus
  /** Its own model calls and compactions. */
  own: Usage
  /** What each call reported when it ended (tool/end `usage`), by action id. */
  calls: Map<string, Usage>
  /** The actions that started (tool/start): only a call that ran can have started a child run. */
  started: string[]
}

const zero = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0 })
const plus = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  costUsd: a.costUsd + b.costUsd,
})

/** Read a run's log for what it spent: the same events the reducer adds to `usage`, kept apart by call. */
export function recordedSpending(events: readonly RunEvent[]): RecordedSpending {
  const out: RecordedSpending = { agents: [], status: 'CREATED', own: zero(), calls: new Map(), started: [] }
  const started = new Set<string>()
  for (const event of events) {
    if (event.type === 'run/start') {
      const d = (event as RunEvent<'run/start'>).data
      out.agents.push(d.agent)
      if (d.parent) out.parent = { runId: d.parent.runId, actionId: d.parent.actionId }
      out.status = 'RUNNING'
    } else if (event.type === 'run/handoff') out.agents.push((event as RunEvent<'run/handoff'>).data.to)
    else if (event.type === 'run/paused' || event.type === 'run/end') out.status = (event as RunEvent<'run/end'>).data.status
    else if (event.type === 'run/resumed') out.status = 'RUNNING'
    else if (event.type === 'run/cancel-requested') out.status = 'CANCELLING'
    else if (event.type === 'step/model-response') out.own = plus(out.own, (event as RunEvent<'step/model-response'>).data.usage)
    else if (event.type === 'compaction/end') {
      const u = (event as RunEvent<'compaction/end'>).data.usage
      if (u) out.own = plus(out.own, u)
    } else if (event.type === 'tool/start' && event.actionId && !started.has(event.actionId)) {
      started.add(event.actionId)
      out.started.push(event.actionId)
    } else if (event.type === 'tool/end' && event.actionId) {
      const u = (event as RunEvent<'tool/end'>).data.usage
      if (u) out.calls.set(event.actionId, plus(out.calls.get(event.actionId) ?? zero(), u))
    }
  }
  return out
}

/**
 * A run's spending with its children's: its own, plus for each call the larger (per figure) of what
 * the call reported and what its child runs recorded. A child that ended before its call returned was
 * reported by the call (spawn_agent's `usage`) and is in its own log too: counted once. One that the
 * call never reported (the call was cut short by a cancel, a crash, a neighbour that ended the run, or
 * it waited on the child) counts by its log alone.
 */
export function withChildren(run: RecordedSpending, children: ReadonlyMap<string, Usage>): Usage {
  let total = run.own
  for (const id of new Set([...run.calls.keys(), ...children.keys()])) {
    const call = run.calls.get(id) ?? zero()
    const child = children.get(id) ?? zero()
    total = plus(total, {
      inputTokens: Math.max(call.inputTokens, child.inputTokens),
      outputTokens: Math.max(call.outputTokens, child.outputTokens),
      costUsd: Math.max(call.costUsd, child.costUsd),
    })
  }
  return total
}

/**
 * What turn `turn` (a run that has ended) spent, with every run it started, whatever their status:
 * from the host's agents service, which reads each child's log in its agent's store. Without that
 * service no run can have started a child, so the turn's own record is all there is; a service that
 * cannot say while the agent may start children leaves it unknown (`thread_spending_unknown`).
 */
export async function turnSpending(ctx: Context, turn: RunState): Promise<RunSpending> {
  const agents = readService<AgentDirectory>(ctx, 'agents')?.value
  if (typeof agents?.spent === 'function') return agents.spent(turn.runId)
  if (agents && (typeof agents.reach !== 'function' || agents.reach().spawns.length > 0))
    throw new CordageError(
      'thread_spending_unknown',
      `the agents service (contract before 1.3.0) cannot say what the children of run ${turn.runId} spent`,
    )
  return { usage: { ...turn.usage }, open: [] }
}

/**
 * What the ended turn `thread.turn` spent, children included (`spent`: {@link turnSpending}). A child
 * still going may spend more: the thread is busy until it ends (`thread_busy`, naming it). Spending
 * that cannot be read refuses the next turn (`thread_spending_unknown`): it never counts as 0.
 */
export async function spentByTurn(
  thread: { id: string; turn: number },
  run: RunState,
  spent: (turn: RunState) => Promise<RunSpending>,
): Promise<Usage> {
  const { id, turn } = thread
  let spending: RunSpending
  try {
    spending = await spent(run)
  } catch (error) {
    const why = CordageError.is(error) ? `${error.code}: ${error.message}` : String(error)
    throw new CordageError(
      'thread_spending_unknown',
      `thread ${id}: what turn ${turn} (run ${run.runId}) spent cannot be determined (${why}); the next turn is refused rather than given the thread's budget: repair what is named, or start a new thread`,
    )
  }
  const child = spending.open.find((r) => r.runId !== run.runId)
  if (child) {
    const cancel = `cordage cancel ${child.runId} --agent ${child.agent}`
    const todo = isWaiting(child.status)
      ? `approve, answer or reconcile what it waits for, or cancel it (${cancel})`
      : `let it end, resume it if its process died (cordage resume ${child.runId} --agent ${child.agent}) or cancel it (${cancel})`
    throw new CordageError(
      'thread_busy',
      `thread ${id}: turn ${turn} (run ${run.runId}) ended ${run.status}, but its child run ${child.runId} (agent ${child.agent}) is ${child.status} and may still spend: ${todo} first`,
    )
  }
  return spending.usage
}
