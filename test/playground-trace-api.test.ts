/**
 * The trace view's routes over real HTTP, on a real run of test/playground-trace-preset.ts (a tool call
 * retried after a transient failure, an action approved, a verified answer): the spans, the step detail
 * gathered from the log (playground/step-detail.ts), and the context each step sent to the model,
 * rebuilt through the agent's context service (playground/step-context.ts), compared with what
 * step/context recorded; and the refusals: no token, a malformed or unknown step, a step that has not
 * assembled its context. Also what the rebuild says when the record and the plugins serving now differ.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { readService, type ContextService, type RunEvent } from 'cordage'
import { startPlayground, type Playground } from '../playground/server.ts'
import { rebuildContext } from '../playground/step-context.ts'
import { stepDetail } from '../playground/step-detail.ts'
import { bearer } from './playground-helpers.ts'
import { tracePresetCopy } from './playground-trace-preset.ts'

describe('the trace routes', () => {
  let playground: Playground
  let runId: string
  let waitingId: string
  let events: RunEvent[]

  const get = async (path: string, headers: Record<string, string> = bearer(playground)) => {
    const response = await fetch(`${playground.origin}${path}`, { headers })
    return { status: response.status, body: (await response.json()) as any }
  }

  before(async () => {
    playground = await startPlayground({ preset: tracePresetCopy(), port: 0, onError: (e) => assert.fail(e as Error) })
    const agent = playground.app.agent('followup')
    const waiting = await agent.run()
    assert.equal(waiting.status, 'WAITING_APPROVAL')
    waitingId = (await agent.run()).runId
    runId = waiting.runId
    const done = await (await agent.approve(runId, waiting.waiting!.actionId!, { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED')
    events = await agent.store().read(runId)
  })

  after(() => playground?.close())

  it('GET /api/runs/RUN/trace: the spans of the run, its status and usage, and the server clock', async () => {
    const { status, body } = await get(`/api/runs/${runId}/trace`)
    assert.equal(status, 200)
    assert.equal(body.runId, runId)
    assert.equal(body.status, 'COMPLETED')
    assert.equal(body.spans.length, 20)
    assert.deepEqual(
      body.spans.filter((s: { kind: string }) => s.kind === 'tool').map((s: { id: string; status: string }) => `${s.id} ${s.status}`),
      ['s1.a1/tool#1 retried', 's1.a1/tool#2 ok', 's2.a1/tool#1 ok'],
    )
    // The kernel's total, as run/end recorded it (a sum of floating-point costs).
    assert.deepEqual([body.usage.inputTokens, body.usage.outputTokens, body.usage.costUsd.toFixed(6)], [360, 90, '0.000600'])
    assert.equal(typeof body.now, 'number')
    const open = await get(`/api/runs/${waitingId}/trace`)
    assert.equal(open.body.status, 'WAITING_APPROVAL')
    assert.deepEqual(
      open.body.spans.filter((s: { end?: number }) => s.end === undefined).map((s: { id: string }) => s.id),
      ['run', 't1', 's2', 's2.a1', 's2.a1/approval'],
    )
  })

  it('GET /api/runs/RUN/steps/STEP: the step as the log has it, and how the state changed', async () => {
    const { status, body } = await get(`/api/runs/${runId}/steps/s2`)
    assert.equal(status, 200)
    assert.deepEqual(body, JSON.parse(JSON.stringify(stepDetail(events, 's2'))))
    assert.equal(body.task, 'Note on ticket T-1001 that the refund was approved.')
    const [action] = body.actions
    assert.equal(action.tool, 'record_followup')
    assert.deepEqual(action.proposal.args, { ticketId: 'T-1001', note: 'Refund approved; 12 mugs in stock.' })
    assert.equal(action.decision.verdict, 'ask')
    assert.equal(action.decision.ruleId, 'followups-need-approval')
    assert.equal(action.approval.decided.by, 'alice')
    assert.ok(action.approval.decided.time >= action.approval.requested.time)
    assert.deepEqual(action.attempts[0].output, { receipt: 'FU-1', ticketId: 'T-1001', duplicate: false })
    assert.equal(action.observation, 'Follow-up FU-1 recorded on T-1001.')
    assert.deepEqual(body.stateChange.actions, [{ actionId: 's2.a1', tool: 'record_followup', to: 'succeeded', attempts: 1 }])
    assert.deepEqual(
      body.stateChange.fields.find((f: { field: string }) => f.field === 'steps'),
      { field: 'steps', before: 1, after: 2 },
    )

    const s1 = stepDetail(events, 's1')
    assert.deepEqual(
      s1.actions[0].attempts.map((a) => [a.attempt, a.error?.code ?? 'ok', a.error?.willRetry ?? false]),
      [
        [1, 'tool_unavailable', true],
        [2, 'ok', false],
      ],
    )
    assert.equal(
      s1.actions[0].observation,
      '12 mugs in stock [source: stock/mugs]',
      "the model is told the retry's result, not the failure",
    )
    const s3 = stepDetail(events, 's3')
    assert.deepEqual(
      s3.verification.map((v) => [v.ok, v.evidence]),
      [[true, [{ kind: 'citation', ref: 'T-1001', seq: 26 }]]],
    )
    assert.equal((s3.model[0].decision as { kind: string }).kind, 'final')
  })

  it('GET /api/runs/RUN/steps/STEP/context: what the model saw, rebuilt with provenance, matching the record', async () => {
    for (const [step, count] of [
      ['s1', 2],
      ['s2', 4],
      ['s3', 6],
    ] as const) {
      const { status, body } = await get(`/api/runs/${runId}/steps/${step}/context`)
      assert.equal(status, 200)
      assert.equal(body.messages.length, count)
      assert.equal(
        body.matches,
        true,
        `${step}: rebuilt ${body.messages.length} messages ~${body.tokens} tokens, recorded ${JSON.stringify(body.recorded)}`,
      )
      assert.match(body.rebuiltBy, /^context-basic@\d+\.\d+\.\d+$/)
      assert.equal(body.rebuiltBy, body.recordedBy)
      assert.deepEqual(
        body.tools.map((t: { name: string }) => t.name),
        ['lookup_policy', 'record_followup', 'slow_lookup', 'check_stock'],
      )
    }
    const { body } = await get(`/api/runs/${runId}/steps/s3/context`)
    assert.deepEqual(
      body.messages.map((m: { role: string; source: number; sourceType?: string }) => `${m.role} ${m.source} ${m.sourceType ?? '-'}`),
      [
        'system 0 -',
        'user 2 turn/start',
        'assistant 6 step/model-response',
        'tool 12 tool/end',
        'assistant 17 step/model-response',
        'tool 26 tool/end',
      ],
    )
    assert.equal(body.messages[3].text, '12 mugs in stock [source: stock/mugs]')
    assert.equal(body.stateThrough, 28)
  })

  it('says so when the record and the plugins serving now differ', async () => {
    const agent = playground.app.agent('followup')
    // As if the step had been assembled by another version, and had shown a tool no plugin registers now.
    const altered = events.map((e) =>
      e.type === 'step/context' && e.stepId === 's2'
        ? ({ ...e, producer: 'context-basic@0.9.0', data: { ...e.data, tools: [...e.data.tools, 'gone_tool'] } } as RunEvent)
        : e,
    )
    const rebuilt = (await rebuildContext(agent, altered, 's2'))!
    assert.deepEqual(rebuilt.missingTools, ['gone_tool'])
    assert.ok(
      rebuilt.caveats.some((c) => /rebuilt by context-basic@\d+\.\d+\.\d+, but the step was assembled by context-basic@0\.9\.0/.test(c)),
    )
    assert.ok(rebuilt.caveats.some((c) => /no plugin registers gone_tool now/.test(c)))
    // A record whose counts differ does not match.
    const other = events.map((e) =>
      e.type === 'step/context' && e.stepId === 's2' ? ({ ...e, data: { ...e.data, tokens: e.data.tokens + 1 } } as RunEvent) : e,
    )
    assert.equal((await rebuildContext(agent, other, 's2'))!.matches, false)
    // A step that has not assembled its context yet has nothing to rebuild.
    const cut = events.filter((e) => e.seq < events.find((x) => x.type === 'step/context' && x.stepId === 's3')!.seq)
    assert.equal(await rebuildContext(agent, cut, 's3'), undefined)
  })

  it('refuses without the token, a malformed step id, and a step the run does not have', async () => {
    assert.equal((await get(`/api/runs/${runId}/trace`, {})).status, 401)
    assert.equal((await get(`/api/runs/${runId}/steps/s1/context`, { authorization: 'Bearer wrong-token-wrong-token' })).status, 401)
    const malformed = await get(`/api/runs/${runId}/steps/..%2Fx`)
    assert.equal(malformed.status, 400)
    assert.match(malformed.body.error.message, /a step id is s followed by its number/)
    const missing = await get(`/api/runs/${runId}/steps/s9/context`)
    assert.equal(missing.status, 404)
    assert.match(missing.body.error.message, /the run has no step "s9"/)
    assert.equal((await get(`/api/runs/run_nope/trace`)).status, 404)
    assert.equal((await get(`/api/runs/${runId}/steps/s1/more`)).status, 404)
  })

  it('caps the spans at ?limit= and says so; keeps the trace of an unchanged run (no full read of the log again)', async () => {
    const capped = await get(`/api/runs/${runId}/trace?limit=5`)
    assert.equal(capped.status, 200)
    assert.equal(capped.body.spans.length, 6)
    assert.deepEqual(capped.body.truncated, { total: 20, shown: 5, omitted: 15, steps: { from: 's1', to: 's3' } })
    assert.equal(capped.body.spans[5].kind, 'more')
    assert.equal(capped.body.spans[5].label, '15 more spans (steps s1–s3)')
    assert.equal((await get(`/api/runs/${runId}/trace`)).body.truncated, undefined)
    for (const bad of ['0', '-1', '1.5', 'all', '20001'])
      assert.match((await get(`/api/runs/${runId}/trace?limit=${bad}`)).body.error.message, /limit is how many spans to return/)

    // Asked again with no event since, the trace is the one kept (the log is not replayed); an event makes it new.
    const first = await get(`/api/runs/${runId}/trace?limit=7`)
    const second = await get(`/api/runs/${runId}/trace?limit=7`)
    assert.deepEqual([first.body.cached, second.body.cached], [false, true])
    assert.deepEqual({ ...second.body, now: 0, cached: true }, { ...first.body, now: 0, cached: true })
    assert.equal((await get(`/api/runs/${runId}/trace?limit=8`)).body.cached, false, 'another limit is another trace')
    const waiting = await get(`/api/runs/${waitingId}/trace`)
    assert.equal((await get(`/api/runs/${waitingId}/trace`)).body.cached, true)
    const agent = playground.app.agent('followup')
    const paused = (await agent.store().read(waitingId)).findLast((e) => e.type === 'tool/approval-requested')!
    assert.equal((await (await agent.approve(waitingId, paused.actionId!, { by: 'bob' })).done).status, 'COMPLETED')
    const after = await get(`/api/runs/${waitingId}/trace`)
    assert.equal(after.body.cached, false)
    assert.deepEqual([waiting.body.status, after.body.status], ['WAITING_APPROVAL', 'COMPLETED'])
  })

  it('rebuilds one context at a time: another request while one is under way gets 429', async () => {
    const agent = playground.app.agent('followup')
    const context = readService<ContextService>(agent.ctx, 'context')!.value
    const assemble = context.assemble
    let release!: () => void
    let entered!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const inside = new Promise<void>((r) => (entered = r))
    context.assemble = async (input) => {
      entered()
      await gate
      return assemble.call(context, input)
    }
    try {
      const first = get(`/api/runs/${runId}/steps/s1/context`)
      await inside
      const second = await get(`/api/runs/${runId}/steps/s2/context`)
      assert.equal(second.status, 429)
      assert.match(second.body.error.message, /another step's context is being rebuilt on this playground \(one at a time/)
      release()
      assert.equal((await first).status, 200)
    } finally {
      context.assemble = assemble
    }
    assert.equal((await get(`/api/runs/${runId}/steps/s2/context`)).status, 200, 'the slot is free again')
  })
})

describe('the trace routes of a read-only playground', () => {
  it("refuse to rebuild a step's context (it runs plugin code), and still serve the trace and the step", async () => {
    const playground = await startPlayground({
      preset: tracePresetCopy(),
      port: 0,
      readOnly: true,
      onError: (e) => assert.fail(e as Error),
    })
    try {
      const agent = playground.app.agent('followup')
      let assembled = 0
      const context = readService<ContextService>(agent.ctx, 'context')!.value
      const { runId } = await agent.run()
      const assemble = context.assemble
      context.assemble = (input) => {
        assembled++
        return assemble.call(context, input)
      }
      const get = async (path: string) => {
        const response = await fetch(`${playground.origin}${path}`, { headers: bearer(playground) })
        return { status: response.status, body: (await response.json()) as any }
      }
      const refused = await get(`/api/runs/${runId}/steps/s1/context`)
      assert.equal(refused.status, 403)
      assert.match(refused.body.error.message, /read-only .*a timeout cannot stop a plugin that never yields/)
      assert.equal(assembled, 0, 'the context plugin was not called')
      assert.equal((await get(`/api/runs/${runId}/trace`)).status, 200)
      assert.equal((await get(`/api/runs/${runId}/steps/s1`)).status, 200)
      context.assemble = assemble
    } finally {
      await playground.close()
    }
  })
})
