/**
 * @module lease
 * Taking a run to steer or drive it: its lease claimed at the store (or `run_busy`, naming who holds
 * it), its state rebuilt from the log, a driver built to own the lease, and a cancel asked for while
 * nobody drove it handed to that driver. The kernel's store writer is passed in by the runtime that
 * holds it, never stored here.
 */
import { CordageError } from '../contracts/errors.ts'
import type { CancelRequest, Lease, StoreWriter } from '../contracts/services/store.ts'
import type { RunState } from '../contracts/state.ts'
import { RunDriver } from './loop.ts'
import type { LoopHost } from './loop-host.ts'
import { isTerminal } from './status.ts'
import { guardStore } from './store-writer.ts'

/** A run taken under its lease. */
export interface TakenRun {
  driver: RunDriver
  state: RunState
  lease: Lease
}

/** What taking a run needs of the agent runtime. */
export interface LeasePort extends LoopHost {
  load(runId: string): Promise<RunState>
}

/** Take a run's lease (or refuse: another worker drives it), then rebuild its state from the store. */
export async function takeRun(rt: LeasePort, runId: string, busy: boolean, writer: StoreWriter | undefined): Promise<TakenRun> {
  if (busy) throw new CordageError('run_busy', `run ${runId} is being driven in this process; wait for it to pause or end`)
  const store = rt.store()
  const lease = await guardStore(store).claim(runId, rt.options.worker, rt.options.leaseTtlMs, writer!)
  if (!lease) {
    const owner = (await store.list({ limit: 1000 })).find((r) => r.runId === runId)?.owner
    throw new CordageError('run_busy', `run ${runId} is being driven by worker ${owner ?? 'another process'}; wait for it to pause or end`)
  }
  const taken = await prepareRun(rt, lease, writer)
  const { state } = taken
  // Several agents may share a store: a run is steered only by the agent that drives it (or the one it was handed to).
  if (state.agent && state.agent !== rt.name && state.handoff?.to !== rt.name) {
    await taken.driver.releaseLease()
    throw new CordageError('agent_not_found', `run ${runId} belongs to agent "${state.agent}", not "${rt.name}"`)
  }
  return taken
}

export async function prepareRun(rt: LeasePort, lease: Lease, writer: StoreWriter | undefined): Promise<TakenRun> {
  try {
    const state = await rt.load(lease.runId)
    const driver = new RunDriver(rt, state, writer)
    driver.own(lease)
    // A cancel asked for while nobody drove the run: the driver acts on it at its first boundary.
    const request = state.cancel ?? (await rt.store().cancelRequest(lease.runId))
    if (request && !isTerminal(state.status)) driver.cancel(request.by, request.reason, request.at)
    return { driver, state, lease }
  } catch (error) {
    await guardStore(rt.store()).release(lease, writer!)
    throw error
  }
}

/**
 * Take a run nobody drives in this process in order to cancel it: with its lease, a driver that ends it
 * at its first boundary, or (the run has ended) its state, the lease given back; without the lease
 * (another process drives it), undefined: the caller asks that process through the store
 * (core/kernel/cancel.ts). An ended run is looked at before any driver is made, so nothing is left
 * renewing a lease or watching the store for it.
 */
export async function claimToCancel(
  rt: LeasePort,
  runId: string,
  request: CancelRequest,
  writer: StoreWriter | undefined,
): Promise<{ driver: RunDriver } | { ended: RunState } | undefined> {
  const store = guardStore(rt.store())
  const lease = await store.claim(runId, rt.options.worker, rt.options.leaseTtlMs, writer!)
  if (!lease) return undefined
  let state: RunState | undefined
  try {
    state = await rt.load(runId)
  } finally {
    // Not loaded, or ended: there is nothing to drive, and the lease goes back.
    if (!state || isTerminal(state.status)) await store.release(lease, writer!)
  }
  if (isTerminal(state.status)) return { ended: state }
  const driver = new RunDriver(rt, state, writer)
  driver.own(lease)
  driver.cancel(request.by, request.reason, request.at)
  return { driver }
}
