/**
 * @module agent
 * An agent at run time: its isolated context (where its plugins provide services), its budgets, and
 * the commands that start and steer runs: start, submit, approve, reject, reconcile, resume, suspend,
 * cancel, and driveNext for workers. Every command that drives a run first takes the run's lease, so
 * one worker drives a run at a time across processes and machines; the state is then rebuilt from the
 * store, so a command works the same on a run started by another process.
 */
import { DefaultBudgets, type Budgets } from './budget.ts'
import { checkResumeBudgets } from '../kit/budgets.ts'
import { requireMeter } from './meter.ts'
import { createDispatch, readService, type Context, type Dispatch } from './cordis.ts'
import { CordageError } from '../contracts/errors.ts'
import type { ModelDeltaEvent, ResumeBudgets, RunEvent } from '../contracts/events.ts'
import { StepGate } from './gate.ts'
import type { ApprovalGrant, ApprovalScope } from '../contracts/data.ts'
import type { ArgsPattern } from '../kit/match.ts'
import { RunDriver } from './loop.ts'
import type { Lease, StoreService, StoreWriter } from '../contracts/services/store.ts'
import type { ToolsService } from '../contracts/services/tools.ts'
import type { PolicyService } from '../contracts/services/policy.ts'
import { emptyState, replay, replayFrom, type RunState } from './state.ts'
import { isTerminal } from './status.ts'
import { asDefined } from './tool.ts'
import { guardStore } from './store-writer.ts'
import { Scrubber } from '../kit/secrets.ts'
import { KernelProducer } from './version.ts'
import type { LoopHost, ResolvedAgentOptions } from './loop-host.ts'
import { resolveOptions, type AgentOptions, type StartOptions } from './agent-options.ts'
import { checkTask, recordRunStart, servicesOf, startDraft } from './run-start.ts'
import { draftHandled, draftRun } from './run-draft.ts'
import { parseThreadId } from '../kit/thread-ids.ts'
import { bindingChanges, recordDrift } from './drift.ts'
import type { BindingCheck, DriftCommand } from '../contracts/drift.ts'
import { movedVersions, planDecision, recordDecision, underVersions, type Versions } from './approval.ts'
import { prepareRun, takeOverRun, takeRun, type TakenRun } from './lease.ts'
import { cancelNotDriven, runEnded } from './cancel.ts'
import { checkResumable } from './resumable.ts'
import { turn } from './command-ids.ts'
import { reconcilableAction, recordReconciled } from './reconcile.ts'
import { wakingWaiters } from './waiters.ts'
import { followRun, RunWaiters, type FollowOptions } from '../kit/follow.ts'
import { cancelWaitOf, checkAwaited, checkWaitOver, waitOverAlready, wakeWaiters } from './waits.ts'
export type { DriftChange, DriftPolicy } from '../contracts/drift.ts'
export { DefaultServiceTimeouts, type AgentOptions, type StartOptions } from './agent-options.ts'
export { TimedServices, type ResolvedAgentOptions, type TimedService } from './loop-host.ts'

/** A run being driven: its id at once, its final (or paused) state when `done` resolves. */
export interface RunHandle {
  runId: string
  done: Promise<RunState>
}

export interface Actor {
  /** Who gives the command, recorded in the event (a user name, `cli`, `api`). */
  by?: string
  reason?: string
}

export interface ContinueOptions extends Actor {
  /** Continue even though the agent's plugins differ from those the run started with (recorded). */
  acceptDrift?: boolean
}

/** How far an approval reaches, and for which arguments (see core/kit/grants.ts; `run` and `grant` need the grants plugin). */
export interface ApprovalOptions extends ContinueOptions {
  resume?: boolean
  /** `once` (default): this call. `run`: the tool for the rest of the run. `grant`: a standing grant across runs. */
  scope?: ApprovalScope
  /**
   * Which arguments a `run` or `grant` approval covers: a pattern (`{ amount: { lte: 100 } }`), `any`,
   * or, when unset, for `run` any arguments and for `grant` exactly this call's.
   */
  args?: ArgsPattern | 'any'
  /** A `run` or `grant` approval lapses this long after it is given. */
  expiresInMs?: number
}

