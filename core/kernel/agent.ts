/**
 * @module agent
 * An agent at run time: its isolated context (where its plugins provide services), its budgets, and
 * the commands that start and steer runs: start, submit, approve, reject, reconcile, resume, suspend,
 * cancel, and driveNext for workers. Every command that drives a run first takes the run's lease, so
 * one worker drives a run at a time across processes and machines; the state is then rebuilt from the
 * store, so a command works the same on a run started by another process.
 */
import { DefaultBudgets, type Budgets } from './budget.ts'
import { createDispatch, readService, type Context, type Dispatch } from './cordis.ts'
import { CordageError } from '../contracts/errors.ts'
import type { ModelDeltaEvent, RunEvent } from '../contracts/events.ts'
import { StepGate } from './gate.ts'
import type { ApprovalGrant } from '../contracts/data.ts'
import { RunDriver } from './loop.ts'
import type { StoreService } from '../contracts/services/store.ts'
import { emptyState, replay, replayFrom, type RunState } from './state.ts'
import { isTerminal } from './status.ts'
import { Scrubber } from '../kit/secrets.ts'
import type { LoopHost, ResolvedAgentOptions } from './loop-host.ts'
import { resolveOptions, type AgentOptions, type StartOptions } from './agent-options.ts'
import { checkTask, recordRunStart, startDraft } from './run-start.ts'
import { draftHandled, draftRun } from './run-draft.ts'
import type { PluginSet } from '../contracts/drift.ts'
import { wakingWaiters } from './waiters.ts'
import { followRun, RunWaiters, type FollowOptions } from '../kit/follow.ts'
import type { Actor, ApprovalOptions, ContinueOptions, ReconcileOptions, RunHandle } from '../contracts/commands.ts'
import { HeldRuns, type Driven, type RuntimePort } from './held-runs.ts'
import { decideApproval, revokeGrant } from './approval-commands.ts'
import { acceptHandoff, reconcileRun, resumeRun, type ResumeOptions } from './continue-commands.ts'
import { cancelRun, closeThread, type CancelOptions } from './cancel-command.ts'
import { driveNext } from './worker-command.ts'

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

/**
 * The runtime's commands are free functions over its {@link HeldRuns} (core/kernel/held-runs.ts and the
 * *-command(s).ts files beside it): this class is their facade, and holds what they share.
 */
