/**
 * The ledger rules, as store-memory keeps them (plugins/store-memory/memory-store.ts): an intent is
 * checked against the ledger and against the other intents of its batch; an outcome needs an intent;
 * a refused batch writes nothing.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { EffectWrite } from '../../core/contracts/services/store.ts'
import { asKernel, runEvents } from '../contracts/store.ts'
import { MemoryStore } from '../../plugins/store-memory/memory-store.ts'

type Intent = Extract<EffectWrite, { op: 'intent' }>
const intent = (key: string, runId: string, actionId: string, argsHash = 'h', over: Partial<Intent> = {}): Intent => ({
  op: 'intent',
  key,
  runId,
  actionId,
  tool: 'refund',
  argsHash,
  policyVersion: 'p@1',
  attempt: 1,
  at: 100,
  ...over,
})
const outcome = (
  key: string,
  status: 'committed' | 'failed' | 'not_committed',
  over: Partial<Extract<EffectWrite, { op: 'outcome' }>> = {},
): EffectWrite => ({ op: 'outcome', key, status, at: 200, ...over })

/** A store with runs r1 and r2 started (one event each). */
async function twoRuns() {
  const store = asKernel(new MemoryStore(1_000))
  await store.append('r1', runEvents('r1', 1, 1), 0)
  await store.append('r2', runEvents('r2', 1, 1), 0)
  const seq: Record<string, number> = { r1: 1, r2: 1 }
  const write = async (runId: string, effects: EffectWrite[]) => {
    await store.append(runId, runEvents(runId, seq[runId] + 1, 1), seq[runId], { effects })
    seq[runId]++
  }
  return { store, write, seq }
}

describe('the ledger: intents', () => {
  it('records a new intent as pending, attempt 1, with what it was for', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1', 'h1', { at: 123 })])
    assert.deepEqual(await store.effect('k'), {
      key: 'k',
      runId: 'r1',
      actionId: 's1.a1',
      tool: 'refund',
      argsHash: 'h1',
      policyVersion: 'p@1',
      status: 'pending',
      attempts: 1,
      startedAt: 123,
    })
  })

  it('counts a retry of the same run and action as another attempt, under the new policy version', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1')])
    await write('r1', [outcome('k', 'failed')])
    await write('r1', [intent('k', 'r1', 's1.a1', 'h', { policyVersion: 'p@2' })])
    const e = await store.effect('k')
    assert.deepEqual([e?.status, e?.attempts, e?.policyVersion, e?.runId], ['pending', 2, 'p@2', 'r1'])
  })

  it('refuses the key with other arguments, whoever holds it, and says who', async () => {
    const { write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1', 'h1')])
    await assert.rejects(
      write('r2', [intent('k', 'r2', 's1.a1', 'h2')]),
      (e: Error & { code: string; data: { runId: string } }) =>
        e.code === 'idempotency_conflict' &&
        e.data.runId === 'r1' &&
        e.message === 'idempotency key k was used by r1 s1.a1 with arguments h1, not h2',
    )
    await assert.rejects(write('r1', [intent('k', 'r1', 's1.a1', 'h2')]), { code: 'idempotency_conflict' })
    await write('r1', [outcome('k', 'not_committed')])
    await assert.rejects(
      write('r2', [intent('k', 'r2', 's1.a1', 'h2')]),
      { code: 'idempotency_conflict' },
      'even a free key keeps its arguments',
    )
  })

  it('refuses the key of an effect pending or committed in another run (or action) with effect_exists', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1')])
    await assert.rejects(
      write('r2', [intent('k', 'r2', 's1.a1')]),
      (e: Error & { code: string; data: { status: string } }) =>
        e.code === 'effect_exists' && e.data.status === 'pending' && e.message === 'idempotency key k belongs to r1 s1.a1 (pending)',
    )
    await assert.rejects(write('r1', [intent('k', 'r1', 's1.a2')]), { code: 'effect_exists' }, 'another action of the same run')
    await write('r1', [outcome('k', 'committed')])
    await assert.rejects(write('r2', [intent('k', 'r2', 's1.a1')]), { code: 'effect_exists', message: /\(committed\)$/ })
    await assert.rejects(
      write('r2', [intent('k', 'r2', 's1.a1', 'h', { takeover: true })]),
      { code: 'effect_exists' },
      'a committed effect cannot be taken over',
    )
    assert.equal((await store.effect('k'))?.runId, 'r1')
  })

  it('lets another run have a key whose effect failed or did not commit', async () => {
    for (const status of ['failed', 'not_committed'] as const) {
      const { store, write } = await twoRuns()
      await write('r1', [intent('k', 'r1', 's1.a1')])
      await write('r1', [outcome('k', status)])
      await write('r2', [intent('k', 'r2', 's2.a1')])
      const e = await store.effect('k')
      assert.deepEqual([e?.runId, e?.actionId, e?.status, e?.attempts], ['r2', 's2.a1', 'pending', 2], status)
    }
  })

  it('lets another run take over a pending key only when it says takeover', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1')])
    await assert.rejects(write('r2', [intent('k', 'r2', 's1.a1', 'h', { takeover: false })]), { code: 'effect_exists' })
    await write('r2', [intent('k', 'r2', 's1.a1', 'h', { takeover: true })])
    assert.equal((await store.effect('k'))?.runId, 'r2')
  })
})

