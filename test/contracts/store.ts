/**
 * The store contract as one suite. Every store plugin's test calls runStoreContract with a factory,
 * so memory, SQLite and PostgreSQL are held to the same promises.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RunEvent, StoreService } from 'cordage'

const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }

export function runEvents(runId: string, from: number, count: number, agent = 'a', time = 1000): RunEvent[] {
  const out: RunEvent[] = []
  for (let seq = from; seq < from + count; seq++) {
    out.push(seq === 1
      ? { type: 'run/start', seq, time, runId, schema: 1, producer: 'kernel@test', data: { agent, task: `task of ${runId}`, plugins: {}, services: {}, budgets: { maxSteps: 9, maxRepairs: 0 } } }
      : { type: 'step/start', seq, time: time + seq, runId, stepId: `s${seq}`, schema: 1, producer: 'kernel@test', data: { index: seq } })
  }
  return out
}

const endEvent = (runId: string, seq: number, time = 5000): RunEvent => ({
  type: 'run/end', seq, time, runId, schema: 1, producer: 'kernel@test', data: { status: 'FAILED', failureCode: 'tool_timeout', usage, steps: 0 },
})

export function runStoreContract(name: string, makeStore: () => Promise<StoreService> | StoreService) {
  describe(`store contract: ${name}`, () => {
    it('appends a batch and loads it back in seq order', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 3), 0)
      await store.append('r1', runEvents('r1', 4, 2), 3)
      assert.deepEqual((await store.load('r1')).map((e) => e.seq), [1, 2, 3, 4, 5])
      assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 5))
    })

    it('refuses a writer that is behind with seq_conflict and writes nothing', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 3), 0)
      await assert.rejects(async () => store.append('r1', runEvents('r1', 3, 2), 2), { code: 'seq_conflict' })
      await assert.rejects(async () => store.append('r1', runEvents('r1', 1, 1), 0), { code: 'seq_conflict' })
      assert.equal((await store.load('r1')).length, 3)
    })

    it('lets exactly one of two concurrent writers with the same expected seq win', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      const append = async (events: RunEvent[]) => store.append('r1', events, 1)
      const results = await Promise.allSettled([append(runEvents('r1', 2, 1)), append(runEvents('r1', 2, 2))])
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
      assert.equal(rejected.reason.code, 'seq_conflict')
      const seqs = (await store.load('r1')).map((e) => e.seq)
      seqs.forEach((seq, i) => assert.equal(seq, i + 1))
    })

    it('refuses a batch with a gap or from another run, writing nothing of it', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      await assert.rejects(async () => store.append('r1', [...runEvents('r1', 2, 1), ...runEvents('r1', 4, 1)], 1), { code: 'invalid_event' })
      await assert.rejects(async () => store.append('r1', runEvents('r2', 2, 1), 1), { code: 'invalid_event' })
      assert.equal((await store.load('r1')).length, 1)
    })

    it('refuses a new run that does not begin with run/start', async () => {
      const store = await makeStore()
      await assert.rejects(async () => store.append('r9', runEvents('r9', 1, 2).slice(1).map((e) => ({ ...e, seq: 1 })), 0), { code: 'invalid_event' })
    })

    it('reads after a cursor, with a limit', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 6), 0)
      assert.deepEqual((await store.read('r1', { after: 2 })).map((e) => e.seq), [3, 4, 5, 6])
      assert.deepEqual((await store.read('r1', { after: 2, limit: 2 })).map((e) => e.seq), [3, 4])
      assert.deepEqual(await store.read('r1', { after: 6 }), [])
    })

    it('says run_not_found for a run it does not have', async () => {
      const store = await makeStore()
      await assert.rejects(store.load('nope'), { code: 'run_not_found' })
      await assert.rejects(store.read('nope'), { code: 'run_not_found' })
    })

    it('lists runs newest first with their status, filtered by status and agent', async () => {
      const store = await makeStore()
      await store.append('old', runEvents('old', 1, 2, 'a', 1000), 0)
      await store.append('new', runEvents('new', 1, 1, 'b', 2000), 0)
      await store.append('old', [endEvent('old', 3)], 2)
      const all = await store.list()
      assert.deepEqual(all.map((r) => [r.runId, r.agent, r.status, r.lastSeq]), [['new', 'b', 'RUNNING', 1], ['old', 'a', 'FAILED', 3]])
      assert.equal(all[1].failureCode, 'tool_timeout')
      assert.equal(all[1].task, 'task of old')
      assert.deepEqual((await store.list({ status: 'FAILED' })).map((r) => r.runId), ['old'])
      assert.deepEqual((await store.list({ agent: 'b' })).map((r) => r.runId), ['new'])
      assert.deepEqual((await store.list({ limit: 1 })).map((r) => r.runId), ['new'])
    })

    it('keeps what it returned unaffected by later appends', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 2), 0)
      const loaded = await store.load('r1')
      await store.append('r1', runEvents('r1', 3, 1), 2)
      assert.equal(loaded.length, 2)
    })
  })
}
