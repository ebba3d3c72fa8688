/**
 * The chat view's routes (playground/threads-api.ts) through a real HTTP server on a free port: listing
 * and reading threads, starting one and adding turns, each turn a run that sees the turns before it;
 * the 409 while the previous turn waits for approval, and the next turn once it is approved; the token,
 * read-only, strict bodies (unknown keys, types, lengths, size, content type), the error codes of
 * threads (404, 409, 501), and input quoted in messages that never comes back as markup. A turn whose
 * previous turn's spending cannot be read (a child run's log edited behind the store's back) is
 * refused with 409 `thread_spending_unknown`, recording nothing.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { startPlayground, type Playground } from '../playground/server.ts'
import { tempDir } from './temp.ts'
import { bearer } from './playground-helpers.ts'
import { chatPresetCopy } from './playground-chat-preset.ts'

describe('playground threads API', () => {
  let playground: Playground
  let preset: string
  let base: string
  const errors: unknown[] = []

  const get = async (path: string, headers: Record<string, string> = bearer(playground)) => {
    const response = await fetch(base + path, { headers })
    return { status: response.status, body: (await response.json()) as any }
  }
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(base + path, {
      method: 'POST',
      headers: { ...bearer(playground), 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
    const text = await response.text()
    return { status: response.status, body: JSON.parse(text) as any, text }
  }
  /** The thread once `until` holds for it; the run drives in the background, so it is asked again until then. */
  const threadWhen = async (id: string, until: (thread: any) => boolean) => {
    for (;;) {
      const { status, body } = await get(`/api/threads/${id}`)
      assert.equal(status, 200, JSON.stringify(body))
      if (until(body)) return body
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  const lastTurnIs = (status: string) => (t: any) => t.turns.length > 0 && t.turns.at(-1).status === status

  before(async () => {
    preset = chatPresetCopy()
    playground = await startPlayground({ preset, port: 0, onError: (e) => errors.push(e) })
    base = playground.origin
  })
  after(async () => {
    await playground.close()
    assert.deepEqual(errors, [])
  })

  it('needs the token on every thread route, reads included', async () => {
    for (const [method, path] of [
      ['GET', '/api/threads'],
      ['GET', '/api/threads/t-1'],
      ['POST', '/api/threads'],
      ['POST', '/api/threads/t-1/turns'],
    ]) {
      for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-wrong-token-wrong' }]) {
        const response = await fetch(base + path, {
          method,
          headers: { ...headers, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
          body: method === 'POST' ? JSON.stringify({ agent: 'chat', task: 'hi' }) : undefined,
        })
        assert.equal(response.status, 401, `${method} ${path}`)
        assert.equal(((await response.json()) as any).error.code, 'unauthorized')
      }
    }
    assert.deepEqual((await get('/api/threads')).body.threads, [], 'nothing was started')
  })

  it('refuses bad bodies with a 400 that says what and where: unknown keys, types, lengths, ids', async () => {
    const cases: [unknown, RegExp][] = [
      [{ agent: 'chat', task: 'hi', extra: 1 }, /unrecognized key|extra/i],
      [{ agent: 'chat', task: 42 }, /task/],
      [{ agent: 'chat', task: '   ' }, /task: the message is a non-empty string/],
      [{ agent: 'chat', task: 'x'.repeat(10_001) }, /task: the message is at most 10,000 characters/],
      [{ agent: 'chat' }, /task/],
      [{ task: 'hi' }, /agent/],
      [{ agent: 'chat', task: 'hi', thread: 'has space' }, /thread: a thread id is 1 to 128 letters/],
      [{ agent: 'chat', task: 'hi', thread: 'x'.repeat(129) }, /thread: a thread id/],
      [{ agent: 'chat', task: 'hi', thread: 7 }, /thread/],
      [[1, 2], /\(body\)/],
    ]
    for (const [body, message] of cases) {
      const { status, body: answer } = await post('/api/threads', body)
      assert.equal(status, 400, JSON.stringify(body).slice(0, 80))
      assert.equal(answer.error.code, 'invalid_input')
      assert.match(answer.error.message, message)
    }
    const turn = await post('/api/threads/t-1/turns', { task: 'hi', thread: 't-2' })
    assert.equal(turn.status, 400)
    assert.match(turn.body.error.message, /unrecognized key|thread/i)
    assert.equal((await post('/api/threads', '{"agent": "chat", "task":')).status, 400, 'not JSON')
    const form = await post('/api/threads', 'agent=chat&task=hi', { 'content-type': 'application/x-www-form-urlencoded' })
    assert.equal(form.status, 415, 'a cross-origin form cannot post here')
    const big = await post('/api/threads', { agent: 'chat', task: 'x'.repeat(1 << 20) })
    assert.equal(big.status, 413)
    for (const limit of ['0', '-1', '1.5', 'abc', '501']) {
      const { status, body } = await get(`/api/threads?limit=${limit}`)
      assert.equal(status, 400, limit)
      assert.match(body.error.message, /limit is how many threads to list/)
    }
    assert.equal((await get('/api/threads/bad%20id')).status, 400)
    assert.equal((await get('/api/threads/a/b/c')).status, 404, 'no such route')
    const put = await fetch(base + '/api/threads', { method: 'PUT', headers: bearer(playground) })
    assert.equal(put.status, 405)
  })

  it('quotes input in its messages as inert text, never as markup', async () => {
    const xss = '<img src=x onerror=alert(1)>'
    const bad = await post('/api/threads', { agent: 'chat', task: 'hi', thread: xss })
    assert.equal(bad.status, 400)
    const key = await post('/api/threads', { agent: 'chat', task: 'hi', [xss]: 1 })
    assert.equal(key.status, 400)
    const path = await get(`/api/threads/${encodeURIComponent(xss)}`)
    assert.equal(path.status, 400)
    for (const text of [bad.text, key.text, JSON.stringify(path.body)]) assert.doesNotMatch(text, /<img/i)
    for (const text of [key.text, JSON.stringify(path.body)]) assert.match(text, /\\\\u003cimg/, 'the < is quoted, escaped')
  })

  it('answers 404 for an agent or thread that does not exist and 501 for a store that keeps no threads', async () => {
    const agent = await post('/api/threads', { agent: 'nobody', task: 'hi' })
    assert.equal(agent.status, 404)
    assert.equal(agent.body.error.code, 'agent_not_found')
    const missing = await get('/api/threads/no-such-thread')
    assert.equal(missing.status, 404)
    assert.equal(missing.body.error.code, 'thread_not_found')
    const turn = await post('/api/threads/no-such-thread/turns', { task: 'hi' })
    assert.equal(turn.status, 404)
    assert.equal(turn.body.error.code, 'thread_not_found')
    const legacy = await post('/api/threads', { agent: 'legacy', task: 'hi' })
    assert.equal(legacy.status, 501)
    assert.equal(legacy.body.error.code, 'feature_unsupported')
    assert.match(legacy.body.error.message, /agent "legacy" keeps no threads/)
    const list = await get('/api/threads')
    assert.deepEqual(list.body.unsupported, ['legacy'])
  })

  let runs: string[] = []

  it('starts a thread; each next turn is a run that sees the turns before it', async () => {
    const first = await post('/api/threads', { agent: 'chat', task: 'my name is Ada', thread: 'chat-1' })
    assert.equal(first.status, 202, first.text)
    assert.deepEqual({ ...first.body, runId: undefined }, { threadId: 'chat-1', turn: 1, runId: undefined, agent: 'chat' })
    let thread = await threadWhen('chat-1', lastTurnIs('COMPLETED'))
    assert.equal(thread.turns[0].answer, 'You said "my name is Ada". Earlier you said: nothing.')
    const again = await post('/api/threads', { agent: 'chat', task: 'hi', thread: 'chat-1' })
    assert.equal(again.status, 409, 'a new thread with the id of one that exists')
    assert.match(
      again.body.error.message,
      /thread chat-1 exists already \(1 turn\(s\)\); add the next turn with POST \/api\/threads\/chat-1\/turns/,
    )

    const second = await post('/api/threads/chat-1/turns', { task: 'what is my name?' })
    assert.equal(second.status, 202, second.text)
    assert.equal(second.body.turn, 2)
    assert.notEqual(second.body.runId, first.body.runId, 'a turn is a run of its own')
    thread = await threadWhen('chat-1', (t) => t.turns.length === 2 && t.turns[1].status === 'COMPLETED')
    assert.deepEqual(
      thread.turns.map((t: any) => [t.turn, t.runId, t.task, t.status, t.failureCode]),
      [
        [1, first.body.runId, 'my name is Ada', 'COMPLETED', undefined],
        [2, second.body.runId, 'what is my name?', 'COMPLETED', undefined],
      ],
    )
    assert.equal(thread.turns[1].answer, 'You said "what is my name?". Earlier you said: "my name is Ada".', 'turn 2 saw turn 1')
    assert.equal(thread.thread.threadId, 'chat-1')
    assert.equal(thread.thread.agent, 'chat')
    assert.equal(thread.thread.turns, 2)
    runs = [first.body.runId, second.body.runId]

    // Every event of a turn's run carries the thread; turn 2 records what it saw of turn 1.
    const events: RunEvent[] = (await get(`/api/runs/${second.body.runId}/events`)).body.events
    assert.ok(events.length > 0)
    assert.deepEqual([...new Set(events.map((e) => e.threadId))], ['chat-1'])
    const history = events.find((e) => e.type === 'thread/history')
    assert.ok(history, 'turn 2 records the history it was given')
    assert.equal((history.data as { turns: number }).turns, 1)
    assert.ok(
      events.findIndex((e) => e.type === 'thread/history') < events.findIndex((e) => e.type === 'step/model-request'),
      'the history is recorded before the model is asked',
    )
  })

  it('refuses the next message with 409 while the previous turn waits for approval; takes it once approved', async () => {
    const waiting = await post('/api/threads/chat-1/turns', { task: 'please record that Ada called' })
    assert.equal(waiting.status, 202, waiting.text)
    assert.equal(waiting.body.turn, 3)
    const thread = await threadWhen('chat-1', lastTurnIs('WAITING_APPROVAL'))
    const turn3 = thread.turns[2]
    assert.equal(turn3.waiting.tool, 'record_followup')
    assert.equal(turn3.waiting.status, 'WAITING_APPROVAL')
    assert.ok(turn3.waiting.actionId)

    const busy = await post('/api/threads/chat-1/turns', { task: 'hello?' })
    assert.equal(busy.status, 409)
    assert.equal(busy.body.error.code, 'thread_busy')
    assert.match(
      busy.body.error.message,
      /turn 3 of thread chat-1 \(run .+\) is WAITING_APPROVAL: .*approve or reject its pending action first/,
    )
    assert.equal((await get('/api/threads/chat-1')).body.turns.length, 3, 'the refused message recorded nothing')

    const approved = await post(`/api/runs/${waiting.body.runId}/approve`, { actionId: turn3.waiting.actionId, by: 'alice' })
    assert.equal(approved.status, 202)
    await threadWhen('chat-1', lastTurnIs('COMPLETED'))
    const fourth = await post('/api/threads/chat-1/turns', { task: 'thanks' })
    assert.equal(fourth.status, 202, fourth.text)
    assert.equal(fourth.body.turn, 4)
    const done = await threadWhen('chat-1', (t) => t.turns.length === 4 && t.turns[3].status === 'COMPLETED')
    assert.deepEqual(
      done.turns.map((t: any) => t.turn),
      [1, 2, 3, 4],
    )
    assert.match(done.turns[3].answer, /Earlier you said: "my name is Ada", "what is my name\?", "please record that Ada called"/)
    runs.push(waiting.body.runId, fourth.body.runId)
  })

  it('makes an id for a thread started without one, and lists threads newest first', async () => {
    const started = await post('/api/threads', { agent: 'chat', task: 'a second chat' })
    assert.equal(started.status, 202, started.text)
    assert.match(started.body.threadId, /^th-[A-Za-z0-9_-]{12}$/)
    await threadWhen(started.body.threadId, lastTurnIs('COMPLETED'))
    const { status, body } = await get('/api/threads')
    assert.equal(status, 200)
    assert.deepEqual(
      body.threads.map((t: any) => [t.threadId, t.agent, t.turns, t.lastStatus]),
      [
        [started.body.threadId, 'chat', 1, 'COMPLETED'],
        ['chat-1', 'chat', 4, 'COMPLETED'],
      ],
    )
    assert.equal(body.threads[1].lastRunId, runs[3])
    assert.equal((await get('/api/threads?limit=1')).body.threads.length, 1)
    assert.deepEqual((await get('/api/threads?agent=legacy')).body.threads, [])
    assert.equal((await get('/api/threads?agent=nobody')).status, 404)
  })

  it('read-only: lists and reads threads, refuses to start one or add a turn (403), recording nothing', async () => {
    const viewer = await startPlayground({ preset, port: 0, readOnly: true, onError: (e) => errors.push(e) })
    try {
      const headers = { authorization: `Bearer ${viewer.token}`, 'content-type': 'application/json' }
      const list = await fetch(`${viewer.origin}/api/threads`, { headers })
      assert.equal(list.status, 200)
      assert.ok(((await list.json()) as any).threads.some((t: any) => t.threadId === 'chat-1'))
      assert.equal((await fetch(`${viewer.origin}/api/threads/chat-1`, { headers })).status, 200)
      for (const [path, body] of [
        ['/api/threads', { agent: 'chat', task: 'hi' }],
        ['/api/threads/chat-1/turns', { task: 'hi' }],
      ] as const) {
        const response = await fetch(viewer.origin + path, { method: 'POST', headers, body: JSON.stringify(body) })
        assert.equal(response.status, 403, path)
        assert.match(((await response.json()) as any).error.message, /read-only/)
      }
    } finally {
      await viewer.close()
    }
    assert.equal((await get('/api/threads/chat-1')).body.turns.length, 4)
  })
})

