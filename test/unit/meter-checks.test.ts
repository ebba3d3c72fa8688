/**
 * core/contracts/checks/meter.ts: what a meter answers is checked strictly before the kernel records or
 * enforces it: a reservation names a call the kernel asked about, once, with figures the budgets can
 * count; a bound stops only with a budget code; the kernel acts on a clean copy. Through a run, a meter
 * that answers anything else: test/security/meter.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Checked } from '../../core/contracts/check.ts'
import { checkMeterAnswer, checkMeterBound, checkSettlement } from '../../core/contracts/checks/meter.ts'
import { meteredBudgets, type MeterCall } from '../../core/contracts/services/meter.ts'

const problem = <T>(c: Checked<T>) => (c.ok ? undefined : c.problem)
const value = <T>(c: Checked<T>) => {
  assert.ok(c.ok, c.ok ? '' : c.problem)
  return c.value
}

const calls: MeterCall[] = [
  { kind: 'model', step: 1, contextTokens: 10 },
  { kind: 'tool', actionId: 's1.a1', tool: 'search' },
]
const model = { kind: 'model', tokens: 60, costUsd: 0 }
const tool = { kind: 'tool', actionId: 's1.a1', tokens: 5, costUsd: 0.25 }

describe('checkMeterAnswer', () => {
  it('passes reservations of the calls asked about, copying only their fields', () => {
    const answer = { kind: 'reserve', reservations: [{ ...model, actionId: 'x', extra: 1 }, tool], available: { tokens: 100 }, note: 'x' }
    assert.deepEqual(value(checkMeterAnswer(answer, calls)), { kind: 'reserve', reservations: [model, tool], available: { tokens: 100 } })
    assert.deepEqual(value(checkMeterAnswer({ kind: 'reserve', reservations: [], available: {} }, calls)).kind, 'reserve')
    assert.deepEqual(value(checkMeterAnswer({ kind: 'refuse', reason: 'no room' }, calls)), { kind: 'refuse', reason: 'no room' })
  })

  it('refuses a reservation for a call not asked about, or two for one call', () => {
    const other = { ...tool, actionId: 's1.a2' }
    for (const reservations of [
      [other],
      [tool, tool],
      [model, model],
      [{ ...model, kind: 'wave' }],
      [{ kind: 'tool', tokens: 1, costUsd: 0 }],
    ])
      assert.match(
        problem(checkMeterAnswer({ kind: 'reserve', reservations, available: {} }, calls)) ?? '',
        /names its call|not asked about/,
      )
    assert.ok(problem(checkMeterAnswer({ kind: 'reserve', reservations: [model], available: {} }, [calls[1]])))
  })

  it('refuses figures the budgets cannot count: negative, fractional tokens, not numbers', () => {
    for (const bad of [
      { tokens: -1 },
      { tokens: 1.5 },
      { tokens: '5' },
      { costUsd: -0.01 },
      { costUsd: Number.POSITIVE_INFINITY },
      { costUsd: undefined },
    ])
      assert.match(
        problem(checkMeterAnswer({ kind: 'reserve', reservations: [{ ...tool, ...bad }], available: {} }, calls)) ?? '',
        /whole number/,
      )
  })

  it('refuses an answer that is not one: no kind, an inherited one, a refusal without a reason, a bad available', () => {
    assert.match(problem(checkMeterAnswer(null, calls)) ?? '', /an answer is an object, got nothing|got null/)
    assert.match(problem(checkMeterAnswer(Object.create({ kind: 'refuse', reason: 'x' }), calls)) ?? '', /kind must be reserve or refuse/)
    assert.match(problem(checkMeterAnswer({ kind: 'refuse', reason: '' }, calls)) ?? '', /carries its reason/)
    assert.match(problem(checkMeterAnswer({ kind: 'reserve', reservations: {}, available: {} }, calls)) ?? '', /must be a list/)
    for (const available of [undefined, { tokens: 'many' }, { tokens: Number.NaN }, { left: 1 }])
      assert.match(problem(checkMeterAnswer({ kind: 'reserve', reservations: [], available }, calls)) ?? '', /available must be/)
  })
})

describe('checkMeterBound', () => {
  it('passes ok, and a stop with a budget code and a reason', () => {
    assert.deepEqual(value(checkMeterBound({ kind: 'ok', extra: 1 })), { kind: 'ok' })
    const stop = { kind: 'stop', code: 'thread_budget_exceeded', reason: 'spent' }
    assert.deepEqual(value(checkMeterBound({ ...stop, extra: 1 })), stop)
  })

  it('refuses a stop with another code or no reason, and anything else', () => {
    assert.match(problem(checkMeterBound({ kind: 'stop', code: 'cancelled', reason: 'x' })) ?? '', /code must be one of/)
    assert.match(problem(checkMeterBound({ kind: 'stop', code: 'token_budget_exceeded' })) ?? '', /carries its reason/)
    assert.ok(problem(checkMeterBound({ kind: 'fine' })))
    assert.ok(problem(checkMeterBound(true)))
  })
})

describe('checkSettlement', () => {
  it('passes tokens and dollars that are not negative, and nothing else', () => {
    assert.deepEqual(value(checkSettlement({ tokens: 12, costUsd: 0.5, extra: 1 })), { tokens: 12, costUsd: 0.5 })
    for (const bad of [{ tokens: -1, costUsd: 0 }, { tokens: 1 }, { tokens: 1, costUsd: Number.NaN }, 'many'])
      assert.match(problem(checkSettlement(bad)) ?? '', /a settlement is/)
  })
})

describe('meteredBudgets', () => {
  it('names the budgets a meter enforces, and no others', () => {
    assert.deepEqual(meteredBudgets({ maxSteps: 3, deadlineMs: 5, maxRepairs: 1, thread: { maxTurns: 2 } }), [])
    assert.deepEqual(meteredBudgets({ maxTokens: 0, maxCostUsd: 1, thread: { maxTokens: 1, maxCostUsd: 2 } }), [
      'maxTokens',
      'maxCostUsd',
      'thread.maxTokens',
      'thread.maxCostUsd',
    ])
    assert.deepEqual(meteredBudgets(undefined), [])
  })
})
