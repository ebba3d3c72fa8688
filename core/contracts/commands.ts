/**
 * @module commands
 * What the agent runtime's commands take and hand back (core/kernel/agent.ts): who gives a command,
 * whether it accepts drift, how far an approval reaches, and the handle of a run being driven.
 */
import type { ApprovalScope, ArgsPattern } from './data.ts'
import type { RunState } from './state.ts'

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

/** How an unknown effect is settled by hand (`receipt`: what the tool's call came to, when it committed), and whether the run goes on. */
export interface ReconcileOptions extends ContinueOptions {
  resume?: boolean
  receipt?: unknown
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
