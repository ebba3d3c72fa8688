/**
 * @module cancel-command
 * The runtime's cancel (core/kernel/agent.ts): a run driven here is aborted at once; one nobody drives,
 * or one another process drives, is cancelled as core/kernel/cancel.ts says. Closing a thread cancels
 * its turn that has not ended the same way.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunState } from '../contracts/state.ts'
import { parseThreadId } from '../kit/thread-ids.ts'
import { cancelNotDriven, runEnded } from './cancel.ts'
import type { Actor } from '../contracts/commands.ts'
import type { HeldRuns } from './held-runs.ts'
import { isTerminal } from './status.ts'
import { guardStore } from './store-writer.ts'
import { cancelWaitOf } from './waits.ts'

export type CancelOptions = Actor & { waitMs?: number }

/** Cancel a run (see AgentRuntime.cancel). */
export async function cancelRun(port: HeldRuns, runId: string, options: CancelOptions): Promise<RunState> {
  const by = options.by ?? 'api'
  const request = { by, reason: options.reason, at: Date.now() }
  const active = port.active.get(runId)
  if (active) {
    active.driver.cancel(by, options.reason, request.at)
    const state = await active.done
    if (state.status === 'CANCELLED') return state
    if (isTerminal(state.status)) throw runEnded(state)
    // It paused before it reached a boundary that acts on the cancel: it is taken and cancelled below.
  }
  const taken = await cancelNotDriven(port.rt, runId, request, port.writer, options.waitMs ?? 30_000)
  if ('state' in taken) return taken.state
  const { driver } = taken
  // Waiting on a condition (a child run): it is cancelled first, so a child's pending approval is void (core/kernel/waits.ts).
  let notCancelled: unknown
  const state = await port.track(driver, async () => {
    notCancelled = await cancelWaitOf(port.rt.ctx, driver)
    return driver.drive()
  }).done
  if (notCancelled) throw notCancelled
  return state
}

/** Close a thread and cancel its turn that has not ended (see AgentRuntime.closeThread). */
export async function closeThread(port: HeldRuns, threadId: string, options: CancelOptions): Promise<RunState | undefined> {
  parseThreadId(threadId)
  const { name } = port.rt
  const store = port.rt.store()
  if (typeof store.closeThread !== 'function' || typeof store.thread !== 'function' || typeof store.threadTurns !== 'function')
    throw new CordageError(
      'feature_unsupported',
      `the store of agent "${name}" does not keep threads (store contract 2.3.0 thread, threadTurns, closeThread)`,
    )
  // Only the thread's own agent closes it, as only it adds turns to it.
  const thread = await store.thread!(threadId)
  if (!thread) throw new CordageError('thread_not_found', `no thread "${threadId}" in the store of agent "${name}"`)
  if (thread.agent !== name)
    throw new CordageError(
      'invalid_input',
      `thread "${threadId}" belongs to agent "${thread.agent}", not "${name}": close it as that agent (--agent ${thread.agent})`,
    )
  const by = options.by ?? 'api'
  await guardStore(store).closeThread!(threadId, { by, at: Date.now(), reason: options.reason }, port.writer!)
  const last = (await store.threadTurns!(threadId)).at(-1)
  if (!last || isTerminal((await port.rt.load(last.runId)).status)) return undefined
  // A turn that ended on its own meanwhile leaves nothing to cancel, as if it had ended before the close.
  const cancelling = cancelRun(port, last.runId, { by, reason: options.reason ?? `thread ${threadId} closed`, waitMs: options.waitMs })
  return cancelling.catch((error) => (CordageError.is(error, 'run_ended') ? undefined : Promise.reject(error)))
}
