/**
 * What the budgets leave, read from run state: each bound (the run's own, and its thread's over the
 * turns before) minus what was used, minus every reservation still open.
 */
import type { Reservation, RunState } from 'cordage'

/** What is left to reserve from; a figure is absent when no budget bounds it. */
export interface Available {
  tokens?: number
  costUsd?: number
}

/** Whether the run has a budget to reserve from: a token or cost bound of its own or of its thread. */
export function reserving(state: Readonly<RunState>): boolean {
  const b = state.budgets
  return b.maxTokens !== undefined || b.maxCostUsd !== undefined || b.thread?.maxTokens !== undefined || b.thread?.maxCostUsd !== undefined
}

export const usedTokens = (state: Readonly<RunState>): number => state.usage.inputTokens + state.usage.outputTokens

export function available(state: Readonly<RunState>): Available {
  const b = state.budgets
  const used = usedTokens(state)
  const before = state.thread?.usedBefore
  const beforeTokens = before ? before.inputTokens + before.outputTokens : 0
  const tokens = least([
    b.maxTokens === undefined ? undefined : b.maxTokens - used,
    b.thread?.maxTokens === undefined ? undefined : b.thread.maxTokens - beforeTokens - used,
  ])
  const costUsd = least([
    b.maxCostUsd === undefined ? undefined : b.maxCostUsd - state.usage.costUsd,
    b.thread?.maxCostUsd === undefined ? undefined : b.thread.maxCostUsd - (before?.costUsd ?? 0) - state.usage.costUsd,
  ])
  const held = heldBy(state.reservations ?? [])
  return {
    ...(tokens === undefined ? {} : { tokens: tokens - held.tokens }),
    ...(costUsd === undefined ? {} : { costUsd: round(costUsd - held.costUsd) }),
  }
}

/** The budgets and what was used, for a refusal's reason. */
export function budgetText(state: Readonly<RunState>): string {
  const b = state.budgets
  const parts = [
    b.maxTokens !== undefined ? `token budget ${b.maxTokens}, ${usedTokens(state)} used` : undefined,
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

/** Dollars kept to a tenth of a micro-dollar: sums of floats must not refuse a reservation that fits exactly. */
export function round(usd: number): number {
  return Math.round(usd * 1e7) / 1e7
}
