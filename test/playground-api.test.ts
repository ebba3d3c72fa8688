/**
 * The playground's JSON API, through a real HTTP server on an ephemeral port: agents and their service
 * graph, runs, events by cursor (JSON and Server-Sent Events), starting, approving and rejecting,
 * the side-by-side replay, plugin events, and the 4xx answers to bad requests.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { startPlayground, type Playground } from '../playground/server.ts'
import { bearer, defaultPresetCopy, readSse, type Frame } from './playground-helpers.ts'

describe('playground API', () => {
  let playground: Playground
  let base: string
  const errors: unknown[] = []

  /** Every call carries the token, as the page does (test/security/playground-auth.test.ts: calls without it). */
  const auth = () => bearer(playground)
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(base + path, { headers: { ...auth(), ...headers } })
    return { status: response.status, body: (await response.json()) as any }
  }
  const post = async (path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
    const response = await fetch(base + path, {
      method: 'POST',
      headers: { ...auth(), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as any }
  }
  const sse = (path: string, until: (frame: Frame) => boolean, headers: Record<string, string> = {}) =>
    readSse(base + path, { ...auth(), ...headers }, until)
  /** fetch sets Host itself; a DNS-rebinding page would send its own name, which node:http lets us do. */
  const withHost = (path: string, host: string) =>
    new Promise<{ status: number; body: any }>((done, fail) => {
      request(base + path, { headers: { host, ...auth() } }, (res) => {
        let text = ''
        res
          .on('data', (chunk) => {
            text += chunk
          })
          .on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(text) }))
      })
        .on('error', fail)
        .end()
    })
  const events = (frames: Frame[]) => frames.filter((f) => f.event === 'run-event').map((f) => f.data as RunEvent)

  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, onError: (e) => errors.push(e) })
    base = playground.origin
  })
  after(async () => {
    await playground.close()
    assert.deepEqual(errors, [])
  })

  it('binds 127.0.0.1 only, on the port it was given (0: a free one); the URL to open carries a fresh token', () => {
    assert.match(playground.origin, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(playground.url, `${playground.origin}/?token=${playground.token}`)
    assert.match(playground.token, /^[A-Za-z0-9_-]{32}$/, '24 random bytes, base64url')
    assert.ok(playground.port > 0)
    assert.equal(playground.readOnly, false)
  })

  it('serves the page and its script, and nothing outside playground/public', async () => {
    const page = await fetch(base + '/')
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /text\/html/)
    assert.match(await page.text(), /Cordage playground/)
    const script = await fetch(base + '/app.js')
    assert.match(script.headers.get('content-type') ?? '', /javascript/)
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/server.ts', '/nothing.html']) {
      assert.equal((await fetch(base + path)).status, 404, path)
    }
  })

  it('lists the agents with their plugins, the versions installed side by side, and the service graph', async () => {
    const { status, body } = await get('/api/agents')
    assert.equal(status, 200)
    assert.deepEqual(
      body.agents.map((a: any) => a.name),
      ['support', 'followup'],
    )
    const [support, followup] = body.agents
    const policy = (agent: any) => agent.plugins.find((p: any) => p.name === 'policy-rules')
    assert.equal(policy(support).version, '1.0.0')
    assert.equal(policy(followup).version, '2.1.0')
    assert.equal(policy(followup).range, '^2.0.0')
    assert.deepEqual(policy(followup).installed, ['2.1.0', '1.0.0'])
    assert.deepEqual(policy(followup).provides, { policy: '1.2.0' })
    assert.equal(followup.plugins.find((p: any) => p.model).name, 'model-scripted')
    const service = followup.services.find((s: any) => s.service === 'policy')
    assert.equal(service.provider, 'policy-rules@2.1.0')
    assert.deepEqual(service.neededBy, [{ from: 'kernel', range: '^1.0.0', required: true, ok: true }])
    const tools = followup.services.find((s: any) => s.service === 'tools')
    assert.ok(
      tools.neededBy.some((n: any) => n.from === 'support-desk' && n.ok),
      JSON.stringify(tools),
    )
  })

  let runId: string

  it('starts a run that pauses for approval, streams it by cursor, approves it and streams it to run/end', async () => {
    const started = await post('/api/runs', { agent: 'followup' })
    assert.equal(started.status, 202)
    runId = started.body.runId
    const first = await sse(`/api/runs/${runId}/stream`, (f) => f.data?.type === 'run/paused')
    assert.deepEqual(
      events(first).map((e) => e.seq),
      Array.from({ length: 11 }, (_, i) => i + 1),
    )
    assert.equal(first[first.length - 1].id, '11', 'the SSE id is the seq')

    const state = await get(`/api/runs/${runId}`)
    assert.equal(state.body.status, 'WAITING_APPROVAL')
    // The preview recorded with the request comes along (its duration varies): the card shows it.
    const { preview, ...pending } = state.body.pending
    assert.deepEqual(preview.preview, {
      summary: 'record a follow-up note of 35 characters on ticket T-1001',
      record: { ticketId: 'T-1001', note: 'Refund approved; customer informed.' },
    })
    assert.deepEqual(pending, {
      actionId: 's1.a1',
      tool: 'record_followup',
      args: { ticketId: 'T-1001', note: 'Refund approved; customer informed.' },
      reason: 'a follow-up is visible to the customer; a person signs it off',
      ruleId: 'followups-need-approval',
      approvers: ['*'],
    })
    assert.equal((await get('/api/runs')).body.runs.find((r: any) => r.runId === runId).status, 'WAITING_APPROVAL')

    // The stream picks up after the last seq this client saw (Last-Event-ID, as an EventSource resends it).
    const rest = sse(`/api/runs/${runId}/stream?after=0`, (f) => f.event === 'end', { 'last-event-id': '11' })
    const approved = await post(`/api/runs/${runId}/approve`, { by: 'alice', reason: 'checked' })
    assert.equal(approved.status, 202)
    assert.deepEqual(approved.body, { runId, actionId: 's1.a1', approved: true, by: 'alice' })
    const frames = await rest
    const tail = events(frames)
    assert.equal(tail[0].seq, 12)
    assert.deepEqual(
      tail.map((e) => e.seq),
      Array.from({ length: tail.length }, (_, i) => i + 12),
      'no gap, nothing twice',
    )
    assert.equal(tail[0].type, 'tool/approval-decided')
    assert.deepEqual(tail[0].data, { approved: true, by: 'alice', reason: 'checked', scope: 'once' })
    const end = tail[tail.length - 1]
    assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED')
    assert.equal(frames[frames.length - 1].event, 'end')
  })

  it('returns the stored events after a cursor as JSON; ?after and Last-Event-ID agree', async () => {
    const all = await get(`/api/runs/${runId}/events`)
    assert.equal(all.body.events.length, 25)
    const later = await get(`/api/runs/${runId}/events?after=20`)
    assert.deepEqual(
      later.body.events.map((e: RunEvent) => e.seq),
      [21, 22, 23, 24, 25],
    )
    const byHeader = await get(`/api/runs/${runId}/events`, { 'last-event-id': '20' })
    assert.deepEqual(byHeader.body.events, later.body.events)
    const ended = await sse(`/api/runs/${runId}/stream?after=25`, (f) => f.event === 'end')
    assert.deepEqual(
      ended.map((f) => f.event),
      ['end'],
      'a finished run: nothing after the last seq, then end',
    )
  })

  it('rejects a pending action: the rejection is recorded with who decided', async () => {
    const { body } = await post('/api/runs', { agent: 'followup', task: 'Note on T-1002 that the parcel was found.' })
    await sse(`/api/runs/${body.runId}/stream`, (f) => f.data?.type === 'run/paused')
    const rejected = await post(`/api/runs/${body.runId}/reject`, { actionId: 's1.a1', by: 'bob' })
    assert.equal(rejected.status, 202)
    const frames = await sse(`/api/runs/${body.runId}/stream?after=11`, (f) => f.event === 'end')
    const decided = events(frames).find((e) => e.type === 'tool/approval-decided')
    assert.ok(decided?.type === 'tool/approval-decided')
    assert.equal(decided.data.approved, false)
    assert.equal(decided.data.by, 'bob')
  })

  it('replays a recorded run against policy-rules 2.x and 1.x side by side, and shows what differs', async () => {
    const { status, body } = await post('/api/compare', {
      runId,
      plugin: 'policy-rules',
      a: { version: '2.1.0' },
      b: { version: '^1.0.0' },
    })
    assert.equal(status, 200, JSON.stringify(body))
    assert.equal(body.a.plugin, 'policy-rules@2.1.0')
    assert.equal(body.b.plugin, 'policy-rules@1.0.0')
    assert.deepEqual(
      body.script.map((s: any) => Object.keys(s)[0]),
      ['tool', 'final'],
    )
    assert.deepEqual(body.b.dropped, ['approvers'], '1.x does not know approvers')
    // Alice's approval is replayed for the very call she approved, never given again as hers, and the
    // follow-up is the recording's (test/security/replay-effects.test.ts counts what reaches the tool).
    assert.deepEqual(body.a.replayed, [
      "alice's recorded approval of s1.a1 (record_followup) replayed as replay:alice",
      'record_followup s1.a1: answered from the recorded result, not run',
    ])
    assert.equal(body.a.outcome.status, 'COMPLETED')
    assert.equal(body.b.outcome.status, 'COMPLETED')
    assert.deepEqual(body.outcome, [])
    const decision = body.rows.find((r: any) => body.a.events[r.a]?.type === 'tool/decision')
    assert.equal(decision.kind, 'changed')
    assert.ok(decision.fields.includes('producer'))

    // 2.x with nobody allowed to approve fails closed: the follow-up is denied, the answer lacks its evidence.
    const closed = {
      default: 'deny',
      rules: [
        { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
        { id: 'followups-need-approval', verdict: 'ask', match: { tool: 'record_followup' } },
      ],
    }
    const strict = await post('/api/compare', {
      runId,
      plugin: 'policy-rules',
      a: { version: '1.0.0' },
      b: { version: '2.1.0', config: closed },
    })
    assert.equal(strict.status, 200)
    assert.equal(strict.body.a.outcome.status, 'COMPLETED')
    assert.equal(strict.body.b.outcome.status, 'FAILED_VERIFICATION')
    assert.ok(strict.body.outcome.includes('status'))
    assert.ok(strict.body.b.outcome.actions.includes('s1.a1 record_followup denied'))
    assert.ok(
      strict.body.rows.some((r: any) => r.kind === 'only-a'),
      'the approval and the tool call happen only under 1.x',
    )
  })

  it('reports a side whose config the version refuses, without failing the other', async () => {
    const { status, body } = await post('/api/compare', {
      runId,
      plugin: 'policy-rules',
      a: { version: '2.1.0' },
      b: { version: '1.0.0', config: { default: 'sometimes' } },
    })
    assert.equal(status, 200)
    assert.equal(body.a.outcome.status, 'COMPLETED')
    assert.equal(body.b.error.code, 'plugin_config_invalid')
  })

  it('keeps the plugin events of this process, and a swap shows up in them with who asked', async () => {
    const before = await get('/api/plugin-events')
    const loaded = before.body.events.filter((e: any) => e.type === 'plugin/loaded')
    assert.ok(loaded.some((e: any) => e.data.agent === 'followup' && e.data.name === 'policy-rules' && e.data.version === '2.1.0'))
    const last = before.body.events[before.body.events.length - 1].id
    const live = sse(`/api/plugin-events/stream?after=${last}`, (f) => f.data?.type === 'plugin/swapped')
    const swapped = await post('/api/agents/support/swap', { plugin: 'verifier-basic', config: {} })
    assert.equal(swapped.status, 200)
    assert.deepEqual(swapped.body, { from: 'verifier-basic@1.0.0', to: 'verifier-basic@1.0.0', by: 'playground' })
    const frames = await live
    assert.deepEqual(
      frames.map((f) => [f.data.type, f.data.data.name, f.data.data.reason]),
      [
        ['plugin/disposed', 'verifier-basic', 'swap'],
        ['plugin/loaded', 'verifier-basic', undefined],
        ['plugin/swapped', 'verifier-basic', undefined],
      ],
    )
    assert.deepEqual(frames[2].data.data, {
      agent: 'support',
      name: 'verifier-basic',
      version: '1.0.0',
      ok: true,
      from: 'verifier-basic@1.0.0',
      to: 'verifier-basic@1.0.0',
      by: 'playground',
      via: 'playground',
      config: {},
    })

    // A swap that fails is recorded too, with who asked and why; a swap of a plugin the agent lacks changed nothing and is not.
    const refused = await post('/api/agents/support/swap', { plugin: 'policy-rules', version: '9.0.0', by: 'mallory' })
    assert.equal(refused.status, 400)
    await post('/api/agents/support/swap', { plugin: 'nothing-like-it', version: '1.0.0', by: 'mallory' })
    const kept = (await get('/api/plugin-events')).body.events.filter((e: any) => e.type === 'plugin/swapped')
    assert.deepEqual(
      kept.map((e: any) => [e.data.name, e.data.ok, e.data.by, e.data.code]),
      [
        ['verifier-basic', true, 'playground', undefined],
        ['policy-rules', false, 'mallory', 'plugin_version_unsatisfiable'],
      ],
    )
    assert.equal(kept[1].data.version, '1.0.0', 'the version still serving')
    assert.equal(kept[1].data.requested, '9.0.0')
  })

  it('answers bad requests with a 4xx and a Cordage error code', async () => {
    const cases: [Promise<{ status: number; body: any }>, number, string, RegExp][] = [
      [post('/api/runs', { agent: 'nobody' }), 404, 'agent_not_found', /nobody/],
      [post('/api/runs', { agent: 'followup', task: '   ' }), 400, 'invalid_input', /task/],
      [post('/api/runs', { agent: 'followup', extra: 1 }), 400, 'invalid_input', /extra/],
      [post('/api/runs', '{not json'), 400, 'invalid_input', /not JSON/],
      [post('/api/runs', { agent: 'followup' }, { 'content-type': 'text/plain' }), 415, 'invalid_input', /application\/json/],
      [post(`/api/runs/${runId}/approve`, { by: '' }), 400, 'invalid_input', /by/],
      [post(`/api/runs/${runId}/approve`, { by: 'alice' }), 409, 'run_not_waiting', /COMPLETED/],
      [post(`/api/runs/${runId}/approve`, { by: 'alice', actionId: 's9.a9' }), 409, 'run_not_waiting', /COMPLETED/],
      [post('/api/runs/run_nope/reject', { by: 'alice' }), 404, 'run_not_found', /run_nope/],
      [get('/api/runs/run_nope'), 404, 'run_not_found', /run_nope/],
      [get(`/api/runs/${runId}/events?after=-1`), 400, 'invalid_input', /whole number/],
      [get(`/api/runs/${runId}/stream?after=x`), 400, 'invalid_input', /whole number/],
      [
        post('/api/compare', { runId, plugin: 'model-scripted', a: { version: '1.2.0' }, b: { version: '1.2.0' } }),
        400,
        'invalid_input',
        /model/,
      ],
      [
        post('/api/compare', { runId, plugin: 'store-sqlite', a: { version: '1.1.0' }, b: { version: '1.1.0' } }),
        400,
        'invalid_input',
        /store/,
      ],
      [
        post('/api/compare', { runId, plugin: 'nothing-like-it', a: { version: '1.0.0' }, b: { version: '1.0.0' } }),
        404,
        'plugin_not_found',
        /nothing-like-it/,
      ],
      [post('/api/compare', { runId, plugin: 'policy-rules', a: { version: '2.1.0' } }), 400, 'invalid_input', /b/],
      [post('/api/agents/support/swap', { plugin: 'policy-rules' }), 400, 'invalid_input', /version/],
      [post('/api/agents/support/swap', { plugin: 'policy-rules', version: '1.0.0', by: ' ' }), 400, 'invalid_input', /by/],
      [post('/api/agents/support/swap', { plugin: 'policy-rules', version: '9.0.0' }), 400, 'plugin_version_unsatisfiable', /9\.0\.0/],
      [get('/api/nothing'), 404, 'invalid_input', /no API route/],
      [get('/api/compare'), 405, 'invalid_input', /POST/],
      [withHost('/api/agents', 'attacker.example'), 403, 'invalid_input', /127\.0\.0\.1/],
    ]
    for (const [request, status, code, message] of cases) {
      const { status: got, body } = await request
      assert.equal(got, status, JSON.stringify(body.error ?? body).slice(0, 300))
      assert.equal(body.error.code, code, JSON.stringify(body.error))
      assert.match(body.error.message, message)
    }
  })

  it('refuses a port that is in use, naming it', async () => {
    await assert.rejects(startPlayground({ preset: defaultPresetCopy(), port: playground.port }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'invalid_input')
      assert.match(error.message, new RegExp(`port ${playground.port} on 127\\.0\\.0\\.1 is in use`))
      return true
    })
  })
})
