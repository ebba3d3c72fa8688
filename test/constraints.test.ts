/**
 * Constrained allows (issue 12): a policy may allow a call only within limits; the tool gets them in
 * `io.constraints` and must declare that it holds them, or the call is refused before it starts. A
 * decision with constraints that are not exactly right is invalid and denied (fail closed).
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { supportDesk, type Harness } from './helpers.ts'
import { open as openApp, presetFile, removeDirs, stopApps } from './sqlite-preset.ts'
import { budgetDeskLog } from './fixtures/plugins/budget-desk/index.ts'

const desk = { path: resolve(import.meta.dirname, 'fixtures/plugins/budget-desk') }
const answerPolicy = (answer: unknown) => ({ path: resolve(import.meta.dirname, 'fixtures/plugins/answer-policy'), config: { answer } })

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
  budgetDeskLog.length = 0
})

const of = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type)

function open(calls: { tool: string; args: unknown }[], policy: { rules?: unknown[]; policyPlugin?: unknown }) {
  return supportDesk({
    script: [{ calls }, { final: 'Done.' }],
    verifier: { minCount: 0 },
    plugins: [desk],
    ...policy,
  })
}

describe('constrained allows', () => {
  it('are honoured: the tool gets them, holds them (a refund over maxAmount refused, one under it done), and they are on record', async () => {
    harness = await open(
      [
        { tool: 'issue_refund', args: { amount: 40 } },
        { tool: 'issue_refund', args: { amount: 500 } },
      ],
      { rules: [{ id: 'small-refunds', verdict: 'allow', match: { tool: 'issue_refund' }, constraints: { maxAmount: 100 } }] },
    )
    const state = await harness.agent.run('refund')
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(budgetDeskLog, ['refund 40 {"maxAmount":100}', 'refund 500 {"maxAmount":100}'])
    const events = await harness.events(state.runId)
    assert.deepEqual(
      of(events, 'tool/decision').map((e) => [e.actionId, e.data.verdict, e.data.constraints]),
      [
        ['s1.a1', 'allow', { maxAmount: 100 }],
        ['s1.a2', 'allow', { maxAmount: 100 }],
      ],
    )
    assert.equal(of(events, 'tool/end')[0].actionId, 's1.a1')
    const refused = of(events, 'tool/error').find((e) => e.actionId === 's1.a2')!
    assert.equal(refused.data.code, 'tool_failed')
    assert.match(refused.data.message, /over the allowed maximum of 100/)
    // The version of the policy covers the constraints: a rule without them is another policy.
    const withConstraints = of(events, 'tool/decision')[0].data.policyVersion
    await harness.stop()
    harness = await open([{ tool: 'issue_refund', args: { amount: 40 } }], {
      rules: [{ id: 'small-refunds', verdict: 'allow', match: { tool: 'issue_refund' } }],
    })
    const plain = await harness.agent.run('refund')
    const version = of(await harness.events(plain.runId), 'tool/decision')[0].data.policyVersion
    assert.notEqual(version, withConstraints)
  })

  it('are refused with constraint_unenforceable when the tool does not declare it holds them: no tool/start, no call', async () => {
    harness = await open([{ tool: 'loose_refund', args: { amount: 40 } }], {
      rules: [{ id: 'small-refunds', verdict: 'allow', match: { tool: 'loose_refund' }, constraints: { maxAmount: 100 } }],
    })
    const state = await harness.agent.run('refund')
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(budgetDeskLog, [])
    const events = await harness.events(state.runId)
    const types = events.filter((e) => e.actionId === 's1.a1').map((e) => e.type)
    assert.deepEqual(types, ['tool/proposed', 'tool/decision', 'tool/error'])
    const error = of(events, 'tool/error')[0]
    assert.equal(error.data.code, 'constraint_unenforceable')
    assert.match(error.data.observation!, /maxAmount 100/)
    assert.match(error.data.observation!, /enforces none/)
  })

  it('timeLimitMs the kernel holds itself: it shortens the call, and needs no enforces', async () => {
    harness = await supportDesk({
      script: [{ tool: 'slow_lookup', args: { query: 'x' } }, { final: 'Done.' }],
      verifier: { minCount: 0 },
      desk: { slowLookupDelayMs: 60_000, slowLookupTimeoutMs: 120_000 },
      rules: [{ id: 'quick', verdict: 'allow', match: { tool: 'slow_lookup' }, constraints: { timeLimitMs: 20 } }],
    })
    const state = await harness.agent.run('look')
    const events = await harness.events(state.runId)
    assert.equal(of(events, 'tool/start')[0].data.timeoutMs, 20)
    assert.equal(of(events, 'tool/error')[0].data.code, 'tool_timeout')
  })
})

describe('constrained allows: the attacker path (a policy answering constraints that are not exactly right)', () => {
  const cases: [string, unknown][] = [
    ['an unknown constraint key', { verdict: 'allow', ruleId: 'r', reason: 'x', constraints: { maxAmount: 10, anything: true } }],
    ['a negative maxAmount', { verdict: 'allow', ruleId: 'r', reason: 'x', constraints: { maxAmount: -1 } }],
    ['constraints on an ask', { verdict: 'ask', ruleId: 'r', reason: 'x', approvers: ['*'], constraints: { maxAmount: 10 } }],
    ['constraints on a deny', { verdict: 'deny', ruleId: 'r', reason: 'x', constraints: { maxAmount: 10 } }],
    ['a pathPrefix with ..', { verdict: 'allow', ruleId: 'r', reason: 'x', constraints: { pathPrefix: 'src/../../etc' } }],
    ['an absolute pathPrefix', { verdict: 'allow', ruleId: 'r', reason: 'x', constraints: { pathPrefix: '/etc' } }],
    ['a timeLimitMs of 0', { verdict: 'allow', ruleId: 'r', reason: 'x', constraints: { timeLimitMs: 0 } }],
    ['constraints that are not an object', { verdict: 'allow', ruleId: 'r', reason: 'x', constraints: 'none' }],
  ]
  for (const [name, answer] of cases)
    it(`denies ${name} as an invalid decision: nothing runs`, async () => {
      harness = await open([{ tool: 'issue_refund', args: { amount: 40 } }], { policyPlugin: answerPolicy(answer) })
      const state = await harness.agent.run('refund')
      assert.deepEqual(budgetDeskLog, [])
      const events = await harness.events(state.runId)
      const decision = of(events, 'tool/decision')[0]
      assert.equal(decision.data.verdict, 'deny')
      assert.equal(decision.data.ruleId, 'policy-invalid')
      assert.match(decision.data.reason, /verdict_invalid/)
      assert.equal(decision.data.constraints, undefined)
      assert.equal(of(events, 'tool/start').length, 0)
    })
})

describe('constrained allows in policy-rules presets', () => {
  const bad: [string, unknown][] = [
    ['an unknown constraint key', { id: 'r', verdict: 'allow', match: { tool: 'issue_refund' }, constraints: { maxAmmount: 10 } }],
    ['a bad value', { id: 'r', verdict: 'allow', match: { tool: 'issue_refund' }, constraints: { maxAmount: -5 } }],
    ['constraints on a deny rule', { id: 'r', verdict: 'deny', match: { tool: 'issue_refund' }, constraints: { maxAmount: 5 } }],
    ['a pathPrefix with ..', { id: 'r', verdict: 'allow', match: { tool: 'issue_refund' }, constraints: { pathPrefix: '../x' } }],
    ['an absolute pathPrefix', { id: 'r', verdict: 'allow', match: { tool: 'issue_refund' }, constraints: { pathPrefix: '/etc' } }],
  ]
  for (const [name, rule] of bad)
    it(`refuses a rule with ${name} at load`, async () => {
      await assert.rejects(open([{ tool: 'issue_refund', args: { amount: 40 } }], { rules: [rule] }), (e: unknown) =>
        /constraints/.test(String((e as Error)?.message)),
      )
    })
})

describe('constrained allows across processes', () => {
  after(removeDirs)
  afterEach(stopApps)

  it('a call resumed in another process runs under the constraints recorded with its decision', async () => {
    // The refund reserves 100 tokens of a 50-token budget: the run suspends after the decision, before the call.
    const file = presetFile({
      support: {
        script: [{ tool: 'issue_refund', args: { amount: 500 } }, { final: 'Done.' }],
        budgets: { maxTokens: 50 },
        rules: [{ id: 'small-refunds', verdict: 'allow', match: { tool: 'issue_refund' }, constraints: { maxAmount: 100 } }],
        plugins: [desk],
      },
    })
    const first = await openApp(file)
    const paused = await first.agent('support').run('refund')
    assert.equal(paused.waiting?.code, 'reservation_refused', paused.reason)
    assert.deepEqual(paused.actions['s1.a1'].decision?.constraints, { maxAmount: 100 })
    assert.deepEqual(budgetDeskLog, [])
    await first.stop()
    const second = await openApp(file)
    const done = await (await second.agent('support').resume(paused.runId, { budgets: { maxTokens: 5000 } })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.deepEqual(budgetDeskLog, ['refund 500 {"maxAmount":100}'])
    const error = (await second.agent('support').store().load(paused.runId)).find((e) => e.type === 'tool/error')
    assert.ok(error?.type === 'tool/error' && error.data.code === 'tool_failed', 'the tool refused the refund over the recorded maximum')
  })
})