/**
 * Agent `desk` starts agent `helper` as a child in each turn; all keep their runs in one SQLite file,
 * so the test can edit the child's log behind the store's back. Agent `asking` starts `careful`, whose
 * follow-up waits for approval.
 */
function spawningPreset(): string {
  const dir = tempDir('cordage-playground-spawn-')
  const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 }
  const common = [
    { plugin: 'store-sqlite', config: { path: 'runs.db' } },
    'tools-registry',
    'context-basic',
    { plugin: 'verifier-basic', config: { minCount: 0 } },
    { plugin: 'policy-rules', version: '^2.0.0', config: { default: 'allow' } },
  ]
  const preset = {
    cordage: 1,
    agents: {
      desk: {
        spawns: ['helper'],
        budgets: { maxSteps: 4, thread: { maxTokens: 10_000 } },
        model: {
          plugin: 'model-scripted',
          config: { usage, script: [{ tool: 'spawn_agent', args: { agent: 'helper', task: 'dig' } }, { final: 'done' }] },
        },
        // The thread's token budget needs the meter, for the desk and for the helper it starts.
        plugins: [...common, { plugin: 'subagents', config: { agents: ['helper'] } }, 'threads', 'budgets'],
      },
      helper: {
        budgets: { maxSteps: 4 },
        model: { plugin: 'model-scripted', config: { usage, script: [{ final: 'found' }] } },
        plugins: [...common, 'budgets'],
      },
      // Started by `asking`: its follow-up waits for approval, so its parent waits on it.
      careful: {
        budgets: { maxSteps: 4 },
        model: {
          plugin: 'model-scripted',
          config: { usage, script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'called' } }, { final: 'noted' }] },
        },
        plugins: [
          ...common.slice(0, 4),
          {
            plugin: 'policy-rules',
            version: '^2.0.0',
            config: { default: 'allow', approvers: ['*'], rules: [{ id: 'ask', verdict: 'ask', match: { tool: 'record_followup' } }] },
          },
          { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
        ],
      },
      asking: {
        spawns: ['careful'],
        budgets: { maxSteps: 4 },
        model: {
          plugin: 'model-scripted',
          config: { usage, script: [{ tool: 'spawn_agent', args: { agent: 'careful', task: 'note it' } }, { final: 'done' }] },
        },
        plugins: [...common, { plugin: 'subagents', config: { agents: ['careful'] } }, 'threads'],
      },
    },
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return file
}

