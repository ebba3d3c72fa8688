/**
 * @module loop
 * The agent loop for one run, as an explicit state machine over the statuses in core/kernel/status.ts.
 * Each pass of {@link RunDriver.drive} starts at a boundary (core/kernel/pass.ts): it checks
 * cancellation and budgets, settles the next pending action of the current step if there is one, and
 * otherwise starts a step (core/kernel/step.ts: assemble context → call model → record the decision).
 * Running an authorized action is core/kernel/effects.ts; holding the run's lease is
 * core/kernel/ownership.ts. The driver holds the run's state, its lease and its cancel; it is the
 * one implementation of the run the stages take (core/kernel/run.ts), and no stage calls back into it.
 *
 * Durability points: events are recorded into a buffer (and applied to state) as they happen, and
 * flushed to the store, in one transaction, before anything that must not be lost or repeated: before a
 * tool runs (the model's decision, the policy decision and the intent together), after a tool with side
 * effects (its outcome), and before the run pauses or ends. Listeners see events as they become durable.
 */
import type { ServiceEntry } from './cordis.ts'
import { CordageError, type Code } from '../contracts/errors.ts'
import { readonlyView } from './readonly.ts'
import { Ownership } from './ownership.ts'
import { CancelWindow } from './cancel-window.ts'
import { Recorder, type EventIds } from './recorder.ts'
import { VisibleTools } from './visible-tools.ts'
import { PlaceIds } from './open-step.ts'
import type { CancelRequest, EffectWrite, Lease, StoreService, StoreWriter } from '../contracts/services/store.ts'
import { StateVersion, type RunState } from './state.ts'
import type { ToolCall } from './tool-call.ts'
import type { LoopHost, TimedService } from './loop-host.ts'
import { bounded, isThenable } from './bounded.ts'
import type { CheckedMessages } from '../contracts/checks/context.ts'
import { readStepServices, type StepServices } from './step-services.ts'
import { snapshotDue } from './snapshot.ts'
import { guardStore } from './store-writer.ts'
import type { ArtifactRef } from '../contracts/data.ts'
import { crash, pauseRun } from './ending.ts'
import type { NotedEffect, Run } from './run.ts'
import { pass } from './pass.ts'

export class RunDriver implements Run {
  readonly rec: Recorder
  private abort = new AbortController()
  readonly signal: AbortSignal = this.abort.signal
  cancelRequest: CancelRequest | undefined
  suspendRequest: { by: string; reason: string } | undefined
  services!: StepServices
  private storeEntry: ServiceEntry<StoreService> | undefined
  /** The agent's services version {@link services} was read at; -1 forces a read at the first step. */
  private servicesVersion = -1
  /** The visible set of the current step, by name, and what the model is shown of it. */
  readonly visible = new VisibleTools()
  inStep = false
  private place = new PlaceIds()
  private toolCalls = new Set<ToolCall>()
  /** State was rebuilt from the store (a lost key race): what a batch decided before is stale. */
  reloaded = false
  private ownership: Ownership | undefined
  /** Effects that committed since the store was last seen without a cancel request (core/kernel/cancel-window.ts). */
  private readonly window = new CancelWindow()
  lost: CordageError | undefined
  /** Side effects that committed after cancellation was requested, and those left unknown. */
  readonly noted: Run['noted'] = { committed: [], unknown: [] }
  private lastSnapshot = 0
  /** The messages of the last projection that passed its check (core/kernel/context-step.ts): the next check reads only what is new. */
  checkedMessages: CheckedMessages | undefined
  /** The last compaction this driver recorded and used (core/kernel/context-step.ts): the next one may extend it. */
  lastCompaction: { seq: number; summarised: readonly number[] } | undefined
  /** A service that did not answer in time while an outcome was being recorded: the run ends at the next boundary. */
  deferred: unknown

  /** The kernel's store writer, from the runtime (undefined: this driver can read, not write). */
  readonly #writer: StoreWriter | undefined

