/**
 * The budgets plugin: the meter's own rules, each at its edge (which budget is spent, what a call
 * reserves, what fits), and through the front door, a run of the support desk that it stops, suspends
 * and settles. Reservations from the kernel's side: test/reservations.test.ts; a meter that fails:
 * test/security/meter.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkMeterAnswer, checkMeterBound, emptyState, overThreadBudget, type MeterCall, type RunEvent, type RunState } from 'cordage'
import { supportDesk } from '../../../test/helpers.ts'
import { BudgetMeter } from '../meter.ts'
import { available } from '../available.ts'

const meter = new BudgetMeter()
const usage = (inputTokens = 0, outputTokens = 0, costUsd = 0) => ({ inputTokens, outputTokens, costUsd })

function state(over: Partial<RunState> = {}): RunState {
  return { ...emptyState('run_m'), budgets: { maxSteps: 5, maxRepairs: 0 }, ...over }
}

const tool = (actionId: string, cost?: unknown): MeterCall => ({ kind: 'tool', actionId, tool: 'paid_search', cost })
const model = (contextTokens: number, maxOutputTokens?: unknown, prices?: unknown): MeterCall => ({
  kind: 'model',
  step: 2,
  contextTokens,
  maxOutputTokens,
  prices,
})

describe('budgets: check at a boundary', () => {
  it('holds without token or cost bounds, whatever was spent', () => {
    assert.deepEqual(meter.check({ state: state({ usage: usage(1e9, 1e9, 1e6) }) }), { kind: 'ok' })
  })

  it('counts input and output tokens together, up to the budget', () => {
    const budgets = { maxSteps: 5, maxRepairs: 0, maxTokens: 100 }
    assert.deepEqual(meter.check({ state: state({ budgets, usage: usage(60, 39) }) }), { kind: 'ok' })
    assert.deepEqual(meter.check({ state: state({ budgets, usage: usage(60, 40) }) }), {
      kind: 'stop',
      code: 'token_budget_exceeded',
      reason: '100 tokens used, budget 100',
    })
    const zero = { ...budgets, maxTokens: 0 }
    assert.equal((meter.check({ state: state({ budgets: zero }) }) as { code?: string }).code, 'token_budget_exceeded')
  })

  it('stops at the cost budget, and names tokens before cost', () => {
    const budgets = { maxSteps: 5, maxRepairs: 0, maxCostUsd: 0.5 }
    assert.deepEqual(meter.check({ state: state({ budgets, usage: usage(0, 0, 0.49) }) }), { kind: 'ok' })
    assert.deepEqual(meter.check({ state: state({ budgets, usage: usage(0, 0, 0.5) }) }), {
      kind: 'stop',
      code: 'cost_budget_exceeded',
      reason: '$0.5000 spent, budget $0.5',
    })
    const both = { ...budgets, maxTokens: 1 }
    assert.equal(
      (meter.check({ state: state({ budgets: both, usage: usage(5, 5, 1) }) }) as { code?: string }).code,
      'token_budget_exceeded',
    )
  })

  it("leaves a thread's bound to the kernel, and reserves within the same figures it holds", () => {
    const budgets = { maxSteps: 5, maxRepairs: 0, thread: { maxTokens: 1000, maxCostUsd: 1 } }
    const thread = { id: 'th_1', turn: 2, usedBefore: usage(900, 0, 0.2) } as RunState['thread']
    // The kernel ends the turn thread_budget_exceeded (core/kernel/thread-budget.ts): the meter does not judge it twice.
    const over = state({ budgets, thread, usage: usage(60, 40) })
    assert.deepEqual(meter.check({ state: over }), { kind: 'ok' })
    assert.deepEqual(overThreadBudget(over), {
      code: 'thread_budget_exceeded',
      reason: 'thread th_1: 1000 tokens used over 2 turn(s), budget 1000 (budgets.thread.maxTokens)',
    })
    // Around each edge: nothing is left to reserve exactly when the kernel stops the turn.
    for (const [tokens, cost] of [
      [99, 0],
      [100, 0],
      [101, 0],
      [0, 0.79],
      [0, 0.8],
      [0, 0.81],
    ]) {
      const s = state({ budgets, thread, usage: usage(tokens, 0, cost) })
      const left = available(s)
      const stops = overThreadBudget(s) !== undefined
      assert.equal(left.tokens! <= 0 || left.costUsd! <= 0, stops, `${tokens} tokens, $${cost}: ${JSON.stringify(left)}`)
    }
  })

  it('answers bounds the kernel accepts', () => {
    for (const s of [state(), state({ budgets: { maxSteps: 1, maxRepairs: 0, maxTokens: 0 } })])
      assert.ok(checkMeterBound(meter.check({ state: s })).ok)
  })
})

describe('budgets: reserve', () => {
  const budgets = { maxSteps: 5, maxRepairs: 0, maxTokens: 1000 }

  it('reserves nothing for a run without a token or cost budget, nor for calls that declare nothing', () => {
    const none = { kind: 'reserve', reservations: [], available: {} }
    assert.deepEqual(meter.reserve({ state: state(), calls: [tool('s1.a1', { tokens: 10 }), model(50, 100)] }), none)
    assert.deepEqual(meter.reserve({ state: state({ budgets }), calls: [tool('s1.a1'), tool('s1.a2', {}), model(50)] }), none)
  })

  it('reserves a wave at once when it fits exactly, with what was available', () => {
    const calls = [tool('s1.a1', { tokens: 400 }), tool('s1.a2', { tokens: 300 })]
    const answer = meter.reserve({ state: state({ budgets, usage: usage(200, 100) }), calls })
    assert.deepEqual(answer, {
      kind: 'reserve',
      reservations: [
        { actionId: 's1.a1', kind: 'tool', tokens: 400, costUsd: 0 },
        { actionId: 's1.a2', kind: 'tool', tokens: 300, costUsd: 0 },
      ],
      available: { tokens: 700 },
    })
    assert.ok(checkMeterAnswer(answer, calls).ok)
  })

  it('refuses the whole wave when together it does not fit, naming the call and the figures', () => {
    const held = [{ kind: 'model' as const, tokens: 100, costUsd: 0 }]
    const calls = [tool('s1.a1', { tokens: 400 }), tool('s1.a2', { tokens: 301 })]
    const answer = meter.reserve({ state: state({ budgets, usage: usage(200), reservations: held }), calls })
    assert.equal(answer.kind, 'refuse')
    assert.equal(
      (answer as { reason: string }).reason,
      'call s1.a2 (paid_search) must reserve 301 tokens and $0 (with the 1 other call(s) of its wave, 2 reserved at once): 701 tokens needed, 700 tokens available after 1 open reservation(s) (token budget 1000, 200 used); resume with a larger budget (cordage resume run_m --max-tokens N)',
    )
  })

  it("reserves a model call's context plus its output cap, and its cost at the declared prices", () => {
    const cost = { maxSteps: 5, maxRepairs: 0, maxCostUsd: 1 }
    const answer = meter.reserve({ state: state({ budgets: cost }), calls: [model(999.5, 1000, { inputPerMTok: 1000, outputPerMTok: 0 })] })
    assert.deepEqual(answer, {
      kind: 'reserve',
      reservations: [{ kind: 'model', tokens: 2000, costUsd: 0.9995 }],
      available: { costUsd: 1 },
    })
    const over = meter.reserve({ state: state({ budgets: cost }), calls: [model(0, 1000, { inputPerMTok: 0, outputPerMTok: 2000 })] })
    assert.match(
      (over as { reason: string }).reason,
      /^the model call of step 2 must reserve 1000 tokens and \$2: \$2 needed, \$1 available/,
    )
  })

  it("counts a thread's earlier turns in what is available", () => {
    const thread = { id: 'th_1', turn: 3, usedBefore: usage(600, 0, 0) } as RunState['thread']
    const answer = meter.reserve({
      state: state({ budgets: { maxSteps: 5, maxRepairs: 0, thread: { maxTokens: 1000 } }, thread, usage: usage(100) }),
      calls: [tool('s1.a1', { tokens: 301 })],
    })
    assert.match((answer as { reason: string }).reason, /301 tokens needed, 300 tokens available \(thread token budget 1000\)/)
  })

  it('refuses what it cannot read rather than reserve nothing (fail closed)', () => {
    for (const [call, why] of [
      [tool('s1.a1', { tokens: -1 }), /paid_search declares a cost that is not/],
      [tool('s1.a1', 'lots'), /paid_search declares a cost that is not/],
      [tool('s1.a1', { costUsd: Number.NaN }), /paid_search declares a cost that is not/],
      [model(10, 1.5), /maxOutputTokens 1.5, which is not a non-negative integer/],
      [model(10, '100'), /maxOutputTokens 100, which is not/],
      [model(10, 100, { inputPerMTok: -1, outputPerMTok: 1 }), /prices that are not non-negative numbers/],
    ] as [MeterCall, RegExp][]) {
      const answer = meter.reserve({ state: state({ budgets }), calls: [call] })
      assert.equal(answer.kind, 'refuse')
      assert.match((answer as { reason: string }).reason, /^a reservation cannot be made: /)
      assert.match((answer as { reason: string }).reason, why)
    }
  })
})

describe('budgets: settle', () => {
  it('counts input and output tokens together, and dollars to a tenth of a micro-dollar', () => {
    const reservation = { kind: 'model' as const, tokens: 500, costUsd: 0.1 }
    assert.deepEqual(meter.settle({ state: state(), reservation, usage: usage(120, 30, 0.1 + 0.2) }), { tokens: 150, costUsd: 0.3 })
  })
})

describe('budgets: through a run', () => {
  it('stops the run at the boundary once the token budget is spent, before the next model call', async () => {
    const desk = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }],
      model: { onExhausted: 'repeat-last', usage: usage(100, 20) },
      budgets: { maxTokens: 300 },
    })
    try {
      const run = await desk.agent.run('spend')
      assert.deepEqual([run.status, run.failureCode, run.reason], ['STOPPED', 'token_budget_exceeded', '360 tokens used, budget 300'])
      assert.equal(desk.model().requests.length, 3)
      const start = (await desk.events(run.runId))[0] as RunEvent<'run/start'>
      assert.equal(start.data.services.meter, 'budgets@1.0.0')
    } finally {
      await desk.stop()
    }
  })

  it('reserves each model call before it starts and settles it after, in the order the README shows', async () => {
    const desk = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: 'Within 30 days [source: policy/refunds#2].' }],
      model: { usage: usage(100, 20), maxOutputTokens: 50 },
      budgets: { maxTokens: 10_000 },
    })
    try {
      const run = await desk.agent.run('ask')
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await desk.events(run.runId)
      const trace = events.filter((e) => /^(budget\/|step\/model-re|run\/end)/.test(e.type)).map((e) => e.type)
      const call = ['budget/reserved', 'step/model-request', 'step/model-response', 'budget/settled']
      assert.deepEqual(trace, [...call, ...call, 'run/end'])
      const settled = events.filter((e) => e.type === 'budget/settled') as RunEvent<'budget/settled'>[]
      assert.deepEqual(settled[0].data.actual, { tokens: 120, costUsd: 0 })
      assert.ok(
        settled.every((e) => e.producer.startsWith('kernel@')),
        'the kernel records what the meter decided',
      )
      assert.deepEqual(run.reservations, [])
    } finally {
      await desk.stop()
    }
  })
})
