/**
 * Run state is a reduction of events: the reducer refuses logs that skip a seq, mix runs, come from a
 * newer schema or make an illegal status change, so a corrupt log is found on load, not acted on.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Transitions, assertTransition, replay, type RunEvent } from 'cordage'

const start: RunEvent = {
  type: 'run/start',
  seq: 1,
  time: 1,
  runId: 'r',
  schema: 1,
  producer: 'kernel@test',
  data: { agent: 'a', task: 't', plugins: {}, services: {}, budgets: { maxSteps: 1, maxRepairs: 0 } },
}
const end = (seq: number, status: 'COMPLETED' | 'FAILED'): RunEvent => ({
  type: 'run/end',
  seq,
  time: 2,
  runId: 'r',
  schema: 1,
  producer: 'kernel@test',
  data: { status, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, steps: 0 },
})

describe('run state', () => {
  it('folds a well-formed log', () => {
    const state = replay('r', [start, end(2, 'COMPLETED')])
    assert.equal(state.status, 'COMPLETED')
    assert.equal(state.lastSeq, 2)
  })

  it('refuses a gap in seq', () => {
    assert.throws(() => replay('r', [start, end(3, 'COMPLETED')]), { code: 'invalid_event', message: /expected seq 2, got 3/ })
  })

  it("refuses another run's event", () => {
    assert.throws(() => replay('r', [start, { ...end(2, 'COMPLETED'), runId: 'other' }]), {
      code: 'invalid_event',
      message: /belongs to run other/,
    })
  })

  it('refuses an event from a newer schema', () => {
    assert.throws(() => replay('r', [{ ...start, schema: 99 }]), { code: 'invalid_event', message: /schema 99/ })
  })

  it('refuses an event of a type it does not know, names inherited from Object included', () => {
    for (const type of ['tool/teleport', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      const odd = { ...end(2, 'COMPLETED'), type } as unknown as RunEvent
      assert.throws(() => replay('r', [start, odd]), { code: 'invalid_event', message: `unknown event type ${type}` }, type)
    }
  })

  it('refuses an illegal status change', () => {
    assert.throws(() => replay('r', [start, end(2, 'COMPLETED'), end(3, 'FAILED')]), {
      code: 'illegal_transition',
      message: /from COMPLETED to FAILED/,
    })
  })

  it('refuses an action event for an action that was never proposed', () => {
    const stray: RunEvent = {
      type: 'tool/end',
      seq: 2,
      time: 2,
      runId: 'r',
      actionId: 's1.a9',
      stepId: 's1',
      schema: 1,
      producer: 'x',
      data: { tool: 't', attempt: 1, output: null, observation: '', durationMs: 0 },
    }
    assert.throws(() => replay('r', [start, stray]), { code: 'invalid_event', message: /unknown action s1\.a9/ })
  })

  it('lets no run leave a final status', () => {
    for (const status of ['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED'] as const) {
      assert.deepEqual(Transitions[status], [])
      assert.throws(() => assertTransition(status, 'RUNNING'), { code: 'illegal_transition' })
    }
  })
})
