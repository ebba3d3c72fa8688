/**
 * @module agent-options
 * What an agent runtime is built with (the host fills it from the preset), and the defaults that make
 * it complete: the resolved options every run driver of the agent reads.
 */
import { hostname } from 'node:os'
import type { StoreWriter } from '../contracts/services/store.ts'
import type { Secret } from '../kit/secrets.ts'
import type { ParentLink } from '../contracts/services/agents.ts'
import type { RunOverrides } from '../contracts/events.ts'
import type { Budgets } from './budget.ts'
import type { BindingCheck } from '../contracts/drift.ts'
import type { ResolvedAgentOptions, TimedService } from './loop-host.ts'

export interface AgentOptions extends Partial<Omit<ResolvedAgentOptions, 'serviceTimeouts'>> {
  name: string
  /** The task a run gets when started without one (the preset's `task`). */
  defaultTask?: string
  budgets?: Partial<Budgets>
  /** Every plugin of the agent, name → version, recorded in run/start. */
  plugins?: Record<string, string>
  /** Content hash of each plugin's folder (host/plugin-hash.ts), name → hash, recorded in run/start. */
  hashes?: Record<string, string>
  /**
   * What differs from the plugins a run is bound to, and what is decided for each, when the run goes on
   * (the host's, core/kit/drift.ts: the preset's `onDrift`, and the plugins pinned for one run). Without
   * it every change the command does not accept (`acceptDrift`) is refused.
   */
  binding?: BindingCheck
  /**
   * How long the loop waits for each service's answer before it ends the run with `service_timeout`
   * (milliseconds; the run's deadline bounds them too). Defaults: {@link DefaultServiceTimeouts}.
   */
  serviceTimeouts?: Partial<Record<TimedService, number>>
  /** Values to keep out of everything the agent's runs record (core/kit/secrets.ts): API keys, tokens. */
  secrets?: readonly Secret[]
  /**
   * The kernel's store writer, which the host hands to each runtime it builds (core/kernel/store-writer.ts).
   * Without it the runtime reads runs, and every write it tries is refused (`store_write_refused`).
   */
  writer?: StoreWriter
}

/**
 * Generous by default: a policy or guardrail answers in microseconds and a hung one should be noticed
 * soon; a compactor may ask the model for a summary, a verifier may run a test suite.
 */
export const DefaultServiceTimeouts: Readonly<Record<TimedService, number>> = Object.freeze({
  context: 30_000,
  tools: 30_000,
  policy: 10_000,
  guardrail: 10_000,
  progress: 10_000,
  compactor: 120_000,
  verifier: 600_000,
  phases: 10_000,
  meter: 10_000,
})

export interface StartOptions {
  /** Use this id instead of a generated one (must be unique in the store). */
  runId?: string
  /** Override budgets for this run only. */
  budgets?: Partial<Budgets>
  /** Start it as a child of another run (a subagent), recorded in run/start. */
  parent?: ParentLink
  /** What the run was started with instead of the preset's (`cordage run --model`), recorded in run/start. */
  overrides?: RunOverrides
  /**
   * Start the run as the next turn of this thread (created when new): it sees the thread's earlier
   * turns, and the thread's budgets hold over all of them. `thread_busy` while the previous turn has
   * not ended; `thread_closed` once the thread was closed.
   */
  thread?: string
}

/** `options` with every default filled in. */
export function resolveOptions(options: AgentOptions): ResolvedAgentOptions {
  return {
    handoff: options.handoff,
    handoffs: Object.freeze([...(options.handoffs ?? [])]),
    contextTokens: options.contextTokens,
    parallelTools: options.parallelTools ?? true,
    serviceTimeouts: Object.freeze({ ...DefaultServiceTimeouts, ...options.serviceTimeouts }),
    modelRetry: options.modelRetry ?? { attempts: 3, backoffMs: 250 },
    ticketTtlMs: options.ticketTtlMs ?? 60_000,
    observationChars: options.observationChars ?? 4000,
    worker: options.worker ?? `${hostname()}:${process.pid}`,
    leaseTtlMs: options.leaseTtlMs ?? 30_000,
    cancelWatchMs: options.cancelWatchMs ?? 250,
    cancelGraceMs: options.cancelGraceMs ?? 2000,
    effectWaitMs: options.effectWaitMs ?? 10_000,
    interceptTool: options.interceptTool,
  }
}
