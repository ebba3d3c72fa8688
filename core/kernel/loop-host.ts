/**
 * @module loop-host
 * What the run driver (core/kernel/loop.ts) needs from the agent runtime that owns it, and nothing more,
 * so the loop does not depend on the runtime's class (which builds drivers, and so
 * depends on the loop) and the two read as separate layers.
 */
import type { Context, Dispatch } from './cordis.ts'
import type { ModelDeltaEvent } from '../contracts/events.ts'
import type { StepGate } from './gate.ts'
import type { Scrubber } from '../kit/secrets.ts'
import type { RunState } from '../contracts/state.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { StoreService } from '../contracts/services/store.ts'

/** The services whose calls the loop bounds in time. */
export const TimedServices = ['context', 'tools', 'policy', 'guardrail', 'progress', 'compactor', 'verifier', 'phases', 'meter'] as const
Object.freeze(TimedServices)
export type TimedService = (typeof TimedServices)[number]

export interface ResolvedAgentOptions {
  /** Pass a run handed to another agent on (the host's: that agent accepts it and drives it). */
  handoff?: (runId: string, to: string) => Promise<RunState>
  /** Agents this one may hand runs to (the preset's `handoffs`); a tool's handoff to another is dropped. Default none. */
  handoffs: readonly string[]
  /** Token limit of a projection before the compactor (if any) is asked to shrink it. */
  contextTokens?: number
  /** Run the independent calls of one step side by side (default true); false runs them one by one. */
  parallelTools: boolean
  serviceTimeouts: Readonly<Record<TimedService, number>>
  /** Attempts for a transient model failure, and the first backoff (doubled per attempt, jittered). */
  modelRetry: { attempts: number; backoffMs: number }
  /** Lifetime of an authorization ticket. */
  ticketTtlMs: number
  /** Observations longer than this are shortened for the model (the full output stays in the store). */
  observationChars: number
  /** Who this process is, as the owner of the runs it drives (default: host name and process id). */
  worker: string
  /** How long a run's lease lasts without renewal: how soon another worker may take over a run whose process died. */
  leaseTtlMs: number
  /** How often a driver looks for a cancel request made in another process (shared stores only). */
  cancelWatchMs: number
  /** How long a side-effecting tool call may go on finishing after cancellation, to learn whether it committed. */
  cancelGraceMs: number
  /** How long to wait for another run's pending effect under the same idempotency key. */
  effectWaitMs: number
  /**
   * Stand in for a tool at each call (fault injection for `cordage eval`): given the tool about to be
   * invoked, return the one to invoke. Set by host code only; a preset cannot reach it. The kernel still
   * applies the returned tool's policy-checked ticket, time limit and outcome handling.
   */
  interceptTool?: (tool: Tool) => Tool
}

/** The agent runtime as its run drivers see it. */
export interface LoopHost {
  readonly ctx: Context
  readonly name: string
  readonly gate: StepGate
  readonly dispatch: Dispatch
  readonly options: ResolvedAgentOptions
  /** What the agent's runs scrub from every event and ledger write before it is stored. */
  readonly scrubber: Scrubber
  /** Bumped whenever a service changes, so runs re-read theirs only after a change. */
  readonly servicesVersion: number
  /** The agent's store (`service_missing` without one). */
  store(): StoreService
  /** Someone listens to model deltas (a preview is worth streaming). */
  streaming(): boolean
  streamDelta(event: ModelDeltaEvent): void
}
