/**
 * Fail closed (invariant 9): every answer the loop acts on is checked strictly and bounded in time.
 * Services that misbehave come from test/fixtures/plugins/rogue-*: each answers what its `mode` says.
 * Issue 10, findings 4 (verdicts checked for truthiness only) and 5 (a service that never answers).
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { asKernel } from '../contracts/store.ts'
import { refundAnswer, supportDesk, type DeskOptions, type Harness } from '../helpers.ts'

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

const rogue = (service: string, mode: string) => ({
  path: resolve(import.meta.dirname, `../fixtures/plugins/rogue-${service}`),
  config: { mode },
})
const lookup = { calls: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }] }
const followup = { calls: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'call back' } }] }

async function run(options: Partial<DeskOptions>) {
  harness = await supportDesk({ script: [lookup, { final: refundAnswer }], ...options })
  const state = await harness.agent.run()
  const events = await harness.events(state.runId)
  const end = events.at(-1) as RunEvent<'run/end'>
  assert.equal(end.type, 'run/end', 'the run ended with run/end on record')
  return { state, events, end }
}

/** The lease is free again: another worker could claim the run at once. */
async function leaseReleased(runId: string) {
  const store = asKernel(harness!.agent.store())
  const lease = await store.claim(runId, 'other-worker', 1000)
  assert.ok(lease, 'the lease was released')
  await store.release(lease!)
}

describe('verifier verdicts are checked, not tested for truthiness', () => {
  for (const [mode, problem] of [
    ['ok-string', /ok must be true or false, got "false"/],
    ['no-evidence', /a passing verdict must list its evidence/],
    ['bad-evidence', /evidence\[0\] must have a kind and a ref/],
    ['bad-code', /code must be missing_evidence or verification_failed/],
    ['null', /a verifier verdict is an object, got null/],
    ['inherited', /ok must be true or false, got nothing/],
  ] as const) {
    it(`ends FAILED verdict_invalid when the verifier answers ${mode}, naming the verifier`, async () => {
      const { state, events } = await run({ verifierPlugin: rogue('verifier', mode) })
      assert.equal(state.status, 'FAILED')
      assert.equal(state.failureCode, 'verdict_invalid')
      const end = events.find((e) => e.type === 'verify/end') as RunEvent<'verify/end'>
      assert.deepEqual([end.data.ok, end.data.code, end.producer], [false, 'verdict_invalid', 'rogue-verifier@1.0.0'])
      assert.match(end.data.reason!, problem)
    })
  }

  it('completes on a well-formed passing verdict (the rogue plugin is not wrong in every mode)', async () => {
    const { state } = await run({ verifierPlugin: rogue('verifier', 'valid') })
    assert.equal(state.status, 'COMPLETED')
  })
})

describe('policy decisions are checked; a malformed one denies', () => {
  for (const [mode, problem] of [
    ['no-rule', /ruleId must be a non-empty string/],
    ['bad-verdict', /verdict must be allow, ask or deny, got "permit"/],
    ['null', /a policy decision is an object, got null/],
    ['inherited', /verdict must be allow, ask or deny, got nothing/],
    ['bad-approvers', /approvers must be a list of names/],
  ] as const) {
    it(`denies when policy answers ${mode}: the tool never starts`, async () => {
      const { events } = await run({ policyPlugin: rogue('policy', mode), script: [followup, { final: 'done' }] })
      const decision = events.find((e) => e.type === 'tool/decision') as RunEvent<'tool/decision'>
      assert.deepEqual([decision.data.verdict, decision.data.ruleId, decision.producer], ['deny', 'policy-invalid', 'rogue-policy@1.0.0'])
      assert.match(decision.data.reason, problem)
      assert.match(decision.data.reason, /verdict_invalid/)
      assert.equal(events.filter((e) => e.type === 'tool/start').length, 0)
      assert.equal(harness!.followups().length, 0)
    })
  }

  it('is not fooled by a polluted Object.prototype: a decision with no verdict of its own denies', async () => {
    const proto = Object.prototype as Record<string, unknown>
    try {
      const { events } = await run({ policyPlugin: rogue('policy', 'polluted'), script: [followup, { final: 'done' }] })
      const decision = events.find((e) => e.type === 'tool/decision') as RunEvent<'tool/decision'>
      assert.equal(decision.data.verdict, 'deny')
      assert.match(decision.data.reason, /verdict must be allow, ask or deny, got nothing/)
      assert.equal(harness!.followups().length, 0)
    } finally {
      delete proto.verdict
      delete proto.ruleId
      delete proto.reason
    }
  })
})