  constructor(
    readonly agent: LoopHost,
    readonly state: RunState,
    writer: StoreWriter | undefined,
  ) {
    this.#writer = writer
    this.rec = new Recorder(state, () => this.store(), agent.dispatch, agent.scrubber, writer)
    this.lastSnapshot = state.lastSeq
  }

  get runId(): string {
    return this.state.runId
  }

  /** What services see of the run's state: a read-only view (core/kernel/readonly.ts). */
  get view(): Readonly<RunState> {
    return readonlyView(this.state)
  }

  /** Turn and step ids of where the run is now (read for every event). */
  get ids(): EventIds {
    return this.place.of(this.state)
  }

  /** The current ids plus an action and a cause. */
  idsOf(actionId: string | undefined, causation?: number): EventIds {
    const { turnId, stepId } = this.ids
    return { turnId, stepId, actionId, causation }
  }

  /** The store: the one read with the step's services while they are current, else read now. */
  store(): StoreService {
    if (this.servicesVersion === this.agent.servicesVersion && this.storeEntry) return this.storeEntry.value
    return this.agent.store()
  }

  /**
   * Own the run under `lease` while driving it: renew it, watch for cancel requests from other
   * processes, and fence every append with it.
   */
  own(lease: Lease): void {
    this.rec.lease = lease
    this.ownership = new Ownership(lease, () => this.store(), this.#writer, {
      ttlMs: this.agent.options.leaseTtlMs,
      watchMs: this.agent.options.cancelWatchMs,
      onLost: (error) => {
        this.lost ??= error
        this.abortAll(error, 0)
      },
      // A cancel asked in another process, found in the store: the effects it may have come too late to stop are named at the end.
      onCancel: (request) => {
        if (this.cancelRequest) return
        this.cancel(request.by, request.reason, request.at)
        this.noted.committed.push(...this.window.found())
      },
      mark: () => this.state.lastSeq,
      onClear: (mark) => this.window.clear(mark),
    })
    this.ownership.start()
  }

  async checkLease(): Promise<void> {
    if (this.lost) throw this.lost
    await this.ownership?.ensure()
    if (this.lost) throw this.lost
  }

  /** Pause SUSPENDED right away (a run taken over under changed plugins), then stop. */
  async suspendNow(reason: string, code: Code): Promise<RunState> {
    try {
      await pauseRun(this, 'SUSPENDED', reason, { code })
    } finally {
      // Never in a step: a run taken over is paused before it is driven (HeldRuns.takeOver).
      await this.releaseLease().catch(() => {})
    }
    return this.state
  }

  /** Give the lease up without driving (a command that only recorded something, or failed). */
  async releaseLease(): Promise<void> {
    await this.ownership?.release()
  }

  /** Ask the run to stop; it ends CANCELLED at its next boundary, aborting the model call or tool in flight. */
  cancel(by: string, reason?: string, requestedAt = Date.now()): void {
    if (this.cancelRequest) return
    this.cancelRequest = { by, reason, at: requestedAt }
    this.abortAll(new CordageError('cancelled', reason ?? `cancelled by ${by}`), this.agent.options.cancelGraceMs)
  }

  /**
   * At a boundary, and before the run records its end: look for a cancel asked in another process (a
   * shared store), so that one stored while this process could not look (a call blocked it) is acted on
   * here, at the next safe point, and not missed until the run has ended.
   */
  lookForCancel(): Promise<void> | undefined {
    if (!this.cancelRequest && !this.lost && this.ownership?.watching) return this.ownership.look()
  }

  private abortAll(error: CordageError, graceMs: number) {
    this.abort.abort(error)
    for (const call of this.toolCalls) call.abort(error, graceMs)
  }

  /** Ask the run to pause SUSPENDED at its next boundary. */
  suspend(by: string, reason = 'suspended on request'): void {
    this.suspendRequest ??= { by, reason }
  }

  track(call: ToolCall, on: boolean): void {
    if (on) this.toolCalls.add(call)
    else this.toolCalls.delete(call)
  }

  /**
   * A committed effect comes with the seq of its tool/end (core/kernel/call-outcome.ts), an unknown one with its key. With
   * no cancel known yet, a committed one is kept in the window: a cancel asked elsewhere and found later may have come
   * before it (core/kernel/cancel-window.ts).
   */
  noteEffect(kind: 'committed' | 'unknown', effect: NotedEffect): void {
    const { actionId, tool, receipt } = effect
    if (kind === 'unknown') this.noted.unknown.push({ actionId, tool, key: effect.key! })
    else if (this.cancelRequest) this.noted.committed.push({ actionId, tool, receipt })
    else if (this.ownership?.watching) this.window.committed(effect.seq!, { actionId, tool, receipt })
  }

  /** Flush under the lease, with a snapshot of state when one is due ({@link snapshotDue}). */
  flush(effects?: EffectWrite[]): Promise<void> | undefined {
    if (this.lost) throw this.lost
    const snapshot = snapshotDue(this.state.lastSeq, this.lastSnapshot, this.store().snapshotEvery)
      ? { version: StateVersion, state: this.state }
      : undefined
    // A store that appends synchronously (the memory store) leaves nothing to wait for: no promise then.
    const written = this.rec.flush(effects, snapshot)
    if (!snapshot) return written
    const taken = () => void (this.lastSnapshot = this.state.lastSeq)
    return written ? written.then(taken) : taken()
  }

  /** Drive until the run pauses or ends. Resolves with the state it stopped in. */
  async drive(): Promise<RunState> {
    try {
      // A pass with nothing to wait for answers at once: awaited only when it did not.
      for (;;) {
        const next = pass(this)
        if ((next instanceof Promise ? await next : next) !== 'continue') break
      }
    } catch (error) {
      await crash(this, error)
    } finally {
      if (this.inStep) this.leaveStep()
      await this.ownership?.release().catch(() => {})
    }
    return this.state
  }

  /**
   * Call a service of the loop under its time limit (`serviceTimeouts`), the run's deadline and
   * cancellation. An answer given synchronously costs nothing more (and a synchronous service cannot be
   * interrupted anyway: core/kit/regex.ts keeps patterns linear for that reason). A late answer rejects with
   * `service_timeout`, or `deadline_exceeded` when the run's deadline comes first, or the cancellation;
   * the loop ends the run with that code (core/kernel/ending.ts crash), and the answer, if it ever comes, is
   * ignored.
   */
  ask<T>(service: TimedService, provider: string, call: () => T | Promise<T>): T | Promise<T> {
    const answer = call()
    if (!isThenable(answer)) return answer
    return bounded(answer, service, provider, this.agent.options.serviceTimeouts[service], this.state.deadline, this.signal)
  }

  leaveStep(): void {
    this.inStep = false
    this.agent.gate.leave()
  }

  /**
   * Entered a step, past the swap gate: read its services when they changed. A service counts only when
   * the plugin that set it declares it in its manifest: a plugin that sets `policy` (or any kernel
   * service) without saying so, for example after the real provider was disposed during a swap, is
   * refused, and the run suspends until it is fixed. Returns why the run cannot go on, or undefined.
   */
  enterStep(): string | undefined {
    this.inStep = true
    if (this.servicesVersion === this.agent.servicesVersion) return undefined
    const read = readStepServices(this.agent.ctx)
    if (typeof read === 'string') return read
    this.services = read.services
    this.storeEntry = read.store
    this.servicesVersion = this.agent.servicesVersion
    return undefined
  }

  /** Store a blob under this run with the kernel's writer (content-addressed: storing it again adds only a listing). */
  putArtifact(a: { actionId: string; bytes: Uint8Array; mediaType: string; visibility: 'ui' | 'audit' }): Promise<ArtifactRef> {
    if (!this.#writer) throw new CordageError('store_write_refused', `run ${this.runId}: this driver has no store writer`)
    return guardStore(this.store()).putArtifact!({ runId: this.runId, ...a }, this.#writer)
  }

  /** A control error met where the run cannot stop yet (a call's outcome still to record): it ends at the next boundary. */
  defer(error: unknown): void {
    this.deferred ??= error
  }
}

Object.freeze(RunDriver.prototype)
