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
import type { CancelRequest } from '../contracts/services/store.ts'
import type { EventIds, Recorder } from './recorder.ts'
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
  let asked: unknown
  const found = agents
    ? await agents.child(child.agent, child.runId).catch((error: unknown) => {
        asked = error
        return undefined
      })
    : undefined
  if (found && found.parent?.runId === state.runId && isTerminal(found.status)) return
  const why = !agents
    ? `this agent has no agents service to look at it; cancel the run instead`
    : asked
      ? `agent "${child.agent}" cannot be asked about it (${asked instanceof Error ? asked.message : String(asked)}); cancel the run instead`
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
 * Why run `parent.runId` may not pause on `child` for its call `parent.actionId` (undefined: it may).
 * A tool's `waitsFor` is only a claim: the child must be a run this very call started, and must still
 * be going. Any other run (another agent's, another run's child) would let a tool pause the run on
 * something it does not own, and have cancelling this run cancel it; a child that already ended would
 * wake the run at once, whose call would say it waits again, without end.
 */
export async function childWaitProblem(
  ctx: Context,
  parent: { runId: string; actionId: string },
  child: { agent: string; runId: string },
): Promise<string | undefined> {
  const agents = directory(ctx)
  if (!agents) return 'this agent has no agents service to look at the child'
  let found
  try {
    found = await agents.child(child.agent, child.runId)
  } catch (error) {
    return `agent "${child.agent}" cannot be asked about it: ${error instanceof Error ? error.message : String(error)}`
  }
  if (!found || found.parent?.runId !== parent.runId || found.parent.actionId !== parent.actionId)
    return `run ${child.runId} of agent "${child.agent}" is not a child started by this call (run ${parent.runId}, action ${parent.actionId})`
  if (isTerminal(found.status)) return `child run ${child.runId} has already ended (${found.status}); there is nothing to wait for`
  return undefined
}

/** What cancelling a run's child needs of the run. */
export interface CancelPort {
  readonly state: RunState
  readonly cancelRequest: CancelRequest | undefined
  readonly rec: Recorder
  readonly ids: EventIds
  flush(): Promise<void>
}

/**
 * Before a run that waits on a child ends CANCELLED: its cancellation is put on record (so the child,
 * ending, does not wake it), then the child is cancelled, so the child's pending approval is void
 * before the parent ends. Only a run the parent's call started is cancelled (looked at again here: the
 * run's `waiting.child` came from a tool). Returns the error if the child could not be cancelled (the
 * parent is cancelled anyway; the caller reports it, and the child's approvals are refused once its
 * parent has ended: {@link checkParentGoing}).
 */
export async function cancelChildOf(ctx: Context, driver: CancelPort): Promise<unknown> {
  const { state, cancelRequest } = driver
  const child = state.waiting?.child
  if (!child || !cancelRequest) return undefined
  const asking = { runId: state.runId, actionId: state.waiting?.actionId }
  try {
    const { by, reason, at } = cancelRequest
    if (state.status !== 'CANCELLING') {
      driver.rec.record('run/cancel-requested', { by, reason, requestedAt: at }, KernelProducer, driver.ids)
      await driver.flush()
    }
    await cancelOwnChild(ctx, asking, child)
    return undefined
  } catch (error) {
    return error
  }
}

/**
 * Cancel `child` if, and only if, it is a run that `parent` (its call `actionId`, when known) started
 * and it has not ended. Anything else is left alone.
 */
export async function cancelOwnChild(
  ctx: Context,
  parent: { runId: string; actionId?: string },
  child: { agent: string; runId: string },
): Promise<void> {
  const agents = directory(ctx)
  if (!agents) throw new CordageError('service_missing', `run ${parent.runId} has no agents service to cancel child run ${child.runId}`)
  const found = await agents.child(child.agent, child.runId)
  const ours = found?.parent?.runId === parent.runId && (parent.actionId === undefined || found.parent.actionId === parent.actionId)
  if (!found || !ours || isTerminal(found.status)) return
  await agents.cancelChild(child.agent, child.runId, {
    by: `parent:${parent.runId}`,
    reason: `its parent run ${parent.runId} was cancelled`,
  })
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
