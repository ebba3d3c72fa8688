/**
 * The six scenarios every build must get right (harness.md), each asserted by status, failure code,
 * side-effect count and event order, through a real preset and the built-in plugins.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { indexOf, refundAnswer, supportDesk, type Harness } from './helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

describe('scenarios', () => {
  it('completes a read-only question citing the tool result as its source, with no side effect', async () => {
    harness = await supportDesk({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    const state = await harness.agent.run('What is the refund window for damaged items?')
    assert.equal(state.status, 'COMPLETED')
    assert.equal(state.failureCode, undefined)
    assert.equal(harness.followups().length, 0)

    const events = await harness.events(state.runId)
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'run/start',
        'turn/start',
        'step/start',
        'step/context',
        'step/model-request',
        'step/model-response',
        'tool/proposed',
        'tool/decision',
        'tool/start',
        'tool/end',
        'step/end',
        'step/start',
        'step/context',
        'step/model-request',
        'step/model-response',
        'verify/start',
        'verify/end',
        'step/end',
        'turn/end',
        'run/end',
      ],
    )
    const toolEnd = events[indexOf(events, 'tool/end')]
    const verified = events[indexOf(events, 'verify/end')]
    assert.ok(verified.type === 'verify/end' && verified.data.ok)
    // The cited source is evidence pointing at the tool result that produced it.
    assert.deepEqual(verified.data.evidence, [{ kind: 'citation', ref: 'policy/refunds#2', seq: toolEnd.seq }])
    // The model saw the observation with the source before answering.
    const second = harness.model().requests[1]
    assert.ok(second.messages.some((m) => m.role === 'tool' && m.text.includes('[source: policy/refunds#2]')))
  })

  it('pauses a write marked ask with zero side effects, checkpoint before the approval request', async () => {
    harness = await supportDesk({ script: [{ tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved' } }] })
    const state = await harness.agent.run('Note the refund on T-1001')
    assert.equal(state.status, 'WAITING_APPROVAL')
    assert.equal(harness.followups().length, 0)

    const events = await harness.events(state.runId)
    const types = events.map((e) => e.type)
    assert.deepEqual(types.slice(indexOf(events, 'tool/proposed')), [
      'tool/proposed',
      'tool/decision',
      'run/checkpoint',
      'tool/approval-requested',
      'run/paused',
    ])
    assert.equal(indexOf(events, 'tool/start'), -1)
    const decision = events[indexOf(events, 'tool/decision')]
    assert.ok(decision.type === 'tool/decision' && decision.data.verdict === 'ask' && decision.data.ruleId === 'followups-need-approval')
    const requested = events[indexOf(events, 'tool/approval-requested')]
    assert.ok(requested.type === 'tool/approval-requested')
    assert.equal(requested.data.argsHash, (events[indexOf(events, 'tool/proposed')] as { data: { argsHash: string } }).data.argsHash)
    assert.equal(state.waiting?.actionId, 's1.a1')
  })

  it('runs exactly the approved action, once, after approve and resume from the stored state', async () => {
    harness = await supportDesk({
      script: [
        { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved' } },
        { final: 'Follow-up FU-1 recorded on T-1001 [source: FU-1].' },
      ],
    })
    const paused = await harness.agent.run('Note the refund on T-1001')
    assert.equal(paused.status, 'WAITING_APPROVAL')

    // approve() rebuilds the run from the store, as another process would.
    const handle = await harness.agent.approve(paused.runId, 's1.a1', { by: 'alice' })
    const state = await handle.done
    assert.equal(state.status, 'COMPLETED')

    const followups = harness.followups()
    assert.equal(followups.length, 1)
    assert.deepEqual({ ticketId: followups[0].ticketId, note: followups[0].note }, { ticketId: 'T-1001', note: 'Refund approved' })
    assert.equal(followups[0].key, `${paused.runId}/s1.a1`)

    const events = await harness.events(paused.runId)
    const starts = events.filter((e) => e.type === 'tool/start')
    assert.equal(starts.length, 1)
    const approved = indexOf(events, 'tool/approval-decided', 's1.a1')
    assert.ok(approved > indexOf(events, 'run/paused'))
    assert.ok(indexOf(events, 'run/resumed') > approved)
    assert.ok(indexOf(events, 'tool/start', 's1.a1') > indexOf(events, 'run/resumed'))
    const start = starts[0]
    assert.ok(start.type === 'tool/start')
    assert.equal(start.causation, events[approved].seq)

    // The approval was for that call only: approving again is refused and nothing runs twice.
    await assert.rejects(harness.agent.approve(paused.runId, 's1.a1'), { code: 'run_not_waiting' })
    assert.equal(harness.followups().length, 1)
  })

  it('fails the run with tool_timeout when a tool overruns its time limit', async () => {
    harness = await supportDesk({ script: [{ tool: 'slow_lookup', args: { query: 'damaged kettle' } }, { final: 'unused' }] })
    const state = await harness.agent.run('Search old tickets')
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'tool_timeout')
    assert.equal(harness.model().requests.length, 1, 'the model is not asked to paper over the missing result')
    const types = await harness.types(state.runId)
    assert.deepEqual(types.slice(-7), ['tool/proposed', 'tool/decision', 'tool/start', 'tool/error', 'step/end', 'turn/end', 'run/end'])
    const events = await harness.events(state.runId)
    const error = events[indexOf(events, 'tool/error')]
    assert.ok(error.type === 'tool/error' && error.data.code === 'tool_timeout' && error.data.errorClass === 'tool_transient')
  })

  it('stops a model that keeps calling tools at the step budget with max_steps', async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'shipping' } }],
      model: { onExhausted: 'repeat-last' },
      budgets: { maxSteps: 4 },
    })
    const state = await harness.agent.run('Keep looking')
    assert.equal(state.status, 'STOPPED')
    assert.equal(state.failureCode, 'max_steps')
    assert.equal(state.steps, 4)
    assert.equal(harness.model().requests.length, 4)
    const events = await harness.events(state.runId)
    assert.equal(events.filter((e) => e.type === 'tool/end').length, 4)
    assert.deepEqual(
      events.slice(-3).map((e) => e.type),
      ['step/end', 'turn/end', 'run/end'],
    )
  })

  it('ends a final answer without the required evidence in FAILED_VERIFICATION with missing_evidence', async () => {
    harness = await supportDesk({ script: [{ final: 'Refunds are possible within 30 days.' }] })
    const state = await harness.agent.run('What is the refund window?')
    assert.equal(state.status, 'FAILED_VERIFICATION')
    assert.equal(state.failureCode, 'missing_evidence')
    const events = await harness.events(state.runId)
    assert.ok(indexOf(events, 'verify/start') < indexOf(events, 'verify/end'))
    assert.equal(events[events.length - 1].type, 'run/end')
    assert.equal(harness.followups().length, 0)
  })
})