describe('playground API: runs with child runs', () => {
  let playground: Playground
  let preset: string
  const errors: unknown[] = []
  const headers = () => ({ ...bearer(playground), 'content-type': 'application/json' })
  const post = async (path: string, body: unknown) => {
    const response = await fetch(playground.origin + path, { method: 'POST', headers: headers(), body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as any }
  }
  const get = async (path: string) => (await (await fetch(playground.origin + path, { headers: headers() })).json()) as any
  /** The run once its status is `status`; it drives in the background. */
  const runWhen = async (runId: string, status: string) => {
    for (;;) {
      const run = await get(`/api/runs/${runId}`)
      if (run.status === status) return run
      assert.ok(!['COMPLETED', 'FAILED', 'STOPPED', 'CANCELLED'].includes(run.status) || run.status === status, JSON.stringify(run))
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  before(async () => {
    preset = spawningPreset()
    playground = await startPlayground({ preset, port: 0, onError: (e) => errors.push(e) })
  })
  after(async () => {
    await playground.close()
    assert.deepEqual(errors, [])
  })

  it("answers 409 thread_spending_unknown when a child's log was edited, naming the cause; nothing is recorded", async () => {
    const first = await post('/api/threads', { agent: 'desk', task: 'Dig into it.', thread: 'T-edit' })
    assert.equal(first.status, 202, JSON.stringify(first.body))
    const { runId } = first.body
    await runWhen(runId, 'COMPLETED')
    // Someone who can write the database shrinks what the child spent: its hash chain no longer holds.
    const db = new Database(join(preset, '..', 'runs.db'))
    try {
      const changed = db
        .prepare(
          `UPDATE events SET body = replace(body, '"inputTokens":100', '"inputTokens":1') WHERE run_id = ? AND type = 'step/model-response'`,
        )
        .run(`${runId}.s1.a1`)
      assert.ok(changed.changes > 0, "the child's log was found and edited")
    } finally {
      db.close()
    }
    const next = await post('/api/threads/T-edit/turns', { task: 'Next.' })
    assert.equal(next.status, 409, JSON.stringify(next.body))
    assert.equal(next.body.error.code, 'thread_spending_unknown')
    assert.match(
      next.body.error.message,
      new RegExp(`thread T-edit: what turn 1 \\(run ${runId}\\) spent cannot be determined \\(store_corrupt: .*start a new thread`),
    )
    assert.equal((await get('/api/threads/T-edit')).turns.length, 1, 'the refused turn recorded nothing')
  })

  it('answers 409 child_waiting to an approval of a parent that waits on its child, naming the child', async () => {
    const started = await post('/api/runs', { agent: 'asking', task: 'Note that Ada called.' })
    assert.equal(started.status, 202, JSON.stringify(started.body))
    const { runId } = started.body
    await runWhen(runId, 'WAITING_APPROVAL')
    const approve = await post(`/api/runs/${runId}/approve`, { by: 'alice' })
    assert.equal(approve.status, 409, JSON.stringify(approve.body))
    assert.equal(approve.body.error.code, 'child_waiting')
    assert.match(approve.body.error.message, new RegExp(`waits on its child run ${runId}\\.s1\\.a1 \\(agent careful\\)`))
    assert.equal((await get(`/api/runs/${runId}`)).status, 'WAITING_APPROVAL', 'the refused approval changed nothing')
  })
})