describe('guardrail, progress and context answers are checked', () => {
  it('blocks when a guardrail answers something that is not a verdict', async () => {
    const { events } = await run({ plugins: [rogue('guardrail', 'garbage')], script: [followup, { final: 'done' }] })
    const trip = events.find((e) => e.type === 'guard/tripped') as RunEvent<'guard/tripped'>
    assert.deepEqual([trip.data.action, trip.data.guard, trip.producer], ['block', 'guardrail-invalid', 'rogue-guardrail@1.0.0'])
    assert.match(trip.data.reason, /action must be pass, block or redact, got "allow"/)
    assert.equal(harness!.followups().length, 0)
  })

  it('blocks a redact that carries no text', async () => {
    const { events } = await run({ plugins: [rogue('guardrail', 'redact-no-text')] })
    const trip = events.find((e) => e.type === 'guard/tripped') as RunEvent<'guard/tripped'>
    assert.equal(trip.data.action, 'block')
    assert.match(trip.data.reason, /a redact verdict carries the cleaned text/)
  })

  it('ends FAILED verdict_invalid on a malformed progress verdict, or one without a detector', async () => {
    for (const mode of ['garbage', 'stop-no-detector']) {
      const { state, end } = await run({ plugins: [rogue('progress', mode)] })
      assert.deepEqual([state.status, state.failureCode], ['FAILED', 'verdict_invalid'])
      assert.match(end.data.reason!, /progress service rogue-progress@1\.0\.0 answered something that is not a verdict/)
      await harness!.stop()
      harness = undefined
    }
  })

  it('ends FAILED verdict_invalid when the context is not a projection', async () => {
    const { state, end } = await run({ contextPlugin: rogue('context', 'garbage') })
    assert.deepEqual([state.status, state.failureCode], ['FAILED', 'verdict_invalid'])
    assert.match(end.data.reason!, /messages must be a list of messages/)
  })
})

describe('every service call is bounded in time', () => {
  for (const [service, options] of [
    ['verifier', { verifierPlugin: rogue('verifier', 'hang') }],
    ['policy', { policyPlugin: rogue('policy', 'hang') }],
    ['guardrail', { plugins: [rogue('guardrail', 'hang')] }],
    ['progress', { plugins: [rogue('progress', 'hang')] }],
    ['context', { contextPlugin: rogue('context', 'hang') }],
  ] as [string, Partial<DeskOptions>][]) {
    it(`ends FAILED service_timeout when the ${service} never answers, with run/end and the lease released`, async () => {
      const { state, end, events } = await run({ ...options, serviceTimeouts: { [service]: 150 } })
      assert.deepEqual([state.status, state.failureCode], ['FAILED', 'service_timeout'])
      assert.match(
        end.data.reason!,
        new RegExp(
          `the ${service} service \\(rogue-${service}@1\\.0\\.0\\) did not answer within 150 ms \\(serviceTimeouts\\.${service}\\)`,
        ),
      )
      assert.equal(events.filter((e) => e.type === 'tool/start' && e.data.tool === 'record_followup').length, 0)
      await leaseReleased(state.runId)
    })
  }

  it('records verify/end before it ends the run when the verifier does not answer', async () => {
    const { events } = await run({ verifierPlugin: rogue('verifier', 'hang'), serviceTimeouts: { verifier: 100 } })
    const types = events.map((e) => e.type)
    assert.ok(types.indexOf('verify/start') < types.indexOf('verify/end'))
    assert.equal((events.find((e) => e.type === 'verify/end') as RunEvent<'verify/end'>).data.code, 'service_timeout')
  })

  it('stops at the run deadline when it comes before the service timeout (deadline_exceeded, STOPPED)', async () => {
    const { state } = await run({ policyPlugin: rogue('policy', 'hang'), budgets: { deadlineMs: 300 } })
    assert.deepEqual([state.status, state.failureCode], ['STOPPED', 'deadline_exceeded'])
    await leaseReleased(state.runId)
  })

  it('refuses an unknown service in serviceTimeouts, naming the ones that exist', async () => {
    await assert.rejects(supportDesk({ script: [], serviceTimeouts: { polcy: 100 } }), {
      code: 'preset_invalid',
      message: /unknown key "polcy"; allowed here: context, tools, policy, guardrail, progress, compactor, verifier/,
    })
  })
})