/** What the host adds to a runtime it builds (host/app.ts): pinned runs for its worker, and their release. */
export interface RuntimeHooks {
  /**
   * The runtime that should drive a run this one's worker claimed ({@link AgentRuntime.driveNext}), when
   * not this one: the host's, with plugins pinned to the run's recorded versions (`onDrift: pin`), as a
   * resume would use. It drives the run under the lease this runtime claimed (same store and worker).
   */
  runtimeFor?: (runId: string) => Promise<AgentRuntime | undefined>
  /**
   * Called when nothing runs on this runtime any more: its last run paused or ended, or a command on it
   * failed before driving. The host releases a runtime it built for one run.
   */
  onIdle?: () => void
}

export class AgentRuntime implements LoopHost {
  readonly name: string
  readonly budgets: Budgets
  readonly gate = new StepGate()
  readonly dispatch: Dispatch
  readonly options: ResolvedAgentOptions
  readonly plugins: Record<string, string>
  readonly hashes: Record<string, string>
  readonly defaultTask: string | undefined
  /** What the agent's runs scrub from every event and ledger write before it is stored. */
  readonly scrubber: Scrubber
  /** Bumped whenever cordis sets or removes any service, so runs re-read theirs only after a change. */
  servicesVersion = 0
  private active = new Map<string, { driver: RunDriver; done: Promise<RunState> }>()
  /** The kernel's writer, when the host gave it: private, so no holder of the runtime can take it. */
  readonly #writer: StoreWriter | undefined
  readonly #runtimeFor: RuntimeHooks['runtimeFor']
  readonly #onIdle: RuntimeHooks['onIdle']
  readonly #binding: BindingCheck | undefined
  /** Runs whose stored log this runtime found damaged: driveNext passes them over. */
  private damaged = new Set<string>()
  private waiters = new RunWaiters()

  /** Listeners as they are, without the followers counted in `dispatch.watched`. */
  private readonly previews: Dispatch

  constructor(
    readonly ctx: Context,
    options: AgentOptions & RuntimeHooks,
  ) {
    this.name = options.name
    this.budgets = { ...DefaultBudgets, ...options.budgets }
    this.plugins = options.plugins ?? {}
    this.hashes = options.hashes ?? {}
    this.#binding = options.binding
    this.defaultTask = options.defaultTask
    this.scrubber = new Scrubber(options.secrets ?? [])
    this.#writer = options.writer
    this.#runtimeFor = options.runtimeFor
    this.#onIdle = options.onIdle
    const dispatch = createDispatch(ctx, options.name)
    this.dispatch = wakingWaiters(dispatch, this.waiters)
    this.previews = dispatch
    ctx.on('internal/service', () => {
      this.servicesVersion++
    })
    this.options = resolveOptions(options)
  }

