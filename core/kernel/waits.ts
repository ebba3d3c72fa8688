/**
 * @module waits
 * A run whose tool call waits on a condition outside it (ToolResult.waitsFor; a child run is one kind).
 * The kernel keeps the pause and the resume; what the condition is, it asks the condition's owner
 * through the agent's `waits` service (core/contracts/services/waits.ts), and acts only on an answer
 * that passed its check: no owner, a throw or nonsense counts as `unknown`, so a run neither pauses on
 * such a condition nor goes on from one. Cancelling the run cancels the condition first, so what it
 * waits on (a child's pending approval) is void before the run ends.
 */
import { CordageError } from '../contracts/errors.ts'
import type { WaitLook, Waiter, WaitsService } from '../contracts/services/waits.ts'
import { checkWaitLook } from '../contracts/checks/waits.ts'
import type { WaitCondition } from '../contracts/data.ts'
import type { RunState } from '../contracts/state.ts'
import { AgentKey, readService, type Context } from './cordis.ts'
import type { Run } from './run.ts'
import { isTerminal, isWaiting } from './status.ts'
import { KernelProducer } from './version.ts'

function waitsOf(ctx: Context): WaitsService | undefined {
  const waits = readService<WaitsService>(ctx, 'waits')?.value
  return typeof waits?.owner === 'function' ? waits : undefined
}

function ownerOf(ctx: Context, on: WaitCondition) {
  const owner = waitsOf(ctx)?.owner(on.kind)
  if (owner && typeof owner.look === 'function' && typeof owner.cancel === 'function') return owner
  throw new CordageError('service_missing', `nothing owns waits of kind "${on.kind}" in agent "${(ctx as any)[AgentKey]}"`)
}

/** What the owner of `on` says of it for `waiter`. Never throws: anything but a well-formed answer is `unknown`. */
async function lookAt(ctx: Context, on: WaitCondition, waiter: Waiter): Promise<WaitLook> {
  let owner
  try {
    owner = ownerOf(ctx, on)
    const checked = checkWaitLook(await owner.look({ ...on }, { ...waiter }))
    return checked.ok ? checked.value : { state: 'unknown', says: `its owner answered nonsense: ${checked.problem}` }
  } catch (error) {
    if (!owner) return { state: 'unknown', says: (error as Error).message }
    return { state: 'unknown', says: `its owner could not be asked: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** The condition run `state` waits on, and the call that waits on it (no action: a waiter nothing can be). */
function waitOf(state: RunState): { on: WaitCondition; waiter: Waiter } | undefined {
  const on = state.waiting?.on
  if (!on || !isWaiting(state.status)) return undefined
  return { on, waiter: { runId: state.runId, actionId: state.waiting?.actionId ?? '' } }
}

/**
 * Why call `waiter` may not pause on `on` (undefined: it may). A tool's `waitsFor` is only a claim: its
 * owner must say it is this very call's own and still going. Anything else would let a tool pause the
 * run on what it does not own, and have cancelling the run cancel that; one that already ended would
 * wake the run at once, whose call would say it waits again, without end.
 */
export async function claimProblem(ctx: Context, on: WaitCondition, waiter: Waiter): Promise<string | undefined> {
  const look = await lookAt(ctx, on, waiter)
  if (look.state === 'going') return undefined
  return look.state === 'ended' ? `${look.says}; there is nothing to wait for` : look.says
}

/** Refuse (`child_waiting`) to go on with a run whose call waits on a condition, unless its owner says it has ended. */
export async function checkWaitOver(ctx: Context, state: RunState): Promise<void> {
  const wait = waitOf(state)
  if (!wait) return
  const look = await lookAt(ctx, wait.on, wait.waiter)
  if (look.state === 'ended') return
  const then = look.state === 'unknown' ? '; cancel the run instead' : ''
  throw new CordageError('child_waiting', `run ${state.runId} cannot go on: ${look.says}${then}`)
}

/** True when the run waits on a condition that has ended already (it ended while the run was pausing). */
export async function waitOverAlready(ctx: Context, state: RunState): Promise<boolean> {
  const wait = waitOf(state)
  return !!wait && (await lookAt(ctx, wait.on, wait.waiter)).state === 'ended'
}

/** Cancel `on`, which call `waiter` waits on, through its owner (who leaves alone what is not the call's own). */
export async function cancelWait(ctx: Context, on: WaitCondition, waiter: Waiter): Promise<void> {
  await ownerOf(ctx, on).cancel({ ...on }, { ...waiter })
}

/**
 * Before a run that waits on a condition ends CANCELLED: its cancellation is put on record (so the
 * condition, ending, does not wake it), then the condition is cancelled. Returns the error if it could
 * not be (the run is cancelled anyway; the caller reports it, and the owner refuses decisions on what
 * nobody waits for any more: {@link checkAwaited}).
 */
export async function cancelWaitOf(ctx: Context, run: Run): Promise<unknown> {
  const { state, cancelRequest } = run
  const wait = waitOf(state)
  if (!wait || !cancelRequest) return undefined
  try {
    const { by, reason, at } = cancelRequest
    if (state.status !== 'CANCELLING') {
      run.rec.record('run/cancel-requested', { by, reason, requestedAt: at }, KernelProducer, run.ids)
      await run.flush()
    }
    await cancelWait(ctx, wait.on, wait.waiter)
    return undefined
  } catch (error) {
    return error
  }
}

/**
 * A run ended: the `waits` service wakes whoever waits on it. Best effort by design: a waiter not woken
 * here (its agent refused, this process stopped) stays waiting, and `resume`, or a worker's sweep,
 * takes it on from the store once what it waits on has ended.
 */
export async function wakeWaiters(ctx: Context, state: RunState): Promise<void> {
  const waits = waitsOf(ctx)
  if (!waits || !isTerminal(state.status)) return
  await Promise.resolve()
    .then(() => waits.runEnded(state))
    .catch(() => {})
}

/**
 * Refuse a decision on run `state` when whoever waited on it has ended (its `waits` service says: a
 * child whose parent ended and could not cancel it). A run another run's call started, in an agent
 * with no such service to ask, is refused too.
 */
export async function checkAwaited(ctx: Context, state: RunState): Promise<void> {
  const waits = waitsOf(ctx)
  if (waits) return waits.checkAwaited(state)
  if (state.parent)
    throw new CordageError(
      'service_missing',
      `run ${state.runId} was started by run ${state.parent.runId}, and agent "${(ctx as any)[AgentKey]}" has no waits service to tell whether that run still waits on it`,
    )
}
