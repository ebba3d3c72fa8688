/**
 * The ledger rules under concurrency (fast-check): two runs that call one side-effecting tool under one
 * idempotency key make at most one effect, over random interleavings of their store writes and calls,
 * random outcomes and retries. Each run follows the kernel's order: the intent is durable before the
 * call, the outcome after it; a refused intent means the call is not made. Run against store-memory
 * and store-sqlite, written to as the kernel (asKernel).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { EffectWrite, StoreService } from '../../core/contracts/services/store.ts'
import { asKernel, runEvents, type KernelStore } from '../contracts/store.ts'
import { tempDir } from '../temp.ts'
import { MemoryStore } from '../../plugins/store-memory/memory-store.ts'
import { SqliteStore } from '../../plugins/store-sqlite/sqlite-store.ts'

type Outcome = 'committed' | 'failed' | 'not_committed'

interface Plan {
  /** What each attempt of the run's call comes to, in order; a run retries after a failure while attempts are left. */
  attempts: Outcome[]
  /** The action the run calls under the shared key. */
  actionId: string
}

/** The system the tool writes to: it counts effects that happened, by key and run. */
class Target {
  readonly effects: string[] = []
  call(runId: string, outcome: Outcome): void {
    if (outcome === 'committed') this.effects.push(runId)
  }
}

const Key = 'refund:O-1'
const intent = (runId: string, actionId: string, attempt: number): EffectWrite => ({
  op: 'intent',
  key: Key,
  runId,
  actionId,
  tool: 'refund',
  argsHash: 'sha256:same',
  policyVersion: 'p@1',
  attempt,
  at: attempt,
})

/**
 * One run's side of the race. Every store call and the call to the target goes through `step`, which
 * the scheduler runs in an order of its choosing.
 */
async function drive(
  store: KernelStore,
  runId: string,
  plan: Plan,
  target: Target,
  step: <T>(label: string, f: () => T | Promise<T>) => Promise<T>,
): Promise<string> {
  let seq = 0
  await step(`${runId} start`, () => store.append(runId, runEvents(runId, 1, 1), 0))
  seq = 1
  for (let attempt = 1; attempt <= plan.attempts.length; attempt++) {
    try {
      await step(`${runId} intent ${attempt}`, () =>
        store.append(runId, runEvents(runId, seq + 1, 1), seq, { effects: [intent(runId, plan.actionId, attempt)] }),
      )
      seq++
    } catch (error) {
      const code = (error as { code?: string }).code
      if (code === 'effect_exists') return 'deduplicated'
      throw error
    }
    const outcome = plan.attempts[attempt - 1]
    await step(`${runId} call ${attempt}`, () => target.call(runId, outcome))
    await step(`${runId} outcome ${attempt}`, () =>
      store.append(runId, runEvents(runId, seq + 1, 1), seq, { effects: [{ op: 'outcome', key: Key, status: outcome, at: 10 + attempt }] }),
    )
    seq++
    if (outcome === 'committed') return 'committed'
  }
  return 'gave up'
}

const plan = fc.record({
  attempts: fc.array(fc.constantFrom<Outcome>('committed', 'failed', 'not_committed'), { minLength: 1, maxLength: 3 }),
  actionId: fc.constantFrom('s1.a1', 's2.a1'),
})

function raceProperty(makeStore: () => StoreService) {
  return fc.asyncProperty(fc.scheduler(), plan, plan, async (s, p1, p2) => {
    const raw = makeStore()
    try {
      const store = asKernel(raw)
      const target = new Target()
      const step = <T>(label: string, f: () => T | Promise<T>) => s.schedule(Promise.resolve(label)).then(() => f())
      const results = Promise.all([drive(store, 'r1', p1, target, step), drive(store, 'r2', p2, target, step)])
      await s.waitFor(results)
      const [a, b] = await results
      assert.ok(target.effects.length <= 1, `two effects under one key: ${target.effects.join(', ')} (${a}, ${b})`)
      const effect = await store.effect(Key)
      if (target.effects.length === 1) {
        assert.equal(effect?.status, 'committed')
        assert.equal(effect?.runId, target.effects[0], 'the ledger names the run that made the effect')
      } else {
        assert.notEqual(effect?.status, 'committed', 'the ledger claims an effect that did not happen')
      }
      // Whoever did not make the effect either saw it (deduplicated) or never got one to commit.
      if (target.effects.length === 1) assert.ok([a, b].includes('committed'))
    } finally {
      ;(raw as { close?: () => void }).close?.()
    }
  })
}

describe('the ledger under concurrency: one key, two runs, at most one effect', () => {
  it('store-memory, over random interleavings, outcomes and retries', async () => {
    await fc.assert(
      raceProperty(() => new MemoryStore(1_000)),
      { numRuns: 150 },
    )
  })

  it('store-sqlite, over random interleavings, outcomes and retries', async () => {
    const dir = tempDir('cordage-ledger-race-')
    let n = 0
    await fc.assert(
      raceProperty(() => new SqliteStore(join(dir, `runs-${n++}.db`), { synchronous: 'normal', snapshotEvery: 500, busyTimeoutMs: 2000 })),
      { numRuns: 60 },
    )
  })
})
