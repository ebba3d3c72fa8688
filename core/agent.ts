/**
 * @module agent
 * An agent at run time: its isolated context (where its plugins provide services), its budgets, and
 * the commands that start and steer runs: start, approve, reject, resume, suspend, cancel. Runs driven
 * in this process are tracked so a command never races the driver; runs not driven here are loaded
 * from the store, so the same commands work on a run started by another process.
 */
import { DefaultBudgets, type Budgets } from './budget.ts'
import { createDispatch, readService, ServiceNames, type Context, type Dispatch } from './cordis.ts'
import { CordageError } from './errors.ts'
import { StepGate } from './gate.ts'
import { RunDriver } from './loop.ts'
import type { StoreService } from './services/store.ts'
import { emptyState, replay, type RunState } from './state.ts'
import { isTerminal, type RunStatus } from './status.ts'
import { KernelProducer } from './version.ts'

export interface AgentOptions {
  name: string
  /** The task a run gets when started without one (the preset's `task`). */
  defaultTask?: string
  budgets?: Partial<Budgets>
  /** Every plugin of the agent, name → version, recorded in run/start. */
  plugins?: Record<string, string>
  /** Token limit of a projection before the compactor (if any) is asked to shrink it. */
  contextTokens?: number
  /** Attempts for a transient model failure, and the first backoff (doubled per attempt, jittered). */
  modelRetry?: { attempts: number; backoffMs: number }
  /** Lifetime of an authorization ticket. */
  ticketTtlMs?: number
  /** Observations longer than this are shortened for the model (the full output stays in the store). */
  observationChars?: number
}

export interface ResolvedAgentOptions {
  contextTokens?: number
  modelRetry: { attempts: number; backoffMs: number }
  ticketTtlMs: number
  observationChars: number
}

/** A run being driven: its id at once, its final (or paused) state when `done` resolves. */
export interface RunHandle {
  runId: string
  done: Promise<RunState>
}

export interface StartOptions {
  /** Use this id instead of a generated one (must be unique in the store). */
  runId?: string
  /** Override budgets for this run only. */
  budgets?: Partial<Budgets>
}

export interface Actor {
  /** Who gives the command, recorded in the event (a user name, `cli`, `api`). */
  by?: string
  reason?: string
}

export class AgentRuntime {
  readonly name: string
  readonly budgets: Budgets
  readonly gate = new StepGate()
  readonly dispatch: Dispatch
  readonly options: ResolvedAgentOptions
  readonly plugins: Record<string, string>
  readonly defaultTask: string | undefined
  private active = new Map<string, { driver: RunDriver; done: Promise<RunState> }>()
  /** Bumped whenever cordis sets or removes any service, so runs re-read theirs only after a change. */
  servicesVersion = 0

  constructor(readonly ctx: Context, options: AgentOptions) {
    this.name = options.name
    this.budgets = { ...DefaultBudgets, ...options.budgets }
    this.plugins = options.plugins ?? {}
    this.defaultTask = options.defaultTask
    this.dispatch = createDispatch(ctx, options.name)
    ctx.on('internal/service', () => { this.servicesVersion++ })
    this.options = {
      contextTokens: options.contextTokens,
      modelRetry: options.modelRetry ?? { attempts: 3, backoffMs: 250 },
      ticketTtlMs: options.ticketTtlMs ?? 60_000,
      observationChars: options.observationChars ?? 4000,
    }
  }

