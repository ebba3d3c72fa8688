/**
 * A child run's budgets (core/contracts/services/agents.ts childBudgets): never more than its parent
 * has left, and when the parent is a turn of a thread, never more than the thread has left either.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { childBudgets } from '../../core/contracts/services/agents.ts'

const usage = (tokens: number, costUsd = 0) => ({ inputTokens: tokens, outputTokens: 0, costUsd })

describe('childBudgets', () => {
  it('caps a child at what the parent run has left', () => {
    const out = childBudgets({ maxSteps: 5 }, { budgets: { maxSteps: 10, maxRepairs: 0, maxTokens: 1000 }, steps: 2, usage: usage(300) }, 0)
    assert.equal(out.maxTokens, 700)
    assert.equal(out.maxSteps, 5)
  })

  it("caps a child at what the parent's thread has left, counting earlier turns and this one", () => {
    const parent = {
      budgets: { maxSteps: 10, maxRepairs: 0, thread: { maxTokens: 1000, maxCostUsd: 1 } },
      steps: 1,
      usage: usage(200, 0.25),
      thread: { usedBefore: usage(500, 0.5) },
    }
    const out = childBudgets({ maxTokens: 10_000 }, parent, 0)
    assert.equal(out.maxTokens, 300)
    assert.equal(out.maxCostUsd, 0.25)
  })

  it('gives a child nothing once the thread is spent, and leaves a child of a run outside any thread alone', () => {
    const spent = childBudgets(
      {},
      {
        budgets: { maxSteps: 10, maxRepairs: 0, thread: { maxTokens: 100 } },
        steps: 0,
        usage: usage(80),
        thread: { usedBefore: usage(50) },
      },
      0,
    )
    assert.equal(spent.maxTokens, 0)
    const free = childBudgets({}, { budgets: { maxSteps: 10, maxRepairs: 0, thread: { maxTokens: 100 } }, steps: 0, usage: usage(80) }, 0)
    assert.equal(free.maxTokens, undefined)
  })
})
