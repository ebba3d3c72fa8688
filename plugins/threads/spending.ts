/**
 * @module threads/spending
 * What the turns of a thread spent before the next one starts, read from the logs: the last turn's own
 * model calls and compactions and every child run it started (and theirs), whatever way the turn
 * ended, by the host's agents service (`spent`). A child still going, or a log that cannot be read,
 * refuses the next turn (`thread_busy`, `thread_spending_unknown`) rather than give it the thread's
 * whole budget back.
 */
import { CordageError, isWaiting, readService, type AgentDirectory, type RunSpending, type RunState, type Usage } from 'cordage'
import type { Context } from 'cordis'

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
