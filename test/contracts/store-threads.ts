/**
 * The thread part of the store contract (2.3.0), run by runStoreContract for every store: a run joins
 * a thread as one of its turns in its first append, and the store refuses, writing nothing, every turn
 * the thread does not take now.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AppendOptions, CordageError, RunEvent } from 'cordage'
import { endEvent, runEvents, type KernelStore } from './store.ts'

/** Run `runId` started as `agent` at `time` (two events), as turn `turn` of thread `id`. */
export async function startTurn(store: KernelStore, runId: string, id: string, turn: number, agent = 'a', time = 1000) {
  return store.append(runId, runEvents(runId, 1, 2, agent, time), 0, { thread: { id, turn, agent } })
}

/** End run `runId` (whose last seq is 2) at `time`. */
export async function endTurn(store: KernelStore, runId: string, time = 5000) {
  return store.append(runId, [endEvent(runId, 3, time)], 2)
}

const code = (expected: string, message?: RegExp) => (error: CordageError) => {
  assert.equal(error.code, expected, error.message)
  if (message) assert.match(error.message, message)
  return true
}

export function runThreadContract(makeStore: () => Promise<KernelStore>) {
  describe('threads (since 2.3.0)', () => {
    /** Refused with `expected`, and the run was not written. */
    async function refusedTurn(
      store: KernelStore,
      runId: string,
      thread: AppendOptions['thread'],
      expected: string,
      message?: RegExp,
      startAs = thread?.agent || 'a',
    ) {
      await assert.rejects(async () => store.append(runId, runEvents(runId, 1, 2, startAs), 0, { thread }), code(expected, message))
      await assert.rejects(store.load(runId), { code: 'run_not_found' }, `${runId} was written although refused`)
      assert.equal(
        (await store.list()).find((r) => r.runId === runId),
        undefined,
      )
    }

    it('makes runs the turns of a thread, in order, with their status and times', async () => {
      const store = await makeStore()
      await startTurn(store, 'r1', 't1', 1, 'a', 1000)
      await endTurn(store, 'r1', 2000)
      await startTurn(store, 'r2', 't1', 2, 'a', 3000)
      await store.append('r9', runEvents('r9', 1, 1, 'a', 500), 0)
      const turns = await store.threadTurns!('t1')
      assert.deepEqual(
        turns.map((t) => [t.threadId, t.turn, t.runId, t.agent, t.task, t.status, t.failureCode, t.createdAt]),
        [
          ['t1', 1, 'r1', 'a', 'task of r1', 'FAILED', 'tool_timeout', 1000],
          ['t1', 2, 'r2', 'a', 'task of r2', 'RUNNING', undefined, 3000],
        ],
      )
      assert.equal(turns[0].updatedAt, 2000)
      const runs = await store.list()
      assert.deepEqual(
        runs.map((r) => [r.runId, r.threadId, r.turn]),
        [
          ['r2', 't1', 2],
          ['r1', 't1', 1],
          ['r9', undefined, undefined],
        ],
      )
      const thread = await store.thread!('t1')
      assert.deepEqual(thread, {
        threadId: 't1',
        agent: 'a',
        turns: 2,
        lastRunId: 'r2',
        lastStatus: 'RUNNING',
        createdAt: 1000,
        updatedAt: 3002,
      })
      // Times follow the runs: an event of turn 2 moves the thread's updatedAt.
      await store.append('r2', [{ ...runEvents('r2', 3, 1)[0], time: 9000 }], 2)
      assert.equal((await store.thread!('t1'))?.updatedAt, 9000)
      assert.deepEqual(await store.threadTurns!('nope'), [])
      assert.equal(await store.thread!('nope'), undefined)
    })

    it('lists threads most recently updated first, by agent, with a limit', async () => {
      const store = await makeStore()
      await startTurn(store, 'r1', 'old', 1, 'a', 1000)
      await startTurn(store, 'r2', 'new', 1, 'a', 2000)
      await startTurn(store, 'r3', 'other', 1, 'b', 1500)
      assert.deepEqual(
        (await store.threads!()).map((t) => t.threadId),
        ['new', 'other', 'old'],
      )
      // An event of the oldest thread's run makes it the most recently updated.
      await endTurn(store, 'r1', 7000)
      assert.deepEqual(
        (await store.threads!()).map((t) => [t.threadId, t.lastStatus]),
        [
          ['old', 'FAILED'],
          ['new', 'RUNNING'],
          ['other', 'RUNNING'],
        ],
      )
      assert.deepEqual(
        (await store.threads!({ agent: 'b' })).map((t) => t.threadId),
        ['other'],
      )
      assert.deepEqual(
        (await store.threads!({ limit: 1 })).map((t) => t.threadId),
        ['old'],
      )
      await assert.rejects(store.threads!({ limit: 0 }), { code: 'invalid_input' })
      await assert.rejects(store.threads!({ limit: 1.5 }), { code: 'invalid_input' })
    })

    it('refuses, writing nothing, a turn the thread does not take now', async () => {
      const store = await makeStore()
      // Turn 2 of a thread that does not exist: turn 1 is missing.
      await refusedTurn(store, 'x1', { id: 't1', turn: 2, agent: 'a' }, 'thread_busy', /no turn 1/)
      await startTurn(store, 'r1', 't1', 1)
      // Turn 1 again.
      await refusedTurn(store, 'x2', { id: 't1', turn: 1, agent: 'a' }, 'thread_busy')
      // Turn 2 while turn 1 runs: names the run and its status.
      await refusedTurn(store, 'x3', { id: 't1', turn: 2, agent: 'a' }, 'thread_busy', /turn 1 \(run r1\) is RUNNING/)
      // Turn 3 with no turn 2.
      await refusedTurn(store, 'x4', { id: 't1', turn: 3, agent: 'a' }, 'thread_busy', /no turn 2/)
      await endTurn(store, 'r1')
      await startTurn(store, 'r2', 't1', 2)
      // Turn 2 taken.
      await refusedTurn(store, 'x5', { id: 't1', turn: 2, agent: 'a' }, 'thread_busy', /turn 2 already \(run r2\)/)
      // A thread of another agent.
      await refusedTurn(store, 'x6', { id: 't1', turn: 3, agent: 'b' }, 'invalid_input', /thread t1 belongs to agent a/)
      assert.deepEqual(
        (await store.threadTurns!('t1')).map((t) => t.runId),
        ['r1', 'r2'],
      )
    })

    it('waits for a turn that is paused or cancelling, and follows any ended one', async () => {
      const store = await makeStore()
      await startTurn(store, 'r1', 't1', 1)
      const paused: RunEvent = {
        type: 'run/paused',
        seq: 3,
        time: 3000,
        runId: 'r1',
        schema: 1,
        producer: 'kernel@test',
        data: { status: 'WAITING_USER', reason: 'question' },
      } as RunEvent
      await store.append('r1', [paused], 2)
      await refusedTurn(store, 'x1', { id: 't1', turn: 2, agent: 'a' }, 'thread_busy', /WAITING_USER/)
      await store.append(
        'r1',
        [
          {
            ...endEvent('r1', 4),
            data: { status: 'CANCELLED', usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, steps: 0 },
          } as RunEvent,
        ],
        3,
      )
      await startTurn(store, 'r2', 't1', 2)
    })

    it('refuses a malformed thread, or one on an append that is not the first, with invalid_input', async () => {
      const store = await makeStore()
      const bad = [
        { id: '', turn: 1, agent: 'a' },
        { id: 'x'.repeat(129), turn: 1, agent: 'a' },
        { id: 'a b', turn: 1, agent: 'a' },
        { id: "t'1", turn: 1, agent: 'a' },
        { id: 't/1', turn: 1, agent: 'a' },
        { id: 't1', turn: 0, agent: 'a' },
        { id: 't1', turn: 1.5, agent: 'a' },
        { id: 't1', turn: -1, agent: 'a' },
        { id: 't1', turn: '1', agent: 'a' },
        { id: 't1', turn: 1, agent: '' },
        { id: 't1', turn: 1, agent: 'b' }, // the run starts as agent a
        { id: 't1', turn: 1, agent: 'a', extra: true },
        null,
        'thread',
      ]
      for (const [i, thread] of bad.entries())
        await refusedTurn(store, `x${i}`, thread as AppendOptions['thread'], 'invalid_input', undefined, 'a')
      await store.append('r1', runEvents('r1', 1, 2), 0)
      await assert.rejects(async () => store.append('r1', runEvents('r1', 3, 1), 2, { thread: { id: 't1', turn: 1, agent: 'a' } }), {
        code: 'invalid_input',
        message: /first events only/,
      })
      assert.equal((await store.load('r1')).length, 2)
      // Said as invalid_input before anything is compared with the log (a new run, a wrong expected seq).
      await assert.rejects(async () => store.append('r8', runEvents('r8', 4, 1), 3, { thread: { id: 't1', turn: 1, agent: 'a' } }), {
        code: 'invalid_input',
      })
      assert.deepEqual(await store.threads!(), [])
      // A valid id of every allowed character.
      await startTurn(store, 'r2', 'A-z_0.9:x', 1)
      assert.equal((await store.thread!('A-z_0.9:x'))?.turns, 1)
      await assert.rejects(store.threadTurns!('a b'), { code: 'invalid_input' })
      await assert.rejects(store.thread!(''), { code: 'invalid_input' })
    })

    it('closes a thread for the kernel only, keeps the first close, and refuses later turns', async () => {
      const store = await makeStore()
      await startTurn(store, 'r1', 't1', 1)
      await endTurn(store, 'r1')
      // The attacker's path: no writer, a look-alike writer.
      for (const writer of [undefined, { writer: 'cordage-kernel' }])
        await assert.rejects(store.raw.closeThread!('t1', { by: 'plugin', at: 1 }, writer as never), { code: 'store_write_refused' })
      assert.equal((await store.thread!('t1'))?.closed, undefined)
      await store.closeThread!('t1', { by: 'alice', at: 6000, reason: 'done' })
      await store.closeThread!('t1', { by: 'bob', at: 7000 })
      assert.deepEqual((await store.thread!('t1'))?.closed, { by: 'alice', at: 6000, reason: 'done' })
      await refusedTurn(store, 'x1', { id: 't1', turn: 2, agent: 'a' }, 'thread_closed')
      await assert.rejects(store.closeThread!('nope', { by: 'alice', at: 1 }), { code: 'thread_not_found' })
      await assert.rejects(store.closeThread!('t1', { by: '', at: 1 }), { code: 'invalid_input' })
      await assert.rejects(store.closeThread!('a b', { by: 'alice', at: 1 }), { code: 'invalid_input' })
      // A close without a reason reads back without one.
      await startTurn(store, 'r2', 't2', 1)
      await store.closeThread!('t2', { by: 'alice', at: 8000 })
      assert.deepEqual((await store.thread!('t2'))?.closed, { by: 'alice', at: 8000 })
    })

    it('lets exactly one of two writers racing for the same turn win', async () => {
      const store = await makeStore()
      await startTurn(store, 'r1', 't1', 1)
      await endTurn(store, 'r1')
      const results = await Promise.allSettled([startTurn(store, 'ra', 't1', 2), startTurn(store, 'rb', 't1', 2)])
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, JSON.stringify(results))
      assert.equal(((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as CordageError).code, 'thread_busy')
      const turns = await store.threadTurns!('t1')
      assert.equal(turns.length, 2)
      // Two first turns of a new thread: one thread, one turn 1.
      const firsts = await Promise.allSettled([startTurn(store, 'rc', 't2', 1), startTurn(store, 'rd', 't2', 1)])
      assert.equal(firsts.filter((r) => r.status === 'fulfilled').length, 1)
      assert.equal((await store.threadTurns!('t2')).length, 1)
    })
  })
}