  /** Start a run for `task` (default: the agent's default task) and drive it here. The handle has the run id at once. */
  start(task: string | undefined = this.defaultTask, options: StartOptions = {}): RunHandle {
    const runId = options.runId ?? newRunId()
    const driver = new RunDriver(this, emptyState(runId), this.#writer)
    const checked = checkTask(task, this.name, !!this.defaultTask)
    const drafted = draftHandled(driver, options.thread)
    // A new run is this worker's from its first event: no other worker can claim it before it is driven.
    driver.own({ runId, worker: this.options.worker, token: 1, expiresAt: Date.now() + this.options.leaseTtlMs })
    if (!drafted) recordRunStart(driver.rec, this, startDraft(this, checked, options), options)
    return this.track(driver, async () => {
      if (drafted) await this.recordStart(driver, checked, options)
      else await driver.flush()
      return driver.drive()
    })
  }

  /** Start a run and wait for it to pause or end. */
  async run(task?: string, options?: StartOptions): Promise<RunState> {
    return this.start(task, options).done
  }

  /** Record a run without driving it: a worker (`cordage worker`, {@link driveNext}) will. Returns its id. */
  async submit(task: string | undefined = this.defaultTask, options: StartOptions = {}): Promise<string> {
    const runId = options.runId ?? newRunId()
    const driver = new RunDriver(this, emptyState(runId), this.#writer)
    await this.recordStart(driver, checkTask(task, this.name, !!this.defaultTask), options)
    return runId
  }

  /**
   * Record the start of a run as the run/before-start handlers leave it (core/kernel/run-draft.ts): for
   * a turn of a thread, nothing is written when the thread cannot take it, and the store claims the
   * turn with the first append.
   */
  private async recordStart(driver: RunDriver, task: string, options: StartOptions): Promise<void> {
    try {
      recordRunStart(driver.rec, this, await draftRun(driver, startDraft(this, task, options)), options)
      await driver.flush()
    } catch (error) {
      // The run was never written: the lease it was started under is given back (there is nothing to own).
      await driver.releaseLease().catch(() => {})
      throw error
    }
  }

  /**
   * Approve the pending action and (by default) continue the run. The approval is bound to the action's
   * arguments hash; if the policy version changed since the request, the action is decided again.
   */
  async approve(runId: string, actionId: string, options: ApprovalOptions = {}): Promise<RunHandle> {
    return this.recordApproval(runId, actionId, true, options)
  }

  /** Standing grants of this agent (active ones, or all with `inactive`). Empty when the store keeps none. */
  async grants(query: { tool?: string; inactive?: boolean } = {}): Promise<ApprovalGrant[]> {
    const store = this.store()
    return store.grants ? store.grants({ ...query, agent: this.name }) : []
  }

  /** Revoke a standing grant: from now on the calls it covered are asked about again. */
  async revokeGrant(id: string, options: Actor = {}): Promise<ApprovalGrant> {
    const store = this.store()
    if (!store.revokeGrant) throw new CordageError('invalid_input', `the store of agent "${this.name}" keeps no standing grants`)
    const grant = await guardStore(store).revokeGrant!(id, options.by ?? 'api', Date.now(), options.reason, this.#writer!)
    if (!grant) throw new CordageError('invalid_input', `no grant ${id} in the store of agent "${this.name}"`)
    return grant
  }

  /** Reject the pending action; the rejection becomes an observation for the model and the run goes on. */
  async reject(runId: string, actionId: string, options: ContinueOptions & { resume?: boolean } = {}): Promise<RunHandle> {
    return this.recordApproval(runId, actionId, false, options)
  }

  /**
   * Settle an unknown effect (a run in WAITING_RECONCILIATION): `committed` when the action took effect
   * (it closes with that result), not committed when it did not (it runs again under the same
   * idempotency key). Then (by default) continue the run.
   */
  async reconcile(
    runId: string,
    actionId: string,
    committed: boolean,
    options: ContinueOptions & { resume?: boolean; receipt?: unknown } = {},
  ): Promise<RunHandle> {
    const { driver, state } = await this.take(runId)
    return this.withLease(driver, async () => {
      const action = reconcilableAction(state, actionId)
      // Drift first: a refused command must leave the run as it found it.
      if (options.resume !== false) await this.drift(driver, state, options, 'reconcile')
      await recordReconciled(driver, state, action, committed, options)
      if (options.resume === false) return undefined
      driver.rec.record('run/resumed', { from: 'WAITING_RECONCILIATION', by: options.by ?? 'api' }, KernelProducer, turn(state))
      await driver.flush()
      return () => driver.drive()
    })
  }

  /**
   * Continue a run: WAITING_USER needs `input`; SUSPENDED continues as it was; WAITING_APPROVAL once
   * its action has been approved or rejected; RUNNING or CANCELLING when no worker owns it any more
   * (its process died and its lease expired): this worker recovers it from the log.
   */
  async resume(runId: string, options: ContinueOptions & { input?: string; budgets?: ResumeBudgets } = {}): Promise<RunHandle> {
    // Raised budgets (a run suspended with reservation_refused goes on with more), checked before anything is taken.
    const budgets = checkResumeBudgets(options.budgets)
    if (budgets) requireMeter(this.name, readService(this.ctx, 'meter'), budgets)
    const { driver, state, lease } = await this.take(runId)
    return this.withLease(driver, async () => {
      const by = options.by ?? 'api'
      const toolOf = (name: string) => {
        const found = readService<ToolsService>(this.ctx, 'tools')?.value.get(name)
        return found && asDefined(found)
      }
      // A run whose call waits on a condition goes on only once its owner says it ended (core/kernel/waits.ts).
      await checkWaitOver(this.ctx, state)
      if (checkResumable(state, options.input, toolOf) === 'take-over') {
        if (budgets)
          throw new CordageError('run_not_waiting', `run ${runId} is ${state.status}: budgets can be set only when resuming a waiting run`)
        return this.takeOver(driver, state, lease, options, 'resume')
      }
      await this.drift(driver, state, options, 'resume')
      driver.rec.record(
        'run/resumed',
        { from: state.status as 'WAITING_USER', by, input: options.input, ...(budgets ? { budgets } : {}) },
        KernelProducer,
        turn(state),
      )
      await driver.flush()
      return () => driver.drive()
    })
  }

  /**
   * Take a run that another agent handed to this one (a tool's `handoff`) and drive it: records
   * run/handoff with this agent's plugins and services. The agents must share a store.
   */
  async acceptHandoff(runId: string): Promise<RunHandle> {
    const { driver, state } = await this.take(runId)
    return this.withLease(driver, async () => {
      if (state.status !== 'RUNNING' || state.handoff?.to !== this.name) {
        throw new CordageError('run_not_waiting', `run ${runId} is ${state.status} and was not handed to agent "${this.name}"`)
      }
      driver.rec.record(
        'run/handoff',
        {
          from: state.agent,
          to: this.name,
          reason: state.handoff.reason,
          plugins: { ...this.plugins },
          hashes: { ...this.hashes },
          services: servicesOf(this.ctx),
        },
        KernelProducer,
        { ...turn(state), causation: state.handoff.seq },
      )
      await driver.flush()
      return () => driver.drive()
    })
  }

  /** Ask a run to pause SUSPENDED at its next step boundary. Only for runs driven in this process. */
  suspend(runId: string, actor: Actor = {}): boolean {
    const active = this.active.get(runId)
    active?.driver.suspend(actor.by ?? 'api', actor.reason)
    return !!active
  }

  /**
   * Cancel a run; a cancel given before the run ended is accepted (core/kernel/cancel.ts). Driven here:
   * aborted at once (model call and tool in flight get the abort). Waiting, or owned by nobody: ends
   * CANCELLED at once, and its pending approval is void. Driven by another process: that process is
   * asked (through the store) and acts at its next safe point; this waits up to `waitMs` for the run to
   * end. Rejects with `run_ended` when the run ended otherwise before the cancel could act.
   */
  async cancel(runId: string, options: Actor & { waitMs?: number } = {}): Promise<RunState> {
    const by = options.by ?? 'api'
    const request = { by, reason: options.reason, at: Date.now() }
    const active = this.active.get(runId)
    if (active) {
      active.driver.cancel(by, options.reason, request.at)
      const state = await active.done
      if (state.status === 'CANCELLED') return state
      if (isTerminal(state.status)) throw runEnded(state)
      // It paused before it reached a boundary that acts on the cancel: it is taken and cancelled below.
    }
    const taken = await cancelNotDriven(this, runId, request, this.#writer, options.waitMs ?? 30_000)
    if ('state' in taken) return taken.state
    const { driver } = taken
    // Waiting on a condition (a child run): it is cancelled first, so a child's pending approval is void (core/kernel/waits.ts).
    let notCancelled: unknown
    const state = await this.track(driver, async () => {
      notCancelled = await cancelWaitOf(this.ctx, driver)
      return driver.drive()
    }).done
    if (notCancelled) throw notCancelled
    return state
  }

  /**
   * Close a thread: it takes no more turns (closing twice keeps the first close). Its turn that has not
   * ended (running, or waiting on an approval, an answer or a reconciliation) is cancelled, as
   * {@link cancel} would. Resolves with that turn's state, or undefined when no turn was going on.
   */
  async closeThread(threadId: string, options: Actor & { waitMs?: number } = {}): Promise<RunState | undefined> {
    parseThreadId(threadId)
    const store = this.store()
    if (typeof store.closeThread !== 'function' || typeof store.thread !== 'function' || typeof store.threadTurns !== 'function')
      throw new CordageError(
        'feature_unsupported',
        `the store of agent "${this.name}" does not keep threads (store contract 2.3.0 thread, threadTurns, closeThread)`,
      )
    // Only the thread's own agent closes it, as only it adds turns to it.
    const thread = await store.thread!(threadId)
    if (!thread) throw new CordageError('thread_not_found', `no thread "${threadId}" in the store of agent "${this.name}"`)
    if (thread.agent !== this.name)
      throw new CordageError(
        'invalid_input',
        `thread "${threadId}" belongs to agent "${thread.agent}", not "${this.name}": close it as that agent (--agent ${thread.agent})`,
      )
    const by = options.by ?? 'api'
    await guardStore(store).closeThread!(threadId, { by, at: Date.now(), reason: options.reason }, this.#writer!)
    const last = (await store.threadTurns!(threadId)).at(-1)
    if (!last || isTerminal((await this.load(last.runId)).status)) return undefined
    // A turn that ended on its own meanwhile leaves nothing to cancel, as if it had ended before the close.
    return this.cancel(last.runId, { by, reason: options.reason ?? `thread ${threadId} closed`, waitMs: options.waitMs }).catch((error) => {
      if (CordageError.is(error, 'run_ended')) return undefined
      throw error
    })
  }

  /**
   * Claim the oldest run of this agent that needs a driver (submitted, or whose worker died) and drive
   * it. Resolves undefined when there is none.
   */
  async driveNext(): Promise<RunHandle | undefined> {
    const exclude = this.damaged.size ? [...this.damaged] : undefined
    const lease = await guardStore(this.store()).claimNext(
      this.options.worker,
      this.options.leaseTtlMs,
      { agents: [this.name], exclude },
      this.#writer!,
    )
    if (!lease) return undefined
    // A run set to pin (onDrift: pin) is driven by the runtime the host built for it, as a resume would be.
    let target: AgentRuntime = this
    try {
      target = (await this.#runtimeFor?.(lease.runId)) ?? this
    } catch (error) {
      await guardStore(this.store()).release(lease, this.#writer!)
      throw error
    }
    let prepared
    try {
      prepared = await target.prepare(lease)
    } catch (error) {
      // A runtime built for this run is released: it will not drive it.
      if (target !== this) target.settled()
      // A damaged log is never replayed, and must not stop the runs queued behind it: this runtime
      // passes it over from now on (prepare released its lease), and says so to the caller.
      if (CordageError.is(error, 'store_corrupt')) this.damaged.add(lease.runId)
      throw error
    }
    const { driver, state } = prepared
    return target.withLease(driver, () => target.takeOver(driver, state, lease, {}, 'worker'))
  }

  /** Current state of a run, rebuilt from the store (from its newest snapshot and the events after it). */
  async load(runId: string): Promise<RunState> {
    const active = this.active.get(runId)
    if (active) return active.driver.state
    const stored = await this.store().loadRun(runId)
    return replayFrom(runId, stored.snapshot, stored.events) ?? replay(runId, await this.store().load(runId))
  }

  /**
   * The events of a run after `after`, then each new one as it becomes durable, until the run ends (or
   * `signal` aborts). A client that reconnects with the last seq it saw misses nothing and sees nothing twice.
   */
  follow(runId: string, options: FollowOptions = {}): AsyncGenerator<RunEvent> {
    return followRun(
      {
        read: (after) => this.store().read(runId, { after }),
        drivenHere: () => this.active.has(runId),
        over: async () => isTerminal((await this.load(runId)).status),
        next: (pollMs, signal) => this.waiters.next(runId, pollMs, signal),
      },
      options,
    )
  }

  /** Someone listens for streamed model pieces (`model/delta`). */
  streaming(): boolean {
    return this.previews.watched(['model/delta'])
  }

  /** Hand a streamed piece to listeners (under this agent's context and at the root); a throwing listener is only reported. */
  streamDelta(event: ModelDeltaEvent): void {
    // The loop scrubs the pieces it streams (RunDriver.previews); anything else passing a preview here is scrubbed piece by piece.
    this.previews.preview('model/delta', this.scrubber.active ? this.scrubber.scrub(event) : event)
  }

  /** Ids of runs this process is driving now. */
  running(): string[] {
    return [...this.active.keys()]
  }

  /** Resolves when every run driven here has paused or ended. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.active.values()].map((a) => a.done))
  }

  store(): StoreService {
    const entry = readService<StoreService>(this.ctx, 'store')
    if (!entry) throw new CordageError('service_missing', `agent "${this.name}" has no store`)
    return entry.value
  }

  private async recordApproval(runId: string, actionId: string, approved: boolean, options: ApprovalOptions): Promise<RunHandle> {
    const { driver, state } = await this.take(runId)
    return this.withLease(driver, async () => {
      // A run whose call waits on a condition: the decision is taken where it waits (the owner says where).
      await checkWaitOver(this.ctx, state)
      const uses = this.dispatch.handlers('tool/after-decide').length > 0
      const planned = planDecision(this.name, state, actionId, approved, options, () => !!this.store().putGrant, uses)
      // A run nobody waits for any more (a child whose parent ended and could not cancel it) is not approved.
      if (approved) await checkAwaited(this.ctx, state)
      // Drift first: a refused approval must leave the action waiting, so that the same command with
      // --accept-drift (or an onDrift change) can be given again.
      if (options.resume !== false) await this.drift(driver, state, options, approved ? 'approve' : 'reject')
      // Given together with --accept-drift, after the refusal told the approver what changed, the approval
      // holds under the versions now in force (core/kernel/approval.ts). A drift the preset accepts
      // (onDrift) was never shown to the approver: the action is decided, and maybe asked, again.
      const knowing = options.resume !== false && options.acceptDrift === true
      const decision = knowing ? underVersions(planned, movedVersions(planned.action, this.versionsOf(planned.action.tool))) : planned
      const { by, grant } = decision
      recordDecision(driver.rec, state, decision, options.reason)
      // Recorded first: a grant without the approval it came from would be an approval nobody can trace.
      // Stored as recorded: scrubbed of the agent's secrets like every other row.
      if (grant?.scope === 'grant') {
        await driver.flush()
        await guardStore(this.store()).putGrant!(this.scrubber.scrub(grant), this.#writer!)
      }
      if (options.resume === false) {
        await driver.flush()
        return undefined
      }
      driver.rec.record('run/resumed', { from: 'WAITING_APPROVAL', by }, KernelProducer, turn(state))
      await driver.flush()
      return () => driver.drive()
    })
  }

  /** The policy version and the owner of tool `name` this agent runs now. */
  private versionsOf(name: string): Partial<Versions> {
    const tool = readService<ToolsService>(this.ctx, 'tools')?.value.get(name)
    return { policyVersion: readService<PolicyService>(this.ctx, 'policy')?.value.version, toolVersion: tool && asDefined(tool).owner }
  }

  /** Take a run's lease (or refuse: another worker drives it), then rebuild its state (core/kernel/lease.ts). */
  private async take(runId: string): Promise<TakenRun> {
    try {
      return await takeRun(this, runId, this.active.has(runId), this.#writer)
    } catch (error) {
      this.settled()
      throw error
    }
  }

  /** Tell the host when nothing runs here any more (it releases a runtime built for one run). */
  private settled(): void {
    if (!this.active.size) this.#onIdle?.()
  }

  private prepare(lease: Lease): Promise<TakenRun> {
    return prepareRun(this, lease, this.#writer)
  }

  /**
   * Run a command's body holding the run's lease. The body returns how to go on driving, or nothing
   * (the command only recorded something); either way the lease is given back when it is done or fails.
   */
  private async withLease(driver: RunDriver, body: () => Promise<(() => Promise<RunState>) | undefined>): Promise<RunHandle> {
    let next: (() => Promise<RunState>) | undefined
    try {
      next = await body()
    } catch (error) {
      await driver.releaseLease()
      this.settled()
      throw error
    }
    if (!next) {
      await driver.releaseLease()
      this.settled()
      return { runId: driver.runId, done: Promise.resolve(driver.state) }
    }
    return this.track(driver, next)
  }

  /** Drive a run nobody owns, or suspend it on refused drift (core/kernel/lease.ts). */
  private takeOver(
    driver: RunDriver,
    state: RunState,
    lease: Lease,
    options: ContinueOptions,
    command: DriftCommand,
  ): Promise<() => Promise<RunState>> {
    return takeOverRun(driver, state, lease, () => this.drift(driver, state, options, command))
  }

  /**
   * The plugins (name → version) and, when recorded, their content hashes that a run is bound to: those
   * of its run/start, or of its last run/handoff (hashes unknown for one recorded before handoffs had them).
   */
  async startedWith(runId: string): Promise<{ plugins: Record<string, string>; hashes?: Record<string, string> }> {
    const state = await this.load(runId)
    return { plugins: state.plugins, hashes: state.hashes }
  }

  /** Ask the host's binding check about a run about to go on, record its answer, and refuse when a change is refused (core/kernel/drift.ts). */
  private async drift(driver: RunDriver, state: RunState, options: ContinueOptions, command: DriftCommand): Promise<void> {
    const current = { plugins: this.plugins, hashes: this.hashes }
    const changes = bindingChanges(this.#binding, state.runId, await this.startedWith(state.runId), current, options.acceptDrift === true)
    await recordDrift(driver, state, changes, options.by ?? (command === 'worker' ? 'worker' : 'api'), command)
  }

  /**
   * A run that ended wakes whoever waits on it; a run that paused on a condition that ended meanwhile
   * goes on at once (either side may see the other's last write first: core/kernel/waits.ts).
   */
  private async afterRun(state: RunState): Promise<RunState> {
    await wakeWaiters(this.ctx, state)
    if (!(await waitOverAlready(this.ctx, state))) return state
    return this.resume(state.runId, { by: `${state.waiting!.on!.kind} ended` }).then(
      (handle) => handle.done,
      () => state,
    )
  }

  /**
   * Drive `body` for a run. It starts on the next microtask: the caller has the handle (and the run id)
   * before any event of the run is dispatched, even with a store that writes synchronously.
   */
  private track(driver: RunDriver, body: () => Promise<RunState>): RunHandle {
    const runId = driver.runId
    const handoff = this.options.handoff
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
}

Object.freeze(AgentRuntime.prototype)
/** Time-ordered, unique enough for one store: `run_` + base-36 milliseconds + 6 random characters. */
export function newRunId(): string {
  return `run_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`
}