  /** Start a run for `task` (default: the agent's default task). The returned handle has the run id at once. */
  start(task: string | undefined = this.defaultTask, options: StartOptions = {}): RunHandle {
    if (typeof task !== 'string' || task.trim() === '') {
      throw new CordageError('invalid_input', `a run needs a task: a non-empty string${this.defaultTask ? '' : ` (agent "${this.name}" has no default task)`}`)
    }
    const runId = options.runId ?? newRunId()
    const driver = new RunDriver(this, emptyState(runId))
    const budgets = { ...this.budgets, ...options.budgets }
    return this.track(driver, async () => {
      const services: Record<string, string> = {}
      for (const name of ServiceNames) {
        const entry = readService(this.ctx, name)
        if (entry) services[name] = entry.provider
      }
      if (!services.store) throw new CordageError('service_missing', `agent "${this.name}" has no store: add a plugin that provides "store" (for example store-memory)`)
      const now = Date.now()
      driver.rec.record('run/start', {
        agent: this.name, task, plugins: { ...this.plugins }, services, budgets,
        deadline: budgets.deadlineMs !== undefined ? now + budgets.deadlineMs : undefined,
      }, KernelProducer)
      driver.rec.record('turn/start', { input: task }, KernelProducer, { turnId: 't1' })
      await driver.rec.flush()
      return driver.drive()
    })
  }

  /** Start a run and wait for it to pause or end. */
  async run(task?: string, options?: StartOptions): Promise<RunState> {
    return this.start(task, options).done
  }

  /**
   * Approve the pending action and (by default) continue the run. The approval is bound to the action's
   * arguments hash; if the policy version changed since the request, the action is decided again.
   */
  async approve(runId: string, actionId: string, actor: Actor & { resume?: boolean } = {}): Promise<RunHandle> {
    return this.decide(runId, actionId, true, actor)
  }

  /** Reject the pending action; the rejection becomes an observation for the model and the run goes on. */
  async reject(runId: string, actionId: string, actor: Actor & { resume?: boolean } = {}): Promise<RunHandle> {
    return this.decide(runId, actionId, false, actor)
  }

  /**
   * Continue a waiting run: WAITING_USER needs `input`; SUSPENDED continues as it was; WAITING_APPROVAL
   * continues once its action has been approved or rejected.
   */
  async resume(runId: string, actor: Actor & { input?: string } = {}): Promise<RunHandle> {
    this.assertIdle(runId)
    const state = await this.load(runId)
    const by = actor.by ?? 'api'
    const driver = new RunDriver(this, state)
    switch (state.status) {
      case 'WAITING_USER':
        if (typeof actor.input !== 'string' || !actor.input.trim()) {
          throw new CordageError('invalid_input', `run ${runId} waits for the user's answer to: "${state.waiting?.reason}"; resume it with an input`)
        }
        driver.rec.record('run/resumed', { from: state.status, by, input: actor.input }, KernelProducer, turn(state))
        break
      case 'SUSPENDED':
        driver.rec.record('run/resumed', { from: state.status, by }, KernelProducer, turn(state))
        break
      case 'WAITING_RECONCILIATION':
        throw new CordageError('run_not_waiting', `run ${runId} waits for someone to settle whether action ${state.waiting?.actionId} took effect (unknown_effect); until reconciliation lands with the durable store, cancel it`)
      case 'WAITING_APPROVAL': {
        const action = state.waiting?.actionId ? state.actions[state.waiting.actionId] : undefined
        if (action?.status === 'awaiting_approval') {
          throw new CordageError('run_not_waiting', `run ${runId} still waits for approval of ${action.id} (${action.tool}): approve or reject it first`)
        }
        driver.rec.record('run/resumed', { from: state.status, by }, KernelProducer, turn(state))
        break
      }
      default:
        throw notWaiting(state)
    }
    return this.track(driver, async () => { await driver.rec.flush(); return driver.drive() })
  }

  /** Ask a run to pause SUSPENDED at its next step boundary. Only for runs driven in this process. */
  suspend(runId: string, actor: Actor = {}): boolean {
    const active = this.active.get(runId)
    active?.driver.suspend(actor.by ?? 'api', actor.reason)
    return !!active
  }

