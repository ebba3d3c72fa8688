/**
 * @module reservations
 * Budget set aside before a call starts (issue 12). Checking budgets at boundaries lets calls that run
 * together overshoot them together: four calls of one wave each see the same remainder. So a run with a
 * token or cost budget (its own, or its thread's) reserves what each call may cost before it starts: a
 * model call its context tokens plus the model's output cap, a wave of tool calls every call's declared
 * `Tool.cost`, at once, in one budget/reserved event. What is reserved counts as spent until the call is
 * settled (budget/settled, or its action ends in any way). A reservation that does not fit suspends the
 * run with `reservation_refused` before the call starts; `resume` with larger budgets goes on.
 *
 * Reservations are state (core/kernel/state.ts reduces them), so a run rebuilt from its log after a
 * crash still holds the ones that were open, and does not reserve them twice.
 */
import type { Reservation } from '../contracts/data.ts'
import type { ModelService } from '../contracts/services/model.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { RunState } from '../contracts/state.ts'
import type { Checkpoint, Next, PauseDetail } from './flow.ts'
import type { WaitingStatus } from './status.ts'
import type { EventIds, Recorder } from './recorder.ts'
import { KernelProducer } from './version.ts'

/** What is left to reserve from; a figure is absent when no budget bounds it. */
export interface Available {
  tokens?: number
  costUsd?: number
}

/** What reserving needs of the run. */
export interface ReservePort {
  readonly state: RunState
  readonly rec: Recorder
  idsOf(actionId: string | undefined, causation?: number): EventIds
  pause(status: WaitingStatus, reason: string, checkpoint: Checkpoint, detail?: PauseDetail): Promise<Next>
}

/** Whether the run has a budget to reserve from: a token or cost bound of its own or of its thread. */
export function reserving(state: RunState): boolean {
  const b = state.budgets
  return b.maxTokens !== undefined || b.maxCostUsd !== undefined || b.thread?.maxTokens !== undefined || b.thread?.maxCostUsd !== undefined
}

/** What the budgets leave: each bound minus what the run (and the thread's earlier turns) used, minus open reservations. */
export function available(state: RunState): Available {
  const b = state.budgets
  const used = state.usage.inputTokens + state.usage.outputTokens
  const before = state.thread?.usedBefore
  const beforeTokens = before ? before.inputTokens + before.outputTokens : 0
  const tokenBounds = [
    b.maxTokens === undefined ? undefined : b.maxTokens - used,
    b.thread?.maxTokens === undefined ? undefined : b.thread.maxTokens - beforeTokens - used,
  ]
  const costBounds = [
    b.maxCostUsd === undefined ? undefined : b.maxCostUsd - state.usage.costUsd,
    b.thread?.maxCostUsd === undefined ? undefined : b.thread.maxCostUsd - (before?.costUsd ?? 0) - state.usage.costUsd,
  ]
  const held = heldBy(state.reservations ?? [])
  const tokens = least(tokenBounds)
  const costUsd = least(costBounds)
  return {
    ...(tokens === undefined ? {} : { tokens: tokens - held.tokens }),
    ...(costUsd === undefined ? {} : { costUsd: round(costUsd - held.costUsd) }),
  }
}

/** The open reservation of an action (or of the open model call, without `actionId`). */
export function openReservation(state: RunState, kind: Reservation['kind'], actionId?: string): Reservation | undefined {
  return state.reservations?.find((r) => r.kind === kind && r.actionId === actionId)
}

/**
 * What a model call reserves: the step's context tokens plus the model's output cap (`maxOutputTokens`),
 * and the cost of both at the model's prices when it declares them. Undefined when nothing is reserved:
 * no budget, or a model that declares no cap (its calls are checked at the boundaries only). A cap or
 * prices that are not non-negative numbers make a reservation no budget can hold (fail closed).
 */
export function modelReservation(state: RunState, model: ModelService, contextTokens: number): Reservation | string | undefined {
  if (!reserving(state)) return undefined
  const cap = model.maxOutputTokens
  if (cap === undefined) return undefined
  if (!Number.isSafeInteger(cap) || cap < 0) return `the model declares maxOutputTokens ${String(cap)}, which is not a non-negative integer`
  const prices = model.prices
  let costUsd = 0
  if (prices !== undefined) {
    if (!figure(prices?.inputPerMTok) || !figure(prices?.outputPerMTok))
      return 'the model declares prices that are not non-negative numbers (inputPerMTok, outputPerMTok)'
    costUsd = round((contextTokens * prices.inputPerMTok + cap * prices.outputPerMTok) / 1_000_000)
  }
  return { kind: 'model', tokens: Math.ceil(contextTokens) + cap, costUsd }
}

/** What a tool call reserves: its declared `cost`; undefined when it declares none. A malformed cost is a problem (fail closed). */
export function toolReservation(tool: Tool, actionId: string): Reservation | string | undefined {
  const cost = tool.cost
  if (cost === undefined) return undefined
  const tokens = cost?.tokens ?? 0
  const costUsd = cost?.costUsd ?? 0
  if (typeof cost !== 'object' || cost === null || !figure(tokens) || !figure(costUsd))
    return `${tool.name} declares a cost that is not { tokens?, costUsd? } of non-negative numbers`
  if (tokens === 0 && costUsd === 0) return undefined
  return { actionId, kind: 'tool', tokens: Math.ceil(tokens), costUsd }
}

