/**
 * The proof for threads: a three-turn thread across three processes of the real `cordage`
 * binary on one SQLite file (and on PostgreSQL when a server is there), with a SIGKILL in the middle of turn 2 (a tool of turn 2 in flight).
 * Turn 2 is taken over and ends; turn 3 sees turns 1 and 2; turn ids run t1, t2, t3 without gaps and
 * every event of the three runs carries the thread's id. Also through the CLI: thread_busy while a
 * turn has not ended, approvals bound to their turn and given from another process, maxTurns, the
 * thread token budget, and cancelling a turn vs closing the thread.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, sharedStores, wellFormed } from './fault-lab.ts'

let lab: FaultLab | undefined
afterEach(() => {
  lab?.close()
  lab = undefined
})

const runIdOf = (exit: { events: RunEvent[] }) => exit.events[0].runId
const turnIds = (events: RunEvent[]) => [...new Set(events.map((e) => e.turnId).filter(Boolean))]
const contextSizes = (events: RunEvent[]) =>
  events.filter((e): e is RunEvent<'step/context'> => e.type === 'step/context').map((e) => e.data.messages)

describe('a thread across processes', () => {
  for (const store of sharedStores)
    it(`three turns, three processes, SIGKILL in turn 2: recovered, gap-free, and turn 3 sees turns 1 and 2 (${store})`, async () => {
      // Each turn: look something up, then answer. A long lease keeps the killed turn owned for a while.
      lab = new FaultLab({ script: [{ tool: 'lookup', args: {} }, { final: 'done' }], durability: { leaseTtlMs: 3000 }, store })

      const one = await lab.run(['run', '--thread', 'conv-1', '--task', 'Turn one?', '--json'])
      assert.equal(one.code, 0, one.stderr)
      const run1 = runIdOf(one)

      // Process 2 dies while turn 2's tool is in flight.
      const two = await lab.run(['run', '--thread', 'conv-1', '--task', 'Turn two?', '--json'], 'kill-after=tool/start#1')
      assert.equal(two.signal, 'SIGKILL')
      const run2 = runIdOf(two)
      assert.equal((await lab.events(run2)).at(-1)!.type, 'tool/start', 'killed with the tool of turn 2 in flight')

      // Turn 3 is refused while turn 2 has not ended, and nothing of it is recorded.
      const early = await lab.run(['run', '--thread', 'conv-1', '--task', 'Turn three?'])
      assert.equal(early.code, 7, early.stderr)
      assert.match(early.stderr, new RegExp(`thread_busy.*turn 2 \\(run ${run2}\\) is RUNNING.*cordage resume ${run2}`))
      assert.equal((await (lab.db() as import('cordage').StoreService).threadTurns!('conv-1')).length, 2)

      await lab.leaseExpiry()
      const recovered = await lab.run(['resume', run2, '--json'])
      assert.equal(recovered.code, 0, recovered.stderr)

      const three = await lab.run(['run', '--thread', 'conv-1', '--task', 'Turn three?', '--json'])
      assert.equal(three.code, 0, three.stderr)
      const run3 = runIdOf(three)

      const logs = await Promise.all([run1, run2, run3].map((id) => lab!.events(id)))
      for (const [i, events] of logs.entries()) {
        assert.equal(wellFormed(events), undefined)
        const end = events.at(-1)!
        assert.equal(end.type === 'run/end' && end.data.status, 'COMPLETED')
        assert.deepEqual(turnIds(events), [`t${i + 1}`])
        assert.ok(
          events.every((e) => e.threadId === 'conv-1'),
          `every event of turn ${i + 1} carries threadId`,
        )
      }
      assert.equal(logs[1].filter((e) => e.type === 'run/recovered').length, 1, 'turn 2 was taken over from the log')

      // Turn 3 saw turns 1 and 2: in its log, and in what the model was given.
      const history = logs[2][1] as RunEvent<'thread/history'>
      assert.equal(history.type, 'thread/history')
      assert.equal(history.data.from, run2)
      assert.deepEqual(
        history.data.entries.filter((e) => e.kind === 'user').map((e) => [e.turn, e.kind === 'user' && e.text]),
        [
          ['t1', 'Turn one?'],
          ['t2', 'Turn two?'],
        ],
      )
      assert.deepEqual(
        history.data.entries.filter((e) => e.kind === 'observation').map((e) => e.kind === 'observation' && e.actionId),
        ['t1.s1.a1', 't2.s1.a1'],
      )
      // system + user at turn 1; + 4 entries (message, call, result, answer) per earlier turn after.
      assert.deepEqual(
        logs.map((events) => contextSizes(events)[0]),
        [2, 6, 10],
      )

      const shown = await lab.run(['thread', 'conv-1', '--json'])
      assert.equal(shown.code, 0, shown.stderr)
      const thread = JSON.parse(shown.stdout)
      assert.deepEqual(
        thread.turns.map((t: { turn: number; runId: string; status: string; answer: string }) => [t.turn, t.runId, t.status, t.answer]),
        [
          [1, run1, 'COMPLETED', 'done'],
          [2, run2, 'COMPLETED', 'done'],
          [3, run3, 'COMPLETED', 'done'],
        ],
      )
      const readable = await lab.run(['thread', 'conv-1'])
      assert.match(readable.stdout, /^thread conv-1 {2}agent pay {2}3 turn\(s\) {2}open$/m)
      assert.match(readable.stdout, new RegExp(`^ {2}t2 {2}${run2} {2}COMPLETED`, 'm'))
      const runs = await lab.run(['runs'])
      assert.match(runs.stdout, new RegExp(`^${run3} .*\\(thread conv-1 turn 3\\)`, 'm'))
      const threads = await lab.run(['runs', '--threads', '--json'])
      assert.deepEqual(
        threads.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .map((t: { threadId: string; turns: number; lastRunId: string }) => [t.threadId, t.turns, t.lastRunId]),
        [['conv-1', 3, run3]],
      )
    })

  it("approvals are bound to their turn: turn 1's run-wide approval does not reach turn 2, which is approved from another process", async () => {
    lab = new FaultLab({
      script: [{ tool: 'pay_once', args: { amount: 3 } }, { tool: 'pay_once', args: { amount: 4 } }, { final: 'paid' }],
      rules: [{ id: 'payments-ask', verdict: 'ask', match: { tool: 'pay_*' } }],
      plugins: ['grants'],
    })
    const first = await lab.run(['run', '--thread', 'pay-1', '--task', 'Pay three, then four.', '--json'])
    assert.equal(first.code, 5, first.stderr)
    const run1 = runIdOf(first)
    const busy = await lab.run(['run', '--thread', 'pay-1', '--task', 'Again.'])
    assert.equal(busy.code, 7)
    assert.match(busy.stderr, new RegExp(`thread_busy.*WAITING_APPROVAL.*cordage approve ${run1} s1\\.a1`))
    const approved = await lab.run(['approve', run1, 's1.a1', '--scope', 'run'])
    assert.equal(approved.code, 0, `${approved.stderr}: the run-wide approval covered turn 1's second payment`)

    const second = await lab.run(['run', '--thread', 'pay-1', '--task', 'Again.', '--json'])
    assert.equal(second.code, 5, 'turn 2 asks again')
    const run2 = runIdOf(second)
    const asked = second.events.find((e) => e.type === 'tool/approval-requested')!
    assert.deepEqual([asked.turnId, asked.threadId, asked.actionId], ['t2', 'pay-1', 's1.a1'])
    // Another process gives the approval.
    const decided = await lab.run(['approve', run2, 's1.a1', '--json'])
    assert.equal(decided.code, 5, 'approved once: the next payment of turn 2 asks again')
    assert.equal(decided.events.find((e) => e.type === 'tool/approval-decided')?.turnId, 't2')
    assert.equal((await lab.run(['approve', run2, 's2.a1'])).code, 0)
    assert.equal(lab.payments().length, 4)
  })

  it('maxTurns refuses the next turn; the thread token budget stops a later turn', async () => {
    lab = new FaultLab({
      script: [{ tool: 'lookup', args: {} }, { final: 'done' }],
      model: { usage: { inputTokens: 50, outputTokens: 10, costUsd: 0 } },
      budgets: { thread: { maxTurns: 3, maxTokens: 150 } } as never,
    })
    // 60 tokens a step, 120 a turn: turn 2 passes 150 with its first step and stops at the next boundary.
    assert.equal((await lab.run(['run', '--thread', 'b-1', '--task', 'One.'])).code, 0)
    const two = await lab.run(['run', '--thread', 'b-1', '--task', 'Two.', '--json'])
    assert.equal(two.code, 4, two.stderr)
    const end = two.events.at(-1)!
    assert.ok(
      end.type === 'run/end' && end.data.status === 'STOPPED' && end.data.failureCode === 'thread_budget_exceeded',
      JSON.stringify(end),
    )
    // The thread's tokens are spent: the third turn is refused before anything is recorded (it would
    // only stop at once and use up a turn).
    const three = await lab.run(['run', '--thread', 'b-1', '--task', 'Three.'])
    assert.equal(three.code, 1)
    assert.match(
      three.stderr,
      /thread_budget_exceeded.*used \d+ tokens over its turns, its budget allows 150 \(budgets\.thread\.maxTokens\): start a new thread/,
    )
    assert.equal((await (lab.db() as import('cordage').StoreService).threadTurns!('b-1')).length, 2)
  })

  it('maxTurns refuses the turn after the last one allowed', async () => {
    lab = new FaultLab({ script: [{ final: 'done' }], budgets: { thread: { maxTurns: 2 } } as never })
    for (const task of ['One.', 'Two.']) assert.equal((await lab.run(['run', '--thread', 'm-1', '--task', task])).code, 0)
    const three = await lab.run(['run', '--thread', 'm-1', '--task', 'Three.'])
    assert.equal(three.code, 1)
    assert.match(three.stderr, /thread_budget_exceeded.*2 turn\(s\).*maxTurns/)
    assert.equal((await (lab.db() as import('cordage').StoreService).threadTurns!('m-1')).length, 2)
  })

  it('cancel RUN cancels one turn; cancel --thread closes the thread and cancels its waiting turn', async () => {
    lab = new FaultLab({
      script: [{ tool: 'pay_once', args: { amount: 3 } }, { final: 'paid' }],
      rules: [{ id: 'payments-ask', verdict: 'ask', match: { tool: 'pay_*' } }],
    })
    const first = await lab.run(['run', '--thread', 'c-1', '--task', 'Pay.', '--json'])
    assert.equal((await lab.run(['cancel', runIdOf(first)])).code, 6)
    const second = await lab.run(['run', '--thread', 'c-1', '--task', 'Pay after all.', '--json'])
    assert.equal(second.code, 5, 'the thread is still open after a turn was cancelled')
    const closed = await lab.run(['cancel', '--thread', 'c-1', '--by', 'alice', '--reason', 'done talking'])
    assert.equal(closed.code, 6, closed.stderr)
    assert.match(closed.stderr, /thread c-1 closed/)
    const last = (await lab.events(runIdOf(second))).at(-1)!
    assert.equal(last.type === 'run/end' && last.data.status, 'CANCELLED')
    const refused = await lab.run(['run', '--thread', 'c-1', '--task', 'More.'])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /thread_closed.*closed by alice \(done talking\)/)
    const shown = await lab.run(['thread', 'c-1'])
    assert.match(shown.stdout, /closed by alice at .*: done talking/)
    assert.equal(lab.payments().length, 0)
    const both = await lab.run(['cancel', runIdOf(first), '--thread', 'c-1'])
    assert.equal(both.code, 2)
    assert.match(both.stderr, /invalid_input.*not both/)
    const none = await lab.run(['cancel'])
    assert.equal(none.code, 2)
  })
})
