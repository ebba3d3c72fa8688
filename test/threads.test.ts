/**
 * Threads (decision 0017: a thread is a series of runs, one per turn), through the real support desk
 * and store-memory: gap-free turn ids, threadId on every event, what a turn sees of the turns before
 * it (in its log and in what the model was given), refusals before anything is recorded, thread
 * budgets, cancelling a turn vs closing the thread, and approvals bound to their turn.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CordageError, type RunEvent } from 'cordage'
import { historyOf } from '../plugins/threads/history.ts'
import type { RunState, TranscriptEntry } from '../core/kernel/state.ts'
import { chatMessages } from '../plugins/model-openai/request.ts'
import { messagesRequest } from '../plugins/model-anthropic/request.ts'
import { refundAnswer, supportDesk, type Harness } from './helpers.ts'

const lookup = { tool: 'lookup_policy', args: { topic: 'refunds' } }
const followup = (ticketId: string) => ({ tool: 'record_followup', args: { ticketId, note: 'noted' } })
const rules = [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
]

async function turnEvents(desk: Harness, runId: string): Promise<RunEvent[]> {
  return desk.events(runId)
}

function rejectsWith(code: string, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(CordageError.is(error, code as never), `expected ${code}, got ${String(error)}`)
    if (pattern) assert.match((error as Error).message, pattern)
    return true
  }
}

describe('threads: a series of runs, one per turn', () => {
  it('turns t1, t2, t3 without gaps, threadId on every event, and each turn sees the turns before it', async () => {
    const desk = await supportDesk({ script: [lookup, { final: refundAnswer }] })
    try {
      const runs: RunState[] = []
      for (const task of ['First question?', 'Second question?', 'Third question?']) {
        const state = await desk.agent.run(task, { thread: 'th-1' })
        assert.equal(state.status, 'COMPLETED', state.reason)
        runs.push(state)
      }
      for (const [i, state] of runs.entries()) {
        const events = await turnEvents(desk, state.runId)
        assert.ok(
          events.every((e) => e.threadId === 'th-1'),
          'every event carries threadId',
        )
        const turnIds = [...new Set(events.map((e) => e.turnId).filter(Boolean))]
        assert.deepEqual(turnIds, [`t${i + 1}`], 'one turn id per run, the turn of the thread')
        const start = events[0] as RunEvent<'run/start'>
        assert.deepEqual(
          [start.data.thread?.id, start.data.thread?.turn, start.data.thread?.previousRunId],
          ['th-1', i + 1, i ? runs[i - 1].runId : undefined],
        )
        const types = events.map((e) => e.type)
        if (i === 0) assert.deepEqual(types.slice(0, 2), ['run/start', 'turn/start'])
        else
          assert.deepEqual(types.slice(0, 3), ['run/start', 'thread/history', 'turn/start'], 'history after run/start, before turn/start')
      }
      // Turn 3 sees turns 1 and 2: their messages, calls (prefixed ids) and answers, in order.
      const third = await turnEvents(desk, runs[2].runId)
      const history = third[1] as RunEvent<'thread/history'>
      assert.equal(history.data.from, runs[1].runId)
      assert.equal(history.data.turns, 2)
      assert.deepEqual(
        history.data.entries.map(
          (e) => `${e.turn}:${e.kind}:${e.kind === 'observation' ? e.actionId : e.kind === 'assistant' ? e.actionIds.join(',') : ''}`,
        ),
        [
          't1:user:',
          't1:assistant:t1.s1.a1',
          't1:observation:t1.s1.a1',
          't1:assistant:',
          't2:user:',
          't2:assistant:t2.s1.a1',
          't2:observation:t2.s1.a1',
          't2:assistant:',
        ],
      )
      // What the model was given at turn 3's first step: system, turn 1, turn 2, then turn 3's task.
      const requests = desk.model().requests.filter((r) => r.runId === runs[2].runId)
      const first = requests[0].messages
      const users = first.filter((m) => m.role === 'user').map((m) => m.text)
      assert.deepEqual(users, ['First question?', 'Second question?', 'Third question?'])
      const calls = first.flatMap((m) => m.calls?.map((c) => c.actionId) ?? [])
      const results = first.filter((m) => m.role === 'tool').map((m) => m.actionId)
      assert.deepEqual(calls, ['t1.s1.a1', 't2.s1.a1'])
      assert.deepEqual(results, calls, 'each earlier call pairs with its result')
      // Usage carried over: the thread's earlier turns.
      const usedBefore = (third[0] as RunEvent<'run/start'>).data.thread!.usedBefore
      const sum = runs[0].usage.inputTokens + runs[0].usage.outputTokens + runs[1].usage.inputTokens + runs[1].usage.outputTokens
      assert.equal(usedBefore.inputTokens + usedBefore.outputTokens, sum)
      // The store lists the turns.
      const turns = await desk.agent.store().threadTurns!('th-1')
      assert.deepEqual(
        turns.map((t) => [t.turn, t.runId, t.status]),
        runs.map((r, i) => [i + 1, r.runId, 'COMPLETED']),
      )
    } finally {
      await desk.stop()
    }
  })

  it('a turn while the last one waits is refused with thread_busy, naming the run and what to do; nothing is recorded', async () => {
    const desk = await supportDesk({ script: [followup('T-1'), { final: 'Noted.' }], rules, verifier: { minCount: 0 } })
    try {
      const waiting = await desk.agent.run('Note it.', { thread: 'th-busy' })
      assert.equal(waiting.status, 'WAITING_APPROVAL')
      const before = (await desk.agent.store().list()).length
      await assert.rejects(
        desk.agent.run('Next.', { thread: 'th-busy' }),
        rejectsWith('thread_busy', new RegExp(`turn 1 \\(run ${waiting.runId}\\) is WAITING_APPROVAL.*approve ${waiting.runId} s1\\.a1`)),
      )
      assert.equal((await desk.agent.store().list()).length, before, 'no run was recorded')
      await (await desk.agent.approve(waiting.runId, 's1.a1')).done
      const next = await desk.agent.run('Next.', { thread: 'th-busy' })
      assert.equal((await desk.events(next.runId))[0].threadId, 'th-busy')
      assert.equal(next.thread?.turn, 2)
    } finally {
      await desk.stop()
    }
  })

  it('budgets.thread.maxTurns: the turn after the last allowed one is refused before anything is recorded', async () => {
    const desk = await supportDesk({ script: [lookup, { final: refundAnswer }], budgets: { thread: { maxTurns: 2 } } as never })
    try {
      await desk.agent.run('One?', { thread: 'th-max' })
      await desk.agent.run('Two?', { thread: 'th-max' })
      const before = (await desk.agent.store().list()).length
      await assert.rejects(desk.agent.run('Three?', { thread: 'th-max' }), rejectsWith('thread_budget_exceeded', /2 turn\(s\).*maxTurns/))
      assert.equal((await desk.agent.store().list()).length, before)
      assert.equal((await desk.agent.store().threadTurns!('th-max')).length, 2)
    } finally {
      await desk.stop()
    }
  })

  it("budgets.thread.maxTokens: a later turn stops STOPPED thread_budget_exceeded once the thread's tokens reach it", async () => {
    const desk = await supportDesk({
      script: [lookup, { final: refundAnswer }],
      model: { usage: { inputTokens: 100, outputTokens: 20, costUsd: 0 } },
      budgets: { maxTokens: 1000, thread: { maxTokens: 500 } } as never,
    })
    try {
      // Each turn spends 240 tokens (two steps): turn 1 ends at 240, turn 2 at 480, turn 3 stops at its first boundary past 500.
      assert.equal((await desk.agent.run('One?', { thread: 'th-tok' })).status, 'COMPLETED')
      assert.equal((await desk.agent.run('Two?', { thread: 'th-tok' })).status, 'COMPLETED')
      const third = await desk.agent.run('Three?', { thread: 'th-tok' })
      assert.equal(third.status, 'STOPPED')
      assert.equal(third.failureCode, 'thread_budget_exceeded')
      assert.match(third.reason ?? '', /th-tok: \d+ tokens used over 3 turn\(s\), budget 500/)
      assert.equal(
        third.usage.inputTokens + third.usage.outputTokens,
        120,
        'stopped after one step: the run budget alone (1000) would have gone on',
      )
    } finally {
      await desk.stop()
    }
  })

  it('cancelling a turn leaves the thread open; closing the thread cancels its waiting turn and refuses the next', async () => {
    const desk = await supportDesk({ script: [followup('T-1'), { final: 'Noted.' }], rules, verifier: { minCount: 0 } })
    try {
      const first = await desk.agent.run('Note it.', { thread: 'th-c' })
      const cancelled = await desk.agent.cancel(first.runId, { by: 'alice' })
      assert.equal(cancelled.status, 'CANCELLED')
      const second = await desk.agent.run('Note it again.', { thread: 'th-c' })
      assert.equal(second.status, 'WAITING_APPROVAL', 'the thread took the next turn')
      const closed = await desk.agent.closeThread('th-c', { by: 'bob', reason: 'conversation over' })
      assert.equal(closed?.status, 'CANCELLED')
      assert.equal(closed?.runId, second.runId)
      const summary = await desk.agent.store().thread!('th-c')
      assert.deepEqual([summary?.closed?.by, summary?.closed?.reason], ['bob', 'conversation over'])
      await assert.rejects(desk.agent.run('More?', { thread: 'th-c' }), rejectsWith('thread_closed', /closed by bob/))
      assert.equal(await desk.agent.closeThread('th-c', { by: 'carol' }), undefined, 'closing again cancels nothing')
      assert.equal((await desk.agent.store().thread!('th-c'))?.closed?.by, 'bob', 'the first close is kept')
      await assert.rejects(desk.agent.closeThread('th-none', { by: 'bob' }), rejectsWith('thread_not_found', /th-none/))
    } finally {
      await desk.stop()
    }
  })

  it('an approval for the run given in turn 1 does not reach turn 2: turn 2 asks again', async () => {
    const desk = await supportDesk({
      script: [followup('T-1'), followup('T-2'), { final: 'Noted.' }],
      rules,
      verifier: { minCount: 0 },
      plugins: ['grants'],
    })
    try {
      const paused = await desk.agent.run('Note both.', { thread: 'th-a' })
      const first = await (await desk.agent.approve(paused.runId, 's1.a1', { scope: 'run' })).done
      assert.equal(first.status, 'COMPLETED', first.reason)
      const second = await desk.agent.run('Note both again.', { thread: 'th-a' })
      assert.equal(second.status, 'WAITING_APPROVAL', 'the run grant of turn 1 does not hold in turn 2')
      assert.equal(second.waiting?.actionId, 's1.a1')
      const requested = (await desk.events(second.runId)).find((e) => e.type === 'tool/approval-requested')!
      assert.deepEqual([requested.turnId, requested.threadId], ['t2', 'th-a'])
    } finally {
      await desk.stop()
    }
  })

  it('refuses a malformed thread id before anything is recorded', async () => {
    const desk = await supportDesk({ script: [{ final: refundAnswer }] })
    try {
      for (const id of ['', ' x', 'a/b', 'x'.repeat(129)])
        assert.throws(() => desk.agent.start('Hi', { thread: id }), rejectsWith('invalid_input'))
      assert.equal((await desk.agent.store().list()).length, 0)
    } finally {
      await desk.stop()
    }
  })
})

describe('context plugins project earlier turns before this turn, calls paired with results', () => {
  for (const contextPlugin of ['context-basic', 'context-default']) {
    it(`${contextPlugin}: turn 1's message, call, result and answer, then turn 2's task; OpenAI and Anthropic shapes pair them`, async () => {
      const desk = await supportDesk({ script: [lookup, { final: refundAnswer }], contextPlugin })
      try {
        await desk.agent.run('Refund window?', { thread: 'th-ctx' })
        const second = await desk.agent.run('And for damaged items?', { thread: 'th-ctx' })
        const messages = desk.model().requests.filter((r) => r.runId === second.runId)[0].messages
        assert.deepEqual(
          messages.map((m) => `${m.role}${m.calls ? `:${m.calls.map((c) => c.actionId)}` : m.actionId ? `:${m.actionId}` : ''}`),
          ['system', 'user', 'assistant:t1.s1.a1', 'tool:t1.s1.a1', 'assistant', 'user'],
        )
        assert.deepEqual(
          messages.filter((m) => m.role === 'user').map((m) => m.text),
          ['Refund window?', 'And for damaged items?'],
        )
        const openai = chatMessages(messages) as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[]
        const callId = openai.find((m) => m.tool_calls)?.tool_calls?.[0].id
        assert.equal(callId, 'call_t1_s1_a1')
        assert.equal(openai.find((m) => m.role === 'tool')?.tool_call_id, callId)
        const anthropic = messagesRequest({ model: 'x', maxTokens: 100 } as never, messages, []).messages as {
          role: string
          content: { type: string; id?: string; tool_use_id?: string }[]
        }[]
        const blocks = anthropic.flatMap((m) => m.content)
        const use = blocks.find((b) => b.type === 'tool_use')
        assert.equal(use?.id, 'call_t1_s1_a1')
        assert.equal(blocks.find((b) => b.type === 'tool_result')?.tool_use_id, use?.id)
        assert.deepEqual(
          anthropic.map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant', 'user'],
        )
      } finally {
        await desk.stop()
      }
    })
  }
})

describe('context-default under budget pressure in a later turn', () => {
  it("keeps this turn's task as the goal, and lets earlier turns go first", async () => {
    const desk = await supportDesk({
      script: [lookup, lookup, { final: refundAnswer }],
      contextPlugin: { plugin: 'context-default', config: { system: 'You help.', maxTokens: 1, recent: 1 } },
    })
    try {
      await desk.agent.run('Refund window?', { thread: 'th-press' })
      const second = await desk.agent.run('And for damaged items?', { thread: 'th-press' })
      assert.equal(second.status, 'COMPLETED', second.reason)
      const third = desk.model().requests.filter((r) => r.runId === second.runId)[2].messages
      const users = third.filter((m) => m.role === 'user' && !m.ref).map((m) => m.text)
      assert.deepEqual(users, ['And for damaged items?'], "this turn's task is kept; turn 1's message is dropped under pressure")
    } finally {
      await desk.stop()
    }
  })
})

describe('thread/history is bounded', () => {
  const user = (text: string, turn: string): TranscriptEntry => ({ kind: 'user', text, seq: 1, turn })
  const answer = (text: string, turn: string): TranscriptEntry => ({
    kind: 'assistant',
    decision: { kind: 'final', text },
    actionIds: [],
    seq: 1,
    turn,
  })
  const call = (id: string, turn?: string): TranscriptEntry[] => [
    {
      kind: 'assistant',
      decision: { kind: 'tool_calls', calls: [{ name: 'x', args: {} }] },
      actionIds: [id],
      seq: 2,
      ...(turn ? { turn } : {}),
    },
    { kind: 'observation', actionId: id, tool: 'x', text: 'r'.repeat(3000), ok: true, seq: 3, ...(turn ? { turn } : {}) },
  ]

  it('keeps everything within the bound; beyond it the oldest turns keep only their message and answer', () => {
    const transcript: TranscriptEntry[] = [
      user('q1', 't1'),
      ...call('t1.s1.a1', 't1'),
      answer('a1', 't1'),
      user('q2', 't2'),
      ...call('t2.s1.a1', 't2'),
      answer('a2', 't2'),
      { kind: 'user', text: 'q3', seq: 5 },
      ...call('s1.a1'),
      { kind: 'assistant', decision: { kind: 'final', text: 'a3' }, actionIds: [], seq: 6 },
    ]
    const whole = historyOf({ runId: 'r3', transcript }, 3)
    assert.equal(whole.entries.length, transcript.length)
    assert.equal(whole.shortened, undefined)
    assert.deepEqual(
      whole.entries.map((e) => e.turn),
      ['t1', 't1', 't1', 't1', 't2', 't2', 't2', 't2', 't3', 't3', 't3', 't3'],
    )
    const tight = historyOf({ runId: 'r3', transcript }, 3, 6000)
    assert.equal(tight.shortened, 2, 'turns 1 and 2 shortened, turn 3 whole')
    assert.deepEqual(
      tight.entries.map((e) => `${e.turn}:${e.kind}`),
      ['t1:user', 't1:assistant', 't2:user', 't2:assistant', 't3:user', 't3:assistant', 't3:observation', 't3:assistant'],
    )
    assert.ok(JSON.stringify(tight.entries).length <= 6000)
    const tiny = historyOf({ runId: 'r3', transcript }, 3, 400)
    assert.ok(JSON.stringify(tiny.entries).length <= 400)
    assert.ok((tiny.dropped ?? 0) >= 1)
    assert.equal(tiny.turns, 3 - tiny.dropped!)
  })
})
