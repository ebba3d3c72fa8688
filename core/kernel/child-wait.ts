/**
 * @module child-wait
 * A run that waits on a child run (a call of it returned `waitsFor`: its child waits for a person).
 * The run goes on only once the child has ended; a child that ends wakes its parent; cancelling the
 * parent cancels the child first, so the child's pending approval is void before the parent ends. The
 * other agents are reached through the host's `agents` service (core/contracts/services/agents.ts); an
 * agent without it cannot tell whether the child ended, so its waiting run is never resumed.
 */
import { CordageError } from '../contracts/errors.ts'
import type { AgentDirectory } from '../contracts/services/agents.ts'
import type { RunState } from '../contracts/state.ts'
import { readService, type Context } from './cordis.ts'
import type { RunDriver } from './loop.ts'
import { isTerminal, isWaiting } from './status.ts'
import { KernelProducer } from './version.ts'

function directory(ctx: Context): AgentDirectory | undefined {
  const agents = readService<AgentDirectory>(ctx, 'agents')?.value
  return typeof agents?.child === 'function' ? agents : undefined
}

/**
 * Refuse (`child_waiting`) to go on with a run that waits on a child run, unless that child, started
 * by this run, has ended. A run not waiting on a child passes.
 */
export async function checkChildEnded(ctx: Context, state: RunState): Promise<void> {
  const child = state.waiting?.child
  if (!child || !isWaiting(state.status)) return
  const agents = directory(ctx)
  const found = agents ? await agents.child(child.agent, child.runId) : undefined
  if (found && found.parent?.runId === state.runId && isTerminal(found.status)) return
  const why = !agents
    ? `this agent has no agents service to look at it; cancel the run instead`
    : !found
      ? `agent "${child.agent}" has no such run in its store; cancel the run instead`
      : found.parent?.runId !== state.runId
        ? `that run was not started by this one; cancel the run instead`
        : `it is ${found.status}${found.waiting ? ` (${found.waiting.reason})` : ''}; act on it first${found.waiting?.actionId && found.status === 'WAITING_APPROVAL' ? `: cordage approve ${child.runId} ${found.waiting.actionId}` : ''}, and this run goes on when it ends`
  throw new CordageError('child_waiting', `run ${state.runId} waits on its child run ${child.runId} (agent ${child.agent}): ${why}`)
}

/** True when the run waits on a child that has ended already (it ended while the parent was pausing). */
export async function childEndedAlready(ctx: Context, state: RunState): Promise<boolean> {
  if (!state.waiting?.child) return false
  try {
    await checkChildEnded(ctx, state)
    return true
  } catch {
    return false
  }
}

/**
 * Before a run that waits on a child ends CANCELLED: its cancellation is put on record (so the child,
 * ending, does not wake it), then the child is cancelled, so the child's pending approval is void
 * before the parent ends. Returns the error if the child could not be cancelled (the parent is
 * cancelled anyway; the caller reports it).
 */
export async function cancelChildOf(ctx: Context, driver: RunDriver): Promise<unknown> {
  const { state, cancelRequest } = driver
  const child = state.waiting?.child
  if (!child || !cancelRequest) return undefined
  try {
    const { by, reason, at } = cancelRequest
    driver.rec.record('run/cancel-requested', { by, reason, requestedAt: at }, KernelProducer, driver.ids)
    await driver.flush()
    const agents = directory(ctx)
    if (!agents)
      throw new CordageError('service_missing', `agent "${state.agent}" has no agents service to cancel child run ${child.runId}`)
    await agents.cancelChild(child.agent, child.runId, {
      by: `parent:${state.runId}`,
      reason: `its parent run ${state.runId} was cancelled`,
    })
    return undefined
  } catch (error) {
    return error
  }
}

/**
 * A child run ended: its parent, if it waits on it, goes on. Best effort by design: a parent that is
 * not woken here (its agent refused, this process stopped) stays waiting, and `resume`, or a worker's
 * sweep, takes it on from the store once its child has ended.
 */
export async function wakeParent(ctx: Context, state: RunState): Promise<void> {
  if (!state.parent || !isTerminal(state.status)) return
  await directory(ctx)
    ?.childEnded({ runId: state.runId, parent: state.parent })
    .catch(() => {})
}
