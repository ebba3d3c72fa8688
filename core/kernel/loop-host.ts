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

/** The services whose calls the loop bounds in time. */
export const TimedServices = ['context', 'tools', 'policy', 'guardrail', 'progress', 'compactor', 'verifier', 'phases', 'meter'] as const
Object.freeze(TimedServices)
export type TimedService = (typeof TimedServices)[number]

export interface ResolvedAgentOptions {
  handoff?: (runId: string, to: string) => Promise<RunState>
  handoffs: readonly string[]
  contextTokens?: number
  parallelTools: boolean
  serviceTimeouts: Readonly<Record<TimedService, number>>
  modelRetry: { attempts: number; backoffMs: number }
  ticketTtlMs: number
  observationChars: number
  worker: string
  leaseTtlMs: number
  cancelWatchMs: number
  cancelGraceMs: number
  effectWaitMs: number
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
  /** Someone listens to model deltas (a preview is worth streaming). */
  streaming(): boolean
  streamDelta(event: ModelDeltaEvent): void
}
