/**
 * @module services/meter
 * The `meter` contract (optional service; required by an agent whose budgets set tokens or cost):
 * token and cost budgets, and what a call sets aside of them before it starts (issue 12). The kernel
 * asks the meter at the same boundaries as it checks its own bounds (steps, deadline, cancellation):
 * `check` at every boundary of the loop, `reserve` before a model call and before a wave of tool calls,
 * `settle` when a reserved call ended. It records what the meter decided (`budget/reserved`,
 * `budget/settled`, `run/paused` SUSPENDED `reservation_refused`, `run/end` STOPPED with the meter's
 * code) after checking the answer (core/contracts/checks/meter.ts). What was spent is the kernel's:
 * `state.usage` (and `state.thread.usedBefore`) reduced from the recorded events, the open
 * reservations `state.reservations` likewise; the meter only reads them.
 */
import type { Budgets, Reservation, Usage } from '../data.ts'
import type { RunState } from '../state.ts'
export type { Reservation } from '../data.ts'

export const MeterContract = '1.0.0'

/** The codes a meter may stop a run with. */
export const MeterCodes = ['token_budget_exceeded', 'cost_budget_exceeded', 'thread_budget_exceeded'] as const
export type MeterCode = (typeof MeterCodes)[number]

/**
 * A call the kernel asks the meter to reserve for. What the model and the tool declare is passed as
 * they declared it (not checked): judging it is the meter's, and a declaration it cannot read is its
 * refusal.
 */
export type MeterCall =
  | {
      kind: 'model'
      /** The step the call belongs to (1-based). */
      step: number
      /** The step's context tokens (`step/context` `tokens`). */
      contextTokens: number
      /** The model service's `maxOutputTokens`, as declared. */
      maxOutputTokens?: unknown
      /** The model service's `prices`, as declared. */
      prices?: unknown
    }
  | {
      kind: 'tool'
      actionId: string
      tool: string
      /** The tool's `cost`, as declared. */
      cost?: unknown
    }

/** At a boundary: the budgets still hold, or the run stops STOPPED with `code`. */
export type MeterBound = { kind: 'ok' } | { kind: 'stop'; code: MeterCode; reason: string }

/**
 * Before calls start: what each sets aside (none for a call with nothing to reserve), with what was
 * available before; or the refusal's reason, which names the call that does not fit and the figures.
 */
export type MeterAnswer =
  | { kind: 'reserve'; reservations: Reservation[]; available: { tokens?: number; costUsd?: number } }
  | { kind: 'refuse'; reason: string }

/** What a settled call counts as: its tokens and dollars as the budgets count them. */
export interface Settlement {
  tokens: number
  costUsd: number
}

export interface MeterService {
  /**
   * Whether the run's token and cost budgets still hold, at a boundary of the loop (before each
   * model call and before each action). A thread's bound over all its turns (`budgets.thread`) the
   * kernel holds itself, right after (core/kernel/thread-budget.ts); a meter may stop earlier.
   *
   * Contract: reads run state (its `budgets`, `usage`, `thread.usedBefore`), changes nothing, and is
   * deterministic for the same state: a run resumed from its log is judged as the one that stopped.
   * `stop` ends the run STOPPED with its code (one of {@link MeterCodes}) and reason. A throw, a late
   * answer (`serviceTimeouts.meter`) or an answer that is not a bound ends the run FAILED
   * (`internal_error`, `service_timeout`, `verdict_invalid`).
   */
  check(input: { state: Readonly<RunState> }): MeterBound | Promise<MeterBound>
  /**
   * What the calls about to start set aside, all at once: the calls of one wave fit together or none
   * starts. `calls` holds only calls without an open reservation (a retry, or a call run again after
   * a crash, keeps the one it had).
   *
   * Contract: at most one reservation per call asked about, each naming its call (`kind`, and
   * `actionId` for a tool), with whole tokens and dollars that are finite and not negative; none for a
   * call that has nothing to reserve, none at all for a run without a token or cost budget (the
   * kernel then records nothing). What is available is each budget minus what was used (`state.usage`,
   * and for a thread `state.thread.usedBefore` too) minus every open reservation (`state.reservations`).
   * A refusal suspends the run before any of the calls starts (SUSPENDED `reservation_refused`, its
   * reason shown to the person who resumes it). A throw or an answer that is not one of these refuses
   * too, naming the meter; a late answer ends the run FAILED `service_timeout`.
   */
  reserve(input: { state: Readonly<RunState>; calls: readonly MeterCall[] }): MeterAnswer | Promise<MeterAnswer>
  /**
   * What a reserved call counts as once it ended, from the usage it reported (the model's `usage`; a
   * tool's `ToolResult.usage`, zero when it reported none). The kernel records it in `budget/settled`
   * and the reservation goes back to the pool.
   *
   * Contract: tokens and dollars, finite and not negative. A throw, a late answer or anything
   * else ends the run FAILED at its next boundary (the call's own outcome is on record first).
   */
  settle(input: { state: Readonly<RunState>; reservation: Reservation; usage: Usage }): Settlement | Promise<Settlement>
}

declare module 'cordis' {
  interface Context {
    meter: MeterService
  }
}

/**
 * The budgets that need a meter, as the preset names them (`maxTokens`, `thread.maxCostUsd`, ...);
 * empty when only steps, the deadline, repairs or turns are bounded. An agent that sets any of these
 * without a plugin that provides `meter` is refused, never run without them.
 */
export function meteredBudgets(budgets: Partial<Budgets> | undefined): string[] {
  const out: string[] = []
  if (budgets?.maxTokens !== undefined) out.push('maxTokens')
  if (budgets?.maxCostUsd !== undefined) out.push('maxCostUsd')
  if (budgets?.thread?.maxTokens !== undefined) out.push('thread.maxTokens')
  if (budgets?.thread?.maxCostUsd !== undefined) out.push('thread.maxCostUsd')
  return out
}

/** The fix a refusal names: the plugin that provides the meter. */
export const MeterPlugin = 'budgets'

/** Why an agent without a meter is refused budgets it needs one for, and what to add. */
export function meterMissing(agent: string, needs: readonly string[]): string {
  return `the budgets ${needs.join(', ')} need a plugin that provides "meter", and agent "${agent}" has none: add \`- ${MeterPlugin}\` to agents.${agent}.plugins`
}
