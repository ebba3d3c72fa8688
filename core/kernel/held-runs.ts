/**
 * @module held-runs
 * The runs an agent runtime drives in this process, and how its commands hold a run: taken under its
 * lease (core/kernel/lease.ts), the body run, the lease given back when the command only recorded
 * something or failed, or the run driven on and tracked until it pauses or ends. The runtime's
 * commands (core/kernel/*-command.ts) are free functions over {@link HeldRuns}; the runtime
 * (core/kernel/agent.ts) holds one {@link HeldRuns}, private, with the kernel's store writer.
 */
import { CordageError } from '../contracts/errors.ts'
import type { BindingCheck, DriftCommand, PluginSet } from '../contracts/drift.ts'
import type { RunEventMap, RunEventType } from '../contracts/events.ts'
import type { Lease, StoreWriter } from '../contracts/services/store.ts'
import type { RunState } from '../contracts/state.ts'
import type { ContinueOptions, RunHandle } from '../contracts/commands.ts'
import { turn } from './command-ids.ts'
import { bindingChanges, recordDrift } from './drift.ts'
import { takeRun, type LeasePort, type TakenRun } from './lease.ts'
import type { RunDriver } from './loop.ts'
import type { EventIds } from './recorder.ts'
import { KernelProducer } from './version.ts'
import { waitOverAlready, wakeWaiters } from './waits.ts'

/** The agent runtime as its commands see it. */
export interface RuntimePort extends LeasePort, Required<PluginSet> {
  /** The plugins a run is bound to (core/kernel/agent.ts). */
  startedWith(runId: string): Promise<PluginSet>
  resume(runId: string, options: ContinueOptions): Promise<RunHandle>
}

/** A run driven in this process: its driver, and its outcome. */
export type Driven = { driver: RunDriver; done: Promise<RunState> }
/** How a command goes on driving the run it holds. */
type Next = () => Promise<RunState>

/** Record what continues the run, flush it, and drive it on. */
export async function goOn<K extends RunEventType>(driver: RunDriver, type: K, data: RunEventMap[K], ids: EventIds): Promise<Next> {
  driver.rec.record(type, data, KernelProducer, ids)
  await driver.flush()
  return () => driver.drive()
}

export class HeldRuns {
  constructor(
    readonly rt: RuntimePort,
    /** The runtime's own map (it reads it too): the runs driven here. */
    readonly active: Map<string, Driven>,
    readonly writer: StoreWriter | undefined,
    private readonly binding: BindingCheck | undefined,
    private readonly onIdle: (() => void) | undefined,
  ) {}

  /** Take a run's lease (or refuse: another worker drives it), rebuild its state (core/kernel/lease.ts), and run `body` holding it ({@link withLease}). */
  async take(runId: string, body: (taken: TakenRun) => Promise<Next | undefined>): Promise<RunHandle> {
    const taken = await takeRun(this.rt, runId, this.active.has(runId), this.writer).catch((error) => {
      this.settled()
      throw error
    })
    return this.withLease(taken.driver, () => body(taken))
  }

  /** Tell the host when nothing runs here any more (it releases a runtime built for one run). */
  settled(): void {
    if (!this.active.size) this.onIdle?.()
  }

  /**
   * Run a command's body holding the run's lease. The body returns how to go on driving, or nothing
   * (the command only recorded something); either way the lease is given back when it is done or fails.
   */
  async withLease(driver: RunDriver, body: () => Promise<Next | undefined>): Promise<RunHandle> {
    let next: Next | undefined
    try {
      next = await body()
    } finally {
      if (!next) {
        await driver.releaseLease()
        this.settled()
      }
    }
    return next ? this.track(driver, next) : { runId: driver.runId, done: Promise.resolve(driver.state) }
  }

  /**
   * Drive a RUNNING run nobody owns: a submitted run's first drive (lease token 1), or a run whose
   * worker died (recorded as run/recovered). Under other plugin versions than it started with, and not
   * accepted, it is suspended instead (recorded), so no worker picks it up again until someone decides.
   */
  async takeOver(driver: RunDriver, state: RunState, lease: Lease, options: ContinueOptions, command: DriftCommand): Promise<Next> {
    try {
      await this.drift(driver, state, options, command)
    } catch (error) {
      if (!CordageError.is(error, 'version_drift')) throw error
      return () => driver.suspendNow(error.message, 'version_drift')
    }
    if (lease.token > 1)
      return goOn(driver, 'run/recovered', { worker: lease.worker, token: lease.token, previous: lease.previous }, turn(state))
    return () => driver.drive()
  }

  /** Ask the host's binding check about a run about to go on, record its answer, and refuse when a change is refused (core/kernel/drift.ts). */
  async drift(driver: RunDriver, state: RunState, options: ContinueOptions, command: DriftCommand): Promise<void> {
    const current = { plugins: this.rt.plugins, hashes: this.rt.hashes }
    const changes = bindingChanges(this.binding, state.runId, await this.rt.startedWith(state.runId), current, options.acceptDrift === true)
    await recordDrift(driver, state, changes, options.by ?? (command === 'worker' ? 'worker' : 'api'), command)
  }

  /**
   * Drive `body` for a run. It starts on the next microtask: the caller has the handle (and the run id)
   * before any event of the run is dispatched, even with a store that writes synchronously.
   */
  track(driver: RunDriver, body: () => Promise<RunState>): RunHandle {
    const runId = driver.runId
    const handoff = this.rt.options.handoff
    const done = Promise.resolve()
      .then(body)
      .finally(() => {
        if (this.active.get(runId)?.driver === driver) this.active.delete(runId)
      })
      // Handed to another agent: the handle follows the run there, so `done` is still the run's outcome.
      .then((state) => (state.status === 'RUNNING' && state.handoff && handoff ? handoff(runId, state.handoff.to) : state))
      .then((state) => this.afterRun(state))
      // Only now: a runtime built for this run must still be there while the run wakes its parent or goes on after its child.
      .finally(() => this.settled())
    this.active.set(runId, { driver, done })
    return { runId, done }
  }

  /**
   * A run that ended wakes whoever waits on it; a run that paused on a condition that ended meanwhile
   * goes on at once (either side may see the other's last write first: core/kernel/waits.ts).
   */
  private async afterRun(state: RunState): Promise<RunState> {
    await wakeWaiters(this.rt.ctx, state)
    if (!(await waitOverAlready(this.rt.ctx, state))) return state
    return this.rt.resume(state.runId, { by: `${state.waiting!.on!.kind} ended` }).then(
      (handle) => handle.done,
      () => state,
    )
  }
}
