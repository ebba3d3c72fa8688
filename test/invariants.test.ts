/**
 * The kernel's invariants (harness.md), each checked through a real run: tickets, persist-before-act,
 * stopping is not succeeding, bounds outside the model, ordered evidence, error classes.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { CordageError, EventSchemaVersion, hashArgs, readService, replay, type RunEvent, type Tool, type ToolsService } from 'cordage'
import { claimTicketIssuer, TicketBook } from '../core/kernel/ticket.ts'
import { indexOf, refundAnswer, supportDesk, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

const io = (runId: string, actionId: string) => ({
  runId,
  actionId,
  idempotencyKey: `${runId}/${actionId}`,
  attempt: 1,
  signal: new AbortController().signal,
})
const logProbe = { path: resolve(import.meta.dirname, 'fixtures/plugins/log-probe') }

describe('invariant 1: the model proposes, the harness disposes', () => {
  it('refuses a tool invoked without a ticket the kernel issued, whoever calls it', async () => {
    harness = await supportDesk({ script: [] })
    const tool = readService<ToolsService>(harness.agent.ctx, 'tools')!.value.get('record_followup') as Tool
    const args = { ticketId: 'T-1', note: 'sneaky' }
    await assert.rejects(tool.invoke(undefined, args, io('run_x', 's1.a1')), { code: 'ticket_missing' })
    // A book of one's own issues tickets nobody accepts: tools redeem against the kernel's book only.
    const grant = { runId: 'run_x', actionId: 's1.a1', tool: 'record_followup', argsHash: hashArgs(args), policyVersion: 'p1' }
    await assert.rejects(tool.invoke(new TicketBook().issue(grant), args, io('run_x', 's1.a1')), { code: 'ticket_invalid' })
    const forged = { id: 'tk_abcdef_1', ...grant, expiresAt: Date.now() + 60_000 }
    await assert.rejects(tool.invoke(forged, args, io('run_x', 's1.a1')), { code: 'ticket_invalid' })
    assert.throws(() => claimTicketIssuer(), { code: 'ticket_invalid' }, 'the kernel claimed the issuer when it loaded')
    assert.equal(harness.followups().length, 0, 'no refused call had an effect')
  })

  it('records the policy decision before every tool start, under the policy version the ticket names', async () => {
    harness = await supportDesk({
      script: [
        {
          calls: [
            { tool: 'lookup_policy', args: { topic: 'refunds' } },
            { tool: 'lookup_policy', args: { topic: 'shipping' } },
          ],
        },
        { final: refundAnswer },
      ],
    })
    const state = await harness.agent.run('two lookups')
    assert.equal(state.status, 'COMPLETED')
    const events = await harness.events(state.runId)
    for (const start of events.filter((e) => e.type === 'tool/start')) {
      const decision = events.find((e) => e.type === 'tool/decision' && e.actionId === start.actionId)
      assert.ok(decision && decision.type === 'tool/decision' && start.type === 'tool/start')
      assert.ok(decision.seq < start.seq)
      assert.equal(decision.data.verdict, 'allow')
      assert.equal(start.data.policyVersion, decision.data.policyVersion)
      assert.equal(start.causation, decision.seq)
    }
  })

  it('decides an approved action again when the policy changed since the approval was asked', async () => {
    harness = await supportDesk({
      script: [{ tool: 'record_followup', args: { ticketId: 'T-7', note: 'x' } }, { final: 'done [source: FU-1]' }],
    })
    const paused = await harness.agent.run('note it')
    assert.equal(paused.status, 'WAITING_APPROVAL')
    await harness.app.swap('support', 'policy-rules', {
      config: { default: 'deny', rules: [{ id: 'no-writes', verdict: 'deny', match: { sideEffect: 'external' } }] },
    })
    const state = await (await harness.agent.approve(paused.runId, 's1.a1', { by: 'bob' })).done
    assert.equal(harness.followups().length, 0, 'the approval does not outlive the policy it was asked under')
    const decisions = (await harness.events(paused.runId)).filter((e) => e.type === 'tool/decision')
    assert.equal(decisions.length, 2)
    assert.ok(decisions[0].type === 'tool/decision' && decisions[1].type === 'tool/decision')
    assert.notEqual(decisions[0].data.policyVersion, decisions[1].data.policyVersion)
    assert.equal(decisions[1].data.verdict, 'deny')
    assert.equal(decisions[1].data.ruleId, 'no-writes')
    assert.equal(state.actions['s1.a1'].status, 'denied')
  })

  it('turns an unknown tool and invalid arguments into observations the model sees, not crashes', async () => {
    harness = await supportDesk({
      script: [
        { tool: 'delete_everything', args: {} },
        { tool: 'lookup_policy', args: { topic: 42 } },
        { tool: 'lookup_policy', args: { topic: 'refunds' } },
        { final: refundAnswer },
      ],
    })
    const state = await harness.agent.run('go')
    assert.equal(state.status, 'COMPLETED')
    const errors = (await harness.events(state.runId)).filter((e) => e.type === 'tool/error')
    assert.deepEqual(
      errors.map((e) => e.type === 'tool/error' && [e.data.code, e.data.errorClass]),
      [
        ['unknown_tool', 'model_semantic'],
        ['invalid_arguments', 'model_semantic'],
      ],
    )
    const requests = harness.model().requests
    assert.match(requests[1].messages.at(-1)!.text, /Unknown tool "delete_everything"\. Tools you can call: lookup_policy/)
    assert.match(requests[2].messages.at(-1)!.text, /Invalid arguments for lookup_policy: topic: .*expected string/)
  })

  it('makes a denial an observation the model can react to', async () => {
    harness = await supportDesk({
      script: [
        { tool: 'slow_lookup', args: { query: 'x' } },
        { tool: 'lookup_policy', args: { topic: 'refunds' } },
        { final: refundAnswer },
      ],
      rules: [
        { id: 'no-archive', verdict: 'deny', match: { tool: 'slow_lookup' }, reason: 'the archive is closed' },
        { id: 'read', verdict: 'allow', match: { sideEffect: 'none' } },
      ],
    })
    const state = await harness.agent.run('go')
    assert.equal(state.status, 'COMPLETED')
    assert.equal(state.actions['s1.a1'].status, 'denied')
    assert.match(harness.model().requests[1].messages.at(-1)!.text, /Denied by policy \(rule no-archive\): the archive is closed/)
    const events = await harness.events(state.runId)
    const closing = events[indexOf(events, 'tool/decision', 's1.a1') + 1]
    assert.ok(
      closing.type === 'tool/error' &&
        closing.data.code === 'policy_denied' &&
        closing.causation === events[indexOf(events, 'tool/decision', 's1.a1')].seq,
    )
  })

  it('closes a rejected action with approval_rejected and tells the model who rejected it', async () => {
    harness = await supportDesk({
      script: [
        { tool: 'record_followup', args: { ticketId: 'T-1', note: 'n' } },
        { tool: 'lookup_policy', args: { topic: 'refunds' } },
        { final: refundAnswer },
      ],
    })
    const paused = await harness.agent.run('note')
    const state = await (await harness.agent.reject(paused.runId, 's1.a1', { by: 'carol', reason: 'wrong ticket' })).done
    assert.equal(state.status, 'COMPLETED')
    assert.equal(state.actions['s1.a1'].status, 'rejected')
    assert.equal(state.actions['s1.a1'].error?.code, 'approval_rejected')
    assert.equal(harness.followups().length, 0)
    assert.match(harness.model().requests[1].messages.at(-1)!.text, /Rejected by carol: wrong ticket/)
  })

  it('closes the actions a run never got to with the code it ended with', async () => {
    harness = await supportDesk({
      script: [
        {
          calls: [
            { tool: 'lookup_policy', args: { topic: 'refunds' } },
            { tool: 'lookup_policy', args: { topic: 'returns' } },
          ],
        },
      ],
      model: { usage: { inputTokens: 500, outputTokens: 0, costUsd: 0 } },
      budgets: { maxTokens: 100 },
    })
    const state = await harness.agent.run('go')
    assert.equal(state.failureCode, 'token_budget_exceeded')
    const errors = (await harness.events(state.runId)).filter((e) => e.type === 'tool/error')
    assert.deepEqual(
      errors.map((e) => [e.actionId, e.type === 'tool/error' && e.data.code]),
      [
        ['s1.a1', 'token_budget_exceeded'],
        ['s1.a2', 'token_budget_exceeded'],
      ],
    )
  })
})

describe('invariant 2: stopping is not succeeding', () => {
  it('feeds a repairable verification failure back when the repair budget allows, then completes', async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: 'Within 30 days.' }, { final: refundAnswer }],
      budgets: { maxRepairs: 1 },
    })
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    const verdicts = (await harness.events(state.runId)).filter((e) => e.type === 'verify/end')
    assert.deepEqual(
      verdicts.map((e) => e.type === 'verify/end' && [e.data.ok, e.data.repair ?? false]),
      [
        [false, true],
        [true, false],
      ],
    )
    assert.match(harness.model().requests[2].messages.at(-1)!.text, /^\[harness\] The answer was not accepted \(missing_evidence\)/)
  })

  it('does not accept a citation no tool returned in this run', async () => {
    harness = await supportDesk({ script: [{ final: 'Refunds within 90 days [source: policy/refunds#9].' }] })
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'FAILED_VERIFICATION')
    assert.equal(state.failureCode, 'missing_evidence')
    assert.match(state.reason ?? '', /cites "policy\/refunds#9", which no tool returned/)
  })

  it('pauses WAITING_USER on a question and continues with the answer', async () => {
    harness = await supportDesk({
      script: [{ ask: 'Which ticket?' }, { tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }],
    })
    const paused = await harness.agent.run('note it')
    assert.equal(paused.status, 'WAITING_USER')
    await assert.rejects(harness.agent.resume(paused.runId, {}), { code: 'invalid_input' })
    const state = await (await harness.agent.resume(paused.runId, { input: 'T-42', by: 'carol' })).done
    assert.equal(state.status, 'COMPLETED')
    assert.ok(harness.model().requests[1].messages.some((m) => m.role === 'user' && m.text === 'T-42'))
  })
})

describe('invariant 2: verification cannot be skipped by a broken or late verifier', () => {
  const fixture = (name: string) => ({ path: resolve(import.meta.dirname, 'fixtures/plugins', name) })

  it('fails the run when the verifier throws, closing verify/start with verify/end', async () => {
    harness = await supportDesk({ script: [{ final: refundAnswer }], verifierPlugin: fixture('throwing-verifier') })
    const state = await harness.agent.run('go')
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'internal_error')
    assert.match(state.reason ?? '', /throwing-verifier@1\.0\.0 failed: rubric file missing/)
    const types = await harness.types(state.runId)
    assert.deepEqual(types.slice(-5), ['verify/start', 'verify/end', 'step/end', 'turn/end', 'run/end'])
  })

  it('ends CANCELLED when cancelled during verification, whatever the verifier says afterwards', async () => {
    harness = await supportDesk({ script: [{ final: refundAnswer }], verifierPlugin: fixture('slow-verifier') })
    const handle = harness.agent.start('go')
    harness.app.root.on('verify/start', () => {
      void harness!.agent.cancel(handle.runId)
    })
    const state = await handle.done
    assert.equal(state.status, 'CANCELLED')
  })
})

describe('invariant 3: persist before you act', () => {
  it('has the decision and the tool start durable in the store before the tool body runs', async () => {
    harness = await supportDesk({
      script: [{ tool: 'inspect_log', args: {} }, { final: 'done' }],
      plugins: [logProbe],
      verifier: { minCount: 0 },
    })
    const state = await harness.agent.run('look')
    assert.equal(state.status, 'COMPLETED')
    const end = (await harness.events(state.runId)).find((e) => e.type === 'tool/end')
    assert.ok(end?.type === 'tool/end')
    assert.deepEqual((end.data.output as { last: string[] }).last, ['tool/decision:s1.a1', 'tool/start:s1.a1'])
  })

  it('has the model decision durable before its first action is decided', async () => {
    harness = await supportDesk({
      script: [{ tool: 'inspect_log', args: {} }, { final: 'done' }],
      plugins: [logProbe],
      verifier: { minCount: 0 },
    })
    const state = await harness.agent.run('look')
    const events = await harness.events(state.runId)
    const response = indexOf(events, 'step/model-response')
    assert.equal(events[response + 1].type, 'tool/proposed')
    assert.ok(events[response + 1].causation === events[response].seq)
  })
})

describe('invariant 4: hard bounds live outside the model', () => {
  it('stops at the deadline with deadline_exceeded, aborting the model call in flight', async () => {
    harness = await supportDesk({ script: [{ final: 'late', delayMs: 5000 }], budgets: { deadlineMs: 50 } })
    const state = await harness.agent.run('slow')
    assert.equal(state.status, 'STOPPED')
    assert.equal(state.failureCode, 'deadline_exceeded')
  })

  it('stops when the token budget is spent, before the next model call', async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }],
      model: { onExhausted: 'repeat-last', usage: { inputTokens: 100, outputTokens: 20, costUsd: 0 } },
      budgets: { maxTokens: 300 },
    })
    const state = await harness.agent.run('spend')
    assert.equal(state.status, 'STOPPED')
    assert.equal(state.failureCode, 'token_budget_exceeded')
    assert.equal(harness.model().requests.length, 3)
  })

  it('stops when the cost budget is spent', async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }],
      model: { onExhausted: 'repeat-last', usage: { inputTokens: 1, outputTokens: 1, costUsd: 0.4 } },
      budgets: { maxCostUsd: 1 },
    })
    const state = await harness.agent.run('spend')
    assert.equal(state.status, 'STOPPED')
    assert.equal(state.failureCode, 'cost_budget_exceeded')
    assert.equal(state.steps, 3)
  })

  it('cancels a run mid model call: the call is aborted and the run ends CANCELLED', async () => {
    harness = await supportDesk({ script: [{ final: 'never', delayMs: 10_000 }] })
    const handle = harness.agent.start('slow')
    await new Promise((r) => setTimeout(r, 30))
    const state = await harness.agent.cancel(handle.runId, { by: 'dave', reason: 'changed my mind' })
    assert.equal(state.status, 'CANCELLED')
    assert.equal(state.failureCode, 'cancelled')
    const types = await harness.types(handle.runId)
    assert.deepEqual(types.slice(-4), ['run/cancel-requested', 'step/end', 'turn/end', 'run/end'])
  })

  it('cancels a run mid tool: the tool gets the abort and the call is closed with an error', async () => {
    harness = await supportDesk({ script: [{ tool: 'slow_lookup', args: { query: 'x' } }], desk: { slowLookupTimeoutMs: 10_000 } })
    const handle = harness.agent.start('slow tool')
    await new Promise((r) => setTimeout(r, 50))
    const state = await harness.agent.cancel(handle.runId)
    assert.equal(state.status, 'CANCELLED')
    const events = await harness.events(handle.runId)
    const error = events.find((e) => e.type === 'tool/error')
    assert.ok(error?.type === 'tool/error' && error.data.code === 'cancelled')
    assert.ok(indexOf(events, 'tool/start') < indexOf(events, 'tool/error'))
  })

  it('cancels a run waiting for approval: the pending approval becomes void', async () => {
    harness = await supportDesk({ script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'n' } }] })
    const paused = await harness.agent.run('note')
    const state = await harness.agent.cancel(paused.runId, { by: 'erin' })
    assert.equal(state.status, 'CANCELLED')
    assert.equal(state.actions['s1.a1'].error?.code, 'cancelled', 'the pending action is closed with the run')
    assert.deepEqual((await harness.types(paused.runId)).slice(-5), [
      'run/cancel-requested',
      'tool/error',
      'step/end',
      'turn/end',
      'run/end',
    ])
    await assert.rejects(harness.agent.approve(paused.runId, 's1.a1'), { code: 'run_not_waiting' })
    assert.equal(harness.followups().length, 0)
  })

  it('suspends at the next step boundary on request and resumes from there', async () => {
    harness = await supportDesk({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' }, delayMs: 50 }, { final: refundAnswer }] })
    const handle = harness.agent.start('go')
    await new Promise((r) => setTimeout(r, 10))
    assert.equal(harness.agent.suspend(handle.runId, { by: 'ops' }), true)
    const paused = await handle.done
    assert.equal(paused.status, 'SUSPENDED')
    const state = await (await harness.agent.resume(paused.runId)).done
    assert.equal(state.status, 'COMPLETED')
    assert.equal(harness.model().requests.length, 2, 'the model is never asked twice for a step it answered')
  })
})

describe('invariant 6: evidence is ordered', () => {
  it('numbers events from 1 without gaps, pairs every start with one end, and ends with run/end', async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { tool: 'bogus', args: {} }, { final: refundAnswer }],
    })
    const state = await harness.agent.run('go')
    const events = await harness.events(state.runId)
    events.forEach((e, i) => assert.equal(e.seq, i + 1))
    assert.equal(events.at(-1)!.type, 'run/end')
    assert.equal(events.filter((e) => e.type === 'run/end').length, 1)
    assertPaired(events, 'step/start', ['step/end'], (e) => e.stepId)
    assertPaired(events, 'tool/start', ['tool/end', 'tool/error'], (e) => e.actionId)
    assertPaired(events, 'verify/start', ['verify/end'], (e) => e.stepId)
    for (const proposed of events.filter((e) => e.type === 'tool/proposed')) {
      const closing = events.filter(
        (e) => e.actionId === proposed.actionId && (e.type === 'tool/end' || (e.type === 'tool/error' && !e.data.willRetry)),
      )
      assert.equal(closing.length, 1, `action ${proposed.actionId} is closed exactly once`)
    }
  })

  it('hands listeners frozen events, so no listener can change the record', async () => {
    harness = await supportDesk({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    harness.app.root.on('tool/decision', (e) => {
      ;(e.data as { verdict: string }).verdict = 'deny'
    })
    const state = await harness.agent.run('go')
    await new Promise((r) => setImmediate(r))
    assert.equal(state.status, 'COMPLETED')
    const decision = (await harness.events(state.runId)).find((e) => e.type === 'tool/decision')
    assert.ok(decision?.type === 'tool/decision' && decision.data.verdict === 'allow')
    const reported = harness.errors.splice(0)
    assert.equal(reported.length, 1)
    assert.ok(reported[0] instanceof TypeError, 'the attempt to write failed loudly')
  })

  it('stamps each event with ids, schema, causation and the plugin version that produced it', async () => {
    harness = await supportDesk({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    const state = await harness.agent.run('go')
    const events = await harness.events(state.runId)
    const producer = (type: string) => events.find((e) => e.type === type)!.producer
    assert.equal(producer('step/model-response'), 'model-scripted@1.2.0')
    assert.equal(producer('tool/decision'), 'policy-rules@2.1.0')
    assert.equal(producer('tool/end'), 'support-desk@1.1.0')
    assert.equal(producer('verify/end'), 'verifier-basic@1.0.0')
    assert.equal(producer('step/context'), 'context-basic@1.1.0')
    assert.match(producer('run/start'), /^kernel@\d+\.\d+\.\d+$/)
    for (const e of events) {
      assert.equal(e.schema, EventSchemaVersion)
      assert.equal(e.runId, state.runId)
      if (e.type.startsWith('tool/')) assert.match(e.actionId ?? '', /^s\d+\.a\d+$/)
      if (e.type.startsWith('step/') || e.type.startsWith('tool/')) assert.match(e.stepId ?? '', /^s\d+$/)
      if (e.causation !== undefined) assert.ok(e.causation < e.seq)
    }
    const start = events.find((e) => e.type === 'run/start')
    assert.ok(start?.type === 'run/start')
    assert.equal(start.data.services.policy, 'policy-rules@2.1.0')
    assert.equal(start.data.plugins['support-desk'], '1.1.0')
  })

  it('dispatches no event of a run before start() has returned its id', async () => {
    harness = await supportDesk({ script: [{ final: refundAnswer }] })
    const seen: string[] = []
    let runId: string | undefined
    harness.app.root.on('run/start', (e) => seen.push(e.runId === runId ? 'mine' : `too early for ${runId}`))
    runId = harness.agent.start('go').runId
    await harness.agent.idle()
    assert.deepEqual(seen, ['mine'])
  })

  it('rebuilds from the store exactly the state the live run had', async () => {
    harness = await supportDesk({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    const live = await harness.agent.run('go')
    assert.deepEqual(replay(live.runId, await harness.events(live.runId)), live)
  })
})

describe('invariant 7: errors are classified by code', () => {
  it('turns an error with a code that does not exist into internal_error that says so', () => {
    const error = new CordageError('book_not_found' as never, 'no such book')
    assert.equal(error.code, 'internal_error')
    assert.match(
      error.message,
      /unknown error code "book_not_found": CordageError takes a code from docs\/reference\/errors\.md \(a tool's own failures use tool_failed\); the error said: no such book/,
    )
  })

  it('retries a transient model failure with backoff, recording each attempt', async () => {
    harness = await supportDesk({
      script: [{ final: 'no evidence needed', failFirst: { code: 'model_transient', times: 2 } }],
      verifier: { minCount: 0 },
    })
    const state = await harness.agent.run('go')
    assert.equal(state.status, 'COMPLETED')
    const errors = (await harness.events(state.runId)).filter((e) => e.type === 'step/model-error')
    assert.equal(errors.length, 2)
    for (const e of errors)
      assert.ok(e.type === 'step/model-error' && e.data.code === 'model_transient' && typeof e.data.retryInMs === 'number')
  })

  it('does not retry a permanent model failure', async () => {
    harness = await supportDesk({ script: [{ final: 'x', failFirst: { code: 'model_permanent', times: 1 } }] })
    const state = await harness.agent.run('go')
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'model_permanent')
    assert.equal(harness.model().requests.length, 1)
  })

  for (const streamed of [false, true])
    it(`fails a model whose respond() answers without a promise (model_permanent), ${streamed ? 'with' : 'without'} a stream listener`, async () => {
      harness = await supportDesk({ script: [{ final: 'x' }] })
      // The contract's answer is a promise; a plain response is a broken model, whoever listens.
      const model = harness.model() as unknown as { respond: () => unknown }
      model.respond = () => ({ decision: { kind: 'final', text: 'x' }, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } })
      const stop = streamed ? harness.agent.ctx.on('model/delta', () => {}) : undefined
      const state = await harness.agent.run('go')
      stop?.()
      assert.equal(state.status, 'FAILED')
      assert.equal(state.failureCode, 'model_permanent')
      assert.match(state.reason ?? '', /not a promise/)
    })

  it('feeds a deterministic tool failure back to the model', async () => {
    harness = await supportDesk({
      script: [
        { tool: 'lookup_policy', args: { topic: 'pets' } },
        { tool: 'lookup_policy', args: { topic: 'refunds' } },
        { final: refundAnswer },
      ],
    })
    const state = await harness.agent.run('go')
    assert.equal(state.status, 'COMPLETED')
    assert.match(harness.model().requests[1].messages.at(-1)!.text, /no policy on "pets"; known topics: refunds/)
  })
})

function assertPaired(events: RunEvent[], start: string, ends: string[], key: (e: RunEvent) => string | undefined) {
  const open = new Map<string, number>()
  for (const e of events) {
    if (e.type === start) {
      assert.ok(!open.has(key(e)!), `${start} ${key(e)} opened twice`)
      open.set(key(e)!, e.seq)
    } else if (ends.includes(e.type) && !(e.type === 'tool/error' && !open.has(key(e)!))) {
      assert.ok(open.delete(key(e)!), `${e.type} ${key(e)} at seq ${e.seq} closes nothing`)
    }
  }
  assert.deepEqual([...open.keys()], [], `${start} left open`)
}
