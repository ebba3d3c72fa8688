/**
 * @module cancel
 * A cancel of a run that this process does not drive. The rule (docs/concepts/durability.md,
 * "Cancelling a run"): a cancel given before the run ended is accepted. A run nobody drives is taken
 * and ended CANCELLED here. A run another process drives is asked through the store; that process
 * acts on the request at its next safe point (it looks at the store at every boundary and before it
 * records an end), records the outcome of the call in flight, and names in `run/end` the side effects
 * that committed meanwhile. A run that stops being driven before it saw the request (it paused) is
 * taken and cancelled here. A run that had ended before the cancel could act is not changed: that is
 * `run_ended`, with the status it ended in.
 */
import { CordageError } from '../contracts/errors.ts'
import type { CancelRequest, StoreWriter } from '../contracts/services/store.ts'
import type { RunState } from '../contracts/state.ts'
import { claimToCancel, type LeasePort } from './lease.ts'
import type { RunDriver } from './loop.ts'
import { isTerminal } from './status.ts'
import { guardStore } from './store-writer.ts'

/** How often a cancel asked through the store looks at the run again. */
const PollMs = 100

/**
 * Cancel `runId`, not driven in this process. Resolves with a driver holding the run's lease, its
 * cancel set (the caller drives it to its end), or with the state of a run that ended CANCELLED by the
 * request (or another cancel that came first), or, after `waitMs`, with the state the run is in then.
 * Rejects with `run_ended` when the run ended otherwise, or had ended before this cancel was given.
 */
export async function cancelNotDriven(
  rt: LeasePort,
  runId: string,
  request: CancelRequest,
  writer: StoreWriter | undefined,
  waitMs: number,
): Promise<{ driver: RunDriver } | { state: RunState }> {
  const until = Date.now() + waitMs
  let asked = false
  for (;;) {
    const claimed = await claimToCancel(rt, runId, request, writer)
    if (claimed && 'driver' in claimed) return claimed
    // Ended: by this cancel (it asked, and the run acted on it) or by another that came first; else too late.
    if (claimed) return { state: endedWith(claimed.ended, asked) }
    if (!asked) {
      await guardStore(rt.store()).requestCancel(runId, request, writer!)
      asked = true
    }
    const state = await rt.load(runId)
    if (isTerminal(state.status)) return { state: endedWith(state, asked) }
    if (Date.now() >= until) return { state }
    // Still driven there, or paused and given up since: the next claim tells.
    await new Promise((resolve) => setTimeout(resolve, PollMs))
  }
}

/** The state of a run the cancel found ended: CANCELLED after it asked, or `run_ended`. */
export function endedWith(state: RunState, asked: boolean): RunState {
  if (asked && state.status === 'CANCELLED') return state
  throw runEnded(state)
}

/** The run ended before the cancel could act on it: nothing was cancelled, and nothing was recorded. */
export function runEnded(state: RunState): CordageError {
  const by = state.status === 'CANCELLED' && state.cancel ? ` (cancelled by ${state.cancel.by})` : ''
  return new CordageError(
    'run_ended',
    `run ${state.runId} had already ended ${state.status}${by} before this cancel could act: nothing was cancelled and nothing was recorded; its side effects stand as recorded (cordage effects ${state.runId})`,
    { data: { status: state.status } },
  )
}
