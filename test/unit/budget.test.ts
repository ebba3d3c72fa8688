/**
 * core/kernel/budget.ts: the bounds the kernel checks at every boundary, each at its edge, and a deadline that
 * passes between steps (a slow tool, a long wait for approval) through a real run. Tokens and cost are
 * the meter's (plugins/budgets/test/meter.test.ts); the budgets a run starts with are core/kit/budgets.ts.
 */
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, it } from 'node:test'
import { DefaultBudgets, outOfSteps, overBudget, type Budgets, type BudgetState } from '../../core/kernel/budget.ts'
import { startBudgets } from '../../core/kit/budgets.ts'
import { supportDesk, type Harness } from '../helpers.ts'

const usage = (inputTokens = 0, outputTokens = 0, costUsd = 0) => ({ inputTokens, outputTokens, costUsd })
const budgets = (over: Partial<Budgets> = {}): Budgets => ({ maxSteps: 5, maxRepairs: 0, ...over })
const state = (over: Partial<BudgetState> = {}): BudgetState => ({ steps: 0, usage: usage(), ...over })

describe('overBudget', () => {
  it('holds with no bounds but steps, whatever was spent', () => {
    assert.equal(overBudget(budgets(), state({ usage: usage(1e9, 1e9, 1e6) }), Date.now()), undefined)
  })

  it('ends the run from the deadline on, not before', () => {
    const s = state({ deadline: 1_000 })
    assert.equal(overBudget(budgets({ deadlineMs: 500 }), s, 999), undefined)
    assert.deepEqual(overBudget(budgets({ deadlineMs: 500 }), s, 1_000), { code: 'deadline_exceeded', reason: 'deadline of 500 ms passed' })
    assert.equal(overBudget(budgets({ deadlineMs: 500 }), s, 5_000)?.code, 'deadline_exceeded')
    assert.equal(overBudget(budgets(), state(), 1e15), undefined, 'no deadline, no end')
  })

  it('leaves tokens and cost to the meter: spent past them, the kernel does not stop the run', () => {
    const all = budgets({ maxTokens: 1, maxCostUsd: 0.01 })
    assert.equal(overBudget(all, state({ usage: usage(5, 5, 1) }), 10), undefined)
    assert.equal(overBudget(all, state({ deadline: 0, usage: usage(5, 5, 1) }), 10)?.code, 'deadline_exceeded')
  })
})

describe('outOfSteps', () => {
  it('allows maxSteps model calls, counting the steps of subagents', () => {
    assert.equal(outOfSteps(budgets({ maxSteps: 3 }), state({ steps: 2 })), undefined)
    assert.deepEqual(outOfSteps(budgets({ maxSteps: 3 }), state({ steps: 3 })), { code: 'max_steps', reason: '3 of 3 steps used' })
    assert.equal(outOfSteps(budgets({ maxSteps: 3 }), state({ steps: 1, nestedSteps: 1 })), undefined)
    assert.deepEqual(outOfSteps(budgets({ maxSteps: 3 }), state({ steps: 1, nestedSteps: 2 })), {
      code: 'max_steps',
      reason: '3 of 3 steps used (2 by subagents)',
    })
  })

  it('defaults to 20 steps and no repairs, and the defaults cannot be changed', () => {
    assert.deepEqual(DefaultBudgets, { maxSteps: 20, maxRepairs: 0 })
    assert.ok(Object.isFrozen(DefaultBudgets))
  })
})

describe('a deadline that passes between steps', () => {
  let harness: Harness | undefined
  afterEach(async () => {
    await harness?.stop()
    harness = undefined
  })

  it('ends the run with deadline_exceeded after a slow tool, without asking the model again', async () => {
    harness = await supportDesk({
      script: [{ tool: 'slow_lookup', args: { query: 'old refunds' } }, { final: 'never asked' }],
      desk: { slowLookupDelayMs: 400, slowLookupTimeoutMs: 5_000 },
      budgets: { deadlineMs: 250 },
    })
    const run = await harness.agent.run('look it up')
    assert.equal(run.status, 'STOPPED')
    assert.equal(run.failureCode, 'deadline_exceeded')
    const types = await harness.types(run.runId)
    assert.equal(types.filter((t) => t === 'step/model-request').length, 1, 'the model was asked once')
    assert.ok(!types.includes('verify/start'))
  })

  it('ends the run with deadline_exceeded when the approval comes after the deadline, and the action never runs', async () => {
    harness = await supportDesk({
      script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'call back' } }, { final: 'done [source: FU-1]' }],
      budgets: { deadlineMs: 300 },
    })
    const paused = await harness.agent.run('note it')
    assert.equal(paused.status, 'WAITING_APPROVAL')
    await sleep(400)
    const run = await (await harness.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
    assert.equal(run.status, 'STOPPED')
    assert.equal(run.failureCode, 'deadline_exceeded')
    assert.equal(harness.followups().length, 0, 'no effect after the deadline')
    assert.ok(!(await harness.types(run.runId)).includes('tool/start'))
  })

  it('lets the same runs complete when the deadline is far', async () => {
    harness = await supportDesk({
      script: [{ tool: 'slow_lookup', args: { query: 'old refunds' } }, { final: 'nothing found' }],
      desk: { slowLookupDelayMs: 50, slowLookupTimeoutMs: 5_000 },
      budgets: { deadlineMs: 60_000 },
    })
    const run = await harness.agent.run('look it up')
    assert.notEqual(run.failureCode, 'deadline_exceeded')
    const types = await harness.types(run.runId)
    assert.equal(types.filter((t) => t === 'step/model-request').length, 2)
  })
})

describe("a run's own budgets over the agent's (startBudgets)", () => {
  const agent: Budgets = { maxSteps: 10, maxRepairs: 0, thread: { maxTurns: 5, maxTokens: 1000 } }

  it('lays thread bounds over the agent’s key by key, so setting one keeps the others', () => {
    assert.deepEqual(startBudgets(agent, { thread: { maxTokens: 5 } }).thread, { maxTurns: 5, maxTokens: 5 })
    assert.equal(startBudgets(agent, { maxSteps: 3 }).maxSteps, 3)
    assert.equal(startBudgets(agent, undefined), agent)
  })

  it('refuses an unknown key, at the top and under thread, rather than drop a bound', () => {
    assert.throws(() => startBudgets(agent, { maxTokns: 5 } as never), /invalid_input|unknown budget "maxTokns"/)
    assert.throws(() => startBudgets(agent, { thread: { maxTurn: 2 } } as never), /unknown budget "thread\.maxTurn"/)
  })
})