describe('the ledger: two intents under one key in one batch', () => {
  it('refuses them with other arguments', async () => {
    const { store, write } = await twoRuns()
    await assert.rejects(write('r1', [intent('k', 'r1', 's1.a1', 'h1'), intent('k', 'r1', 's1.a2', 'h2')]), {
      code: 'idempotency_conflict',
      message: 'idempotency key k is used twice in one batch, by s1.a1 and s1.a2, with other arguments',
    })
    assert.equal(await store.effect('k'), undefined)
  })

  it('refuses them for two actions, or two runs, with the same arguments', async () => {
    const { store, write } = await twoRuns()
    await assert.rejects(write('r1', [intent('k', 'r1', 's1.a1'), intent('k', 'r1', 's1.a2')]), {
      code: 'effect_exists',
      message: 'idempotency key k belongs to r1 s1.a1 (pending)',
    })
    await assert.rejects(write('r1', [intent('k', 'r1', 's1.a1'), intent('k', 'r2', 's1.a1')]), { code: 'effect_exists' })
    assert.equal(await store.effect('k'), undefined)
  })

  it('accepts the same intent twice, and keys that differ', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1'), intent('k', 'r1', 's1.a1')])
    assert.equal((await store.effect('k'))?.status, 'pending')
    await write('r1', [intent('k2', 'r1', 's1.a2', 'x'), intent('k3', 'r1', 's1.a3', 'y')])
    assert.equal((await store.effect('k3'))?.argsHash, 'y')
  })

  it('does not count an outcome as an intent of the batch', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1', 'h1')])
    await write('r1', [outcome('k', 'failed'), intent('k', 'r1', 's1.a1', 'h1')])
    assert.equal((await store.effect('k'))?.attempts, 2)
  })
})

describe('the ledger: batches without ledger writes', () => {
  it('writes no ledger row for a batch that brings none', async () => {
    const raw = new MemoryStore(1_000)
    const store = asKernel(raw)
    await store.append('r1', runEvents('r1', 1, 2), 0)
    await store.append('r1', runEvents('r1', 3, 1), 2, { effects: [] })
    assert.equal((raw as unknown as { ledger: Map<unknown, unknown> }).ledger.size, 0)
    assert.deepEqual(await store.effectsOf!('r1'), [])
  })
})

describe('the ledger: outcomes', () => {
  it('records status, receipt, output, observation and end', async () => {
    const { store, write } = await twoRuns()
    await write('r1', [intent('k', 'r1', 's1.a1')])
    await write('r1', [outcome('k', 'committed', { receipt: 'FU-1', output: { id: 1 }, observation: 'done [source: FU-1]', at: 250 })])
    const e = await store.effect('k')
    assert.deepEqual(
      [e?.status, e?.receipt, e?.output, e?.observation, e?.endedAt],
      ['committed', 'FU-1', { id: 1 }, 'done [source: FU-1]', 250],
    )
  })

  it('refuses an outcome without an intent', async () => {
    const { store, write } = await twoRuns()
    await assert.rejects(write('r1', [outcome('nope', 'committed')]), {
      code: 'invalid_event',
      message: 'outcome for idempotency key nope, which has no intent',
    })
    assert.equal(await store.effect('nope'), undefined)
  })

  it('writes nothing of a batch that is refused, intents and events alike', async () => {
    const { store, write } = await twoRuns()
    await assert.rejects(write('r1', [intent('a', 'r1', 's1.a1'), outcome('missing', 'committed')]), { code: 'invalid_event' })
    assert.equal(await store.effect('a'), undefined)
    assert.equal((await store.load('r1')).length, 1)
  })
})