  /**
   * Cancel a run. A run driven here is aborted (model call and tool in flight get the abort) and ends
   * CANCELLED at its next boundary; a waiting run ends CANCELLED at once and its pending approval is void.
   */
  async cancel(runId: string, actor: Actor = {}): Promise<RunState> {
    const active = this.active.get(runId)
    if (active) {
      active.driver.cancel(actor.by ?? 'api', actor.reason)
      return active.done
    }
    const state = await this.load(runId)
    if (isTerminal(state.status)) throw notWaiting(state)
    const driver = new RunDriver(this, state)
    driver.cancel(actor.by ?? 'api', actor.reason)
    return this.track(driver, () => driver.drive()).done
  }

  /** Current state of a run, rebuilt from the store. */
  async load(runId: string): Promise<RunState> {
    const active = this.active.get(runId)
    if (active) return active.driver.state
    return replay(runId, await this.store().load(runId))
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

  private async decide(runId: string, actionId: string, approved: boolean, actor: Actor & { resume?: boolean }): Promise<RunHandle> {
    this.assertIdle(runId)
    const state = await this.load(runId)
    if (state.status !== 'WAITING_APPROVAL') throw notWaiting(state)
    const action = state.actions[actionId]
    if (!action || action.status !== 'awaiting_approval') {
      const waiting = state.waiting?.actionId
      const phrase: Record<string, string> = {
        proposed: 'not decided yet', allowed: 'already allowed by policy', denied: 'denied by policy', approved: 'already approved',
        rejected: 'already rejected', running: 'running', succeeded: 'done', failed: 'failed',
      }
      throw new CordageError('action_not_pending', `action ${actionId} of run ${runId} ${action ? `is ${phrase[action.status] ?? action.status}` : 'does not exist'}${waiting ? `; the run waits for ${waiting}` : ''}`)
    }
    const by = actor.by ?? 'api'
    const driver = new RunDriver(this, state)
    driver.rec.record('tool/approval-decided', { approved, by, reason: actor.reason }, KernelProducer, { ...turn(state), stepId: action.stepId, actionId, causation: action.requestedSeq })
    if (actor.resume === false) {
      return this.track(driver, async () => { await driver.rec.flush(); return driver.state })
    }
    driver.rec.record('run/resumed', { from: 'WAITING_APPROVAL', by }, KernelProducer, turn(state))
    return this.track(driver, async () => { await driver.rec.flush(); return driver.drive() })
  }

  /**
   * Drive `body` for a run. It starts on the next microtask: the caller has the handle (and the run id)
   * before any event of the run is dispatched, even with a store that writes synchronously.
   */
  private track(driver: RunDriver, body: () => Promise<RunState>): RunHandle {
    const runId = driver.runId
    const done = Promise.resolve().then(body).finally(() => { if (this.active.get(runId)?.driver === driver) this.active.delete(runId) })
    this.active.set(runId, { driver, done })
    return { runId, done }
  }

  private assertIdle(runId: string) {
    if (this.active.has(runId)) throw new CordageError('run_busy', `run ${runId} is being driven in this process; wait for it to pause or end`)
  }
}

/** Ids for a command's event: the current turn, and the step when the run paused inside one. */
function turn(state: RunState) {
  return { turnId: state.turns ? `t${state.turns}` : undefined, stepId: state.stepOpen ? `s${state.steps}` : undefined }
}

function notWaiting(state: RunState): CordageError {
  const what: Partial<Record<RunStatus, string>> = {
    COMPLETED: 'it has completed', FAILED: 'it has failed', FAILED_VERIFICATION: 'it failed verification',
    STOPPED: 'it was stopped', CANCELLED: 'it was cancelled', RUNNING: 'it is running',
  }
  return new CordageError('run_not_waiting', `run ${state.runId} is ${state.status}: ${what[state.status] ?? 'it is not waiting for this command'}`)
}

/** Time-ordered, unique enough for one store: `run_` + base-36 milliseconds + 6 random characters. */
export function newRunId(): string {
  return `run_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`
}
