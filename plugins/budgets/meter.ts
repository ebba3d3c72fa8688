/**
 * The meter: the run's token and cost budgets, and what calls reserve of them and of its thread's
 * (over all its turns), read from run state (what the kernel recorded as used and as reserved). It
 * keeps nothing of its own: a run rebuilt from its log is metered exactly as the one that stopped.
 */
import type { MeterAnswer, MeterBound, MeterCall, MeterService, Reservation, RunState, Settlement, Usage } from 'cordage'
import { available, budgetText, reserving, round, usedTokens } from './available.ts'
import { modelReservation, toolReservation } from './estimate.ts'

const nothing: MeterAnswer = { kind: 'reserve', reservations: [], available: {} }

export class BudgetMeter implements MeterService {
  /**
   * The first of the run's own budgets that is spent: its tokens, then its cost. A thread's bound over
   * all its turns is the kernel's (it checks it right after); what a call may reserve counts it too.
   */
  check({ state }: { state: Readonly<RunState> }): MeterBound {
    const b = state.budgets
    const tokens = usedTokens(state)
    if (b.maxTokens !== undefined && tokens >= b.maxTokens)
      return { kind: 'stop', code: 'token_budget_exceeded', reason: `${tokens} tokens used, budget ${b.maxTokens}` }
    if (b.maxCostUsd !== undefined && state.usage.costUsd >= b.maxCostUsd)
      return {
        kind: 'stop',
        code: 'cost_budget_exceeded',
        reason: `$${state.usage.costUsd.toFixed(4)} spent, budget $${b.maxCostUsd}`,
      }
    return { kind: 'ok' }
  }

  /** Every call's share at once, or the first that does not fit, with the figures. */
  reserve({ state, calls }: { state: Readonly<RunState>; calls: readonly MeterCall[] }): MeterAnswer {
    if (!reserving(state)) return nothing
    const wanted = calls.map((call) => ({ call, r: call.kind === 'model' ? modelReservation(call) : toolReservation(call) }))
    const problem = wanted.find((w): w is { call: MeterCall; r: string } => typeof w.r === 'string')
    if (problem) return { kind: 'refuse', reason: `a reservation cannot be made: ${problem.r}` }
    const list = wanted.filter((w): w is { call: MeterCall; r: Reservation } => w.r !== undefined)
    if (!list.length) return nothing
    const left = available(state)
    let tokens = 0
    let costUsd = 0
    for (const { call, r } of list) {
      tokens += r.tokens
      costUsd = round(costUsd + r.costUsd)
      const overTokens = left.tokens !== undefined && tokens > left.tokens
      if (overTokens || (left.costUsd !== undefined && costUsd > left.costUsd)) {
        const need = overTokens ? `${tokens} tokens` : `$${costUsd}`
        const have = overTokens ? `${left.tokens} tokens` : `$${left.costUsd}`
        const held = (state.reservations ?? []).length
        const others = list.length > 1 ? ` (with the ${list.length - 1} other call(s) of its wave, ${list.length} reserved at once)` : ''
        const what = call.kind === 'model' ? `the model call of step ${call.step}` : `call ${call.actionId} (${call.tool})`
        return {
          kind: 'refuse',
          reason: `${what} must reserve ${r.tokens} tokens and $${r.costUsd}${others}: ${need} needed, ${have} available${held ? ` after ${held} open reservation(s)` : ''} (${budgetText(state)}); resume with a larger budget (cordage resume ${state.runId} ${overTokens ? '--max-tokens N' : '--max-cost USD'})`,
        }
      }
    }
    return { kind: 'reserve', reservations: list.map((w) => w.r), available: left }
  }

  /** A call counts its input and output tokens together, and its dollars. */
  settle({ usage }: { state: Readonly<RunState>; reservation: Reservation; usage: Usage }): Settlement {
    return { tokens: usage.inputTokens + usage.outputTokens, costUsd: round(usage.costUsd) }
  }
}