/**
 * Reserve these at once, or suspend the run. Records budget/reserved (with what was available before)
 * when they all fit; otherwise run/checkpoint and run/paused SUSPENDED `reservation_refused`, naming the
 * first call that does not fit and the figures. `what` names each reservation for that reason. Returns
 * the pause's Next when refused, undefined when reserved (or nothing to reserve).
 */
export async function reserveOrSuspend(
  run: ReservePort,
  wanted: readonly (Reservation | string)[],
  what: (r: Reservation) => string,
  causation?: number,
): Promise<Next | undefined> {
  const problem = wanted.find((r): r is string => typeof r === 'string')
  if (problem) return refuse(run, `a reservation cannot be made: ${problem}`)
  const list = wanted as Reservation[]
  if (list.length === 0) return undefined
  const left = available(run.state)
  let tokens = 0
  let costUsd = 0
  for (const r of list) {
    tokens += r.tokens
    costUsd = round(costUsd + r.costUsd)
    const overTokens = left.tokens !== undefined && tokens > left.tokens
    const overCost = left.costUsd !== undefined && costUsd > left.costUsd
    if (overTokens || overCost) {
      const need = overTokens ? `${tokens} tokens` : `$${costUsd}`
      const have = overTokens ? `${left.tokens} tokens` : `$${left.costUsd}`
      const held = (run.state.reservations ?? []).length
      const others = list.length > 1 ? ` (with the ${list.length - 1} other call(s) of its wave, ${list.length} reserved at once)` : ''
      return refuse(
        run,
        `${what(r)} must reserve ${r.tokens} tokens and $${r.costUsd}${others}: ${need} needed, ${have} available${held ? ` after ${held} open reservation(s)` : ''} (${budgetText(run.state)}); resume with a larger budget (cordage resume ${run.state.runId} ${overTokens ? '--max-tokens N' : '--max-cost USD'})`,
      )
    }
  }
  const ids = list.length === 1 && list[0].actionId ? run.idsOf(list[0].actionId, causation) : run.idsOf(undefined, causation)
  run.rec.record('budget/reserved', { reservations: list.map((r) => ({ ...r })), available: left }, KernelProducer, ids)
  return undefined
}

/** Settle an open reservation with what the call cost: budget/settled, and the reservation goes back to the pool. */
export function settle(run: ReservePort, reservation: Reservation | undefined, actual: { tokens: number; costUsd: number }): void {
  if (!reservation) return
  run.rec.record(
    'budget/settled',
    { reservation: { ...reservation }, actual: { tokens: actual.tokens, costUsd: round(actual.costUsd) } },
    KernelProducer,
    run.idsOf(reservation.actionId, run.state.lastSeq),
  )
}

function refuse(run: ReservePort, reason: string): Promise<Next> {
  return run.pause('SUSPENDED', reason, 'suspend', { code: 'reservation_refused' })
}

function budgetText(state: RunState): string {
  const b = state.budgets
  const used = state.usage.inputTokens + state.usage.outputTokens
  const parts = [
    b.maxTokens !== undefined ? `token budget ${b.maxTokens}, ${used} used` : undefined,
    b.maxCostUsd !== undefined ? `cost budget $${b.maxCostUsd}, $${round(state.usage.costUsd)} spent` : undefined,
    b.thread?.maxTokens !== undefined ? `thread token budget ${b.thread.maxTokens}` : undefined,
    b.thread?.maxCostUsd !== undefined ? `thread cost budget $${b.thread.maxCostUsd}` : undefined,
  ]
  return parts.filter(Boolean).join('; ')
}

function heldBy(list: readonly Reservation[]): { tokens: number; costUsd: number } {
  let tokens = 0
  let costUsd = 0
  for (const r of list) {
    tokens += r.tokens
    costUsd += r.costUsd
  }
  return { tokens, costUsd }
}

function least(values: (number | undefined)[]): number | undefined {
  const set = values.filter((v): v is number => v !== undefined)
  return set.length ? Math.min(...set) : undefined
}

function figure(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

/** Dollars kept to a tenth of a micro-dollar: sums of floats must not refuse a reservation that fits exactly. */
function round(usd: number): number {
  return Math.round(usd * 1e7) / 1e7
}

/**
 * Before a model call: reserve its context tokens plus the model's output cap, or suspend. A model
 * reservation still open (the process stopped during the call) is kept, not made twice.
 */
export function reserveModelCall(run: ReservePort, model: ModelService, contextTokens: number, index: number): Promise<Next | undefined> {
  if (openReservation(run.state, 'model')) return Promise.resolve(undefined)
  const wanted = modelReservation(run.state, model, contextTokens)
  if (wanted === undefined) return Promise.resolve(undefined)
  return reserveOrSuspend(run, [wanted], () => `the model call of step ${index}`, run.state.lastSeq)
}

/** After the model answered: settle its reservation with the usage it reported. */
export function settleModelCall(run: ReservePort, usage: { inputTokens: number; outputTokens: number; costUsd: number }): void {
  settle(run, openReservation(run.state, 'model'), { tokens: usage.inputTokens + usage.outputTokens, costUsd: usage.costUsd })
}