export class AgentRuntime implements LoopHost, RuntimePort {
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
  /** The runs driven here and the kernel's writer, when the host gave it: private, so no holder of the runtime can take it. */
  readonly #runs: HeldRuns
  readonly #runtimeFor: RuntimeHooks['runtimeFor']
  private active = new Map<string, Driven>()
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
    this.defaultTask = options.defaultTask
    this.scrubber = new Scrubber(options.secrets ?? [])
    this.#runtimeFor = options.runtimeFor
    const dispatch = createDispatch(ctx, options.name)
    this.dispatch = wakingWaiters(dispatch, this.waiters)
    this.previews = dispatch
    ctx.on('internal/service', () => void this.servicesVersion++)
    this.options = resolveOptions(options)
    this.#runs = new HeldRuns(this, this.active, options.writer, options.binding, options.onIdle)
  }

  /** Start a run for `task` (default: the agent's default task) and drive it here. The handle has the run id at once. */
  start(task: string | undefined = this.defaultTask, options: StartOptions = {}): RunHandle {
    const runId = options.runId ?? newRunId()
    const driver = new RunDriver(this, emptyState(runId), this.#runs.writer)
    const checked = checkTask(task, this.name, !!this.defaultTask)
    const drafted = draftHandled(driver, options.thread)
    // A new run is this worker's from its first event: no other worker can claim it before it is driven.
    driver.own({ runId, worker: this.options.worker, token: 1, expiresAt: Date.now() + this.options.leaseTtlMs })
    if (!drafted) recordRunStart(driver.rec, this, startDraft(this, checked, options), options)
    return this.#runs.track(driver, async () => {
      await (drafted ? this.recordStart(driver, checked, options) : driver.flush())
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
    const driver = new RunDriver(this, emptyState(runId), this.#runs.writer)
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
    return decideApproval(this.#runs, runId, actionId, true, options)
  }

  /** Standing grants of this agent (active ones, or all with `inactive`). Empty when the store keeps none. */
  async grants(query: { tool?: string; inactive?: boolean } = {}): Promise<ApprovalGrant[]> {
    const store = this.store()
    return store.grants ? store.grants({ ...query, agent: this.name }) : []
  }

  /** Revoke a standing grant: from now on the calls it covered are asked about again. */
  async revokeGrant(id: string, options: Actor = {}): Promise<ApprovalGrant> {
    return revokeGrant(this.#runs, id, options)
  }

  /** Reject the pending action; the rejection becomes an observation for the model and the run goes on. */
  async reject(runId: string, actionId: string, options: ContinueOptions & { resume?: boolean } = {}): Promise<RunHandle> {
    return decideApproval(this.#runs, runId, actionId, false, options)
  }

  /**
   * Settle an unknown effect (a run in WAITING_RECONCILIATION): `committed` when the action took effect
   * (it closes with that result), not committed when it did not (it runs again under the same
   * idempotency key). Then (by default) continue the run.
   */
  async reconcile(runId: string, actionId: string, committed: boolean, options: ReconcileOptions = {}): Promise<RunHandle> {
    return reconcileRun(this.#runs, runId, actionId, committed, options)
  }

  /**
   * Continue a run: WAITING_USER needs `input`; SUSPENDED continues as it was; WAITING_APPROVAL once
   * its action has been approved or rejected; RUNNING or CANCELLING when no worker owns it any more
   * (its process died and its lease expired): this worker recovers it from the log.
   */
  async resume(runId: string, options: ResumeOptions = {}): Promise<RunHandle> {
    return resumeRun(this.#runs, runId, options)
  }

  /**
   * Take a run that another agent handed to this one (a tool's `handoff`) and drive it: records
   * run/handoff with this agent's plugins and services. The agents must share a store.
   */
  async acceptHandoff(runId: string): Promise<RunHandle> {
    return acceptHandoff(this.#runs, runId)
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
  async cancel(runId: string, options: CancelOptions = {}): Promise<RunState> {
    return cancelRun(this.#runs, runId, options)
  }

  /**
   * Close a thread: it takes no more turns (closing twice keeps the first close). Its turn that has not
   * ended (running, or waiting on an approval, an answer or a reconciliation) is cancelled, as
   * {@link cancel} would. Resolves with that turn's state, or undefined when no turn was going on.
   */
  async closeThread(threadId: string, options: CancelOptions = {}): Promise<RunState | undefined> {
    return closeThread(this.#runs, threadId, options)
  }

  /**
   * Claim the oldest run of this agent that needs a driver (submitted, or whose worker died) and drive
   * it. Resolves undefined when there is none.
   */
  async driveNext(): Promise<RunHandle | undefined> {
    // A run set to pin (onDrift: pin) is driven by the runtime the host built for it, as a resume would be.
    return driveNext(this.#runs, this.damaged, async (runId) => ((await this.#runtimeFor?.(runId)) ?? this).#runs)
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

  /**
   * The plugins (name → version) and, when recorded, their content hashes that a run is bound to: those
   * of its run/start, or of its last run/handoff (hashes unknown for one recorded before handoffs had them).
   */
  async startedWith(runId: string): Promise<PluginSet> {
    const state = await this.load(runId)
    return { plugins: state.plugins, hashes: state.hashes }
  }
}

Object.freeze(AgentRuntime.prototype)
/** Time-ordered, unique enough for one store: `run_` + base-36 milliseconds + 6 random characters. */
export function newRunId(): string {
  return `run_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`
}
