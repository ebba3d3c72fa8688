/**
 * Phases plugins can intercept (core/contracts/phases.ts, core/kernel/phases.ts): the example domain
 * plugin of docs/concepts/architecture.md (docs/examples/refund-rules) refuses a proposal before policy
 * and rewrites a result before it is recorded; handlers that throw, hang or answer nonsense fail closed;
 * a handler of one agent does not reach another agent's runs.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { readService, type RunEvent } from 'cordage'
import type { ScriptedModel } from '../plugins/model-scripted/index.ts'
import { Cordage } from '../core/host/app.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')
const apps: Cordage[] = []
after(async () => {
  for (const app of apps) await app.stop()
})

const script = [
  { tool: 'check_order', args: { orderId: 'O-7' } },
  { tool: 'issue_refund', args: { orderId: 'O-7', amount: 40 } },
  { final: 'Refunded 40 on O-7 (RF-1).' },
]

function agent(extra: unknown[], serviceTimeouts?: Record<string, number>) {
  return {
    task: 'Refund order O-7.',
    budgets: { maxSteps: 6, maxRepairs: 0 },
    ...(serviceTimeouts ? { serviceTimeouts } : {}),
    model: { plugin: 'model-scripted', config: { script } },
    plugins: [
      'store-memory',
      'tools-registry',
      'context-basic',
      { plugin: 'policy-rules', config: { default: 'allow' } },
      {
        path: join(root, 'docs/examples/returns-desk'),
        config: { orders: { 'O-7': { amount: 40, damaged: true, customer: 'ann.lee@example.com' } } },
      },
      ...extra,
    ],
  }
}

async function start(agents: Record<string, unknown>): Promise<Cordage> {
  const dir = tempDir('cordage-phases-')
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify({ cordage: 1, agents }))
  const app = await Cordage.fromPreset(file, { onError: () => {} })
  apps.push(app)
  return app
}

const rules = (maxRefund: number) => ({ path: join(root, 'docs/examples/refund-rules'), config: { maxRefund } })
const rogue = (config: Record<string, string>) => ({ path: join(root, 'test/fixtures/plugins/rogue-phases'), config })

async function runOf(app: Cordage, name = 'returns'): Promise<{ status: string; failureCode?: string; events: RunEvent[] }> {
  const runtime = app.agent(name)
  const state = await runtime.run()
  return { status: state.status, failureCode: state.failureCode, events: await runtime.store().load(state.runId) }
}

const of = (events: RunEvent[], actionId: string) => events.filter((e) => e.actionId === actionId).map((e) => e.type)

describe('phases: the example domain plugin', () => {
  it('refuses a refund above the cap before policy is asked: nothing decided, nothing started, the model told why', async () => {
    const { events } = await runOf(await start({ returns: agent([rules(30)]) }))
    assert.deepEqual(of(events, 's2.a1'), ['tool/proposed', 'tool/error'])
    const error = events.find((e) => e.type === 'tool/error' && e.actionId === 's2.a1')!
    assert.ok(error.type === 'tool/error')
    assert.equal(error.data.code, 'phase_refused')
    assert.match(error.data.observation, /refunds above 30 go to finance/)
  })

  it('lets a refund under the cap go on to policy', async () => {
    const { events } = await runOf(await start({ returns: agent([rules(100)]) }))
    assert.deepEqual(of(events, 's2.a1'), ['tool/proposed', 'tool/decision', 'tool/start', 'tool/end'])
  })

  it('rewrites a result before tool/end is recorded: the email is in neither the output nor the observation', async () => {
    const { events } = await runOf(await start({ returns: agent([rules(100)]) }))
    const end = events.find((e) => e.type === 'tool/end' && e.actionId === 's1.a1')!
    assert.ok(end.type === 'tool/end')
    assert.deepEqual(end.data.output, { orderId: 'O-7', amount: 40, damaged: true, customer: '[email]' })
    assert.match(end.data.observation, /\[email\]/)
    assert.doesNotMatch(JSON.stringify(events), /ann\.lee@example\.com/)
  })

  it('tells the model the cap before each step: what it reads has the rule first, and step/context counts it', async () => {
    const app = await start({ returns: agent([rules(100)]), plain: agent([]) })
    const ruled = await runOf(app, 'returns')
    const plain = await runOf(app, 'plain')
    const requests = readService<ScriptedModel>(app.agent('returns').ctx, 'model')!.value.requests
    assert.equal(requests.length, 3)
    for (const request of requests)
      assert.deepEqual(request.messages[0], { role: 'system', text: 'Refunds above 100 go to finance.', source: 0, ref: 'refund-rules' })
    const counts = (events: RunEvent[]) => events.flatMap((e) => (e.type === 'step/context' ? [e.data.messages] : []))
    assert.deepEqual(
      counts(ruled.events),
      counts(plain.events).map((n) => n + 1),
    )
    // The context service's projection is the next step's start: the rule is added once per step, not once more each step.
    assert.equal(requests.at(-1)!.messages.filter((m) => m.ref === 'refund-rules').length, 1)
  })

  it('applies only to the runs of the agent that has the plugin', async () => {
    const app = await start({ returns: agent([]), strict: agent([rules(30)]) })
    assert.deepEqual(of((await runOf(app, 'returns')).events, 's2.a1'), ['tool/proposed', 'tool/decision', 'tool/start', 'tool/end'])
    assert.deepEqual(of((await runOf(app, 'strict')).events, 's2.a1'), ['tool/proposed', 'tool/error'])
  })
})

describe('phases fail closed', () => {
  for (const mode of ['throw', 'garbage'] as const) {
    it(`refuses the call when a tool/before-decide handler answers with ${mode === 'throw' ? 'an exception' : 'something that is not a refusal'}`, async () => {
      const { events } = await runOf(await start({ returns: agent([rogue({ decide: mode })]) }))
      const error = events.find((e) => e.type === 'tool/error' && e.actionId === 's1.a1')!
      assert.ok(error.type === 'tool/error')
      assert.equal(error.data.code, 'phase_failed')
      assert.match(error.data.observation, /tool\/before-decide handler of rogue-phases@1\.0\.0 failed/)
      assert.equal(of(events, 's1.a1').includes('tool/start'), false)
    })
  }

  it('gives handlers a sealed copy: one that edits the arguments it was shown changes nothing the handlers after it see', async () => {
    // rogue shrinks the refund's amount to 1 on what it was shown; the cap of 30 must still see 40.
    const { events } = await runOf(await start({ returns: agent([rogue({ decide: 'mutate' }), rules(30)]) }))
    assert.deepEqual(of(events, 's2.a1'), ['tool/proposed', 'tool/error'])
    const error = events.find((e) => e.type === 'tool/error' && e.actionId === 's2.a1')
    assert.ok(error?.type === 'tool/error')
    assert.equal(error.data.code, 'phase_refused')
  })

  it('ends the run with service_timeout when a handler does not answer in time', async () => {
    const run = await runOf(await start({ returns: agent([rogue({ decide: 'hang' })], { phases: 200 }) }))
    assert.equal(run.status, 'FAILED')
    assert.equal(run.failureCode, 'service_timeout')
    assert.equal(of(run.events, 's1.a1').includes('tool/start'), false)
  })

  for (const mode of ['throw', 'garbage', 'tokens'] as const) {
    it(`fails the run before the model is asked when a step/before-model handler ${mode === 'throw' ? 'throws' : mode === 'garbage' ? 'answers a message without a role' : 'answers a negative token count'}`, async () => {
      const app = await start({ returns: agent([rogue({ model: mode })]) })
      const run = await runOf(app)
      assert.equal(run.status, 'FAILED')
      assert.equal(run.failureCode, 'phase_failed')
      assert.equal(readService<ScriptedModel>(app.agent('returns').ctx, 'model')!.value.requests.length, 0, 'the model was not asked')
      assert.equal(
        run.events.some((e) => e.type === 'step/context'),
        false,
      )
      const end = run.events.at(-1)!
      assert.ok(end.type === 'run/end')
      assert.match(end.data.reason ?? '', /step\/before-model handler of rogue-phases@1\.0\.0 failed/)
    })
  }

  it('ends the run with service_timeout when a step/before-model handler does not answer in time', async () => {
    const app = await start({ returns: agent([rogue({ model: 'hang' })], { phases: 200 }) })
    const run = await runOf(app)
    assert.equal(run.failureCode, 'service_timeout')
    assert.equal(readService<ScriptedModel>(app.agent('returns').ctx, 'model')!.value.requests.length, 0)
  })

  for (const mode of ['throw', 'garbage', 'rename'] as const) {
    it(`records the call's outcome with its result withheld, then fails the run, when a tool/before-end handler ${mode === 'rename' ? 'changes the call it is about' : mode === 'throw' ? 'throws' : 'answers nonsense'}`, async () => {
      const run = await runOf(await start({ returns: agent([rogue({ end: mode })]) }))
      const end = run.events.find((e) => e.type === 'tool/end' && e.actionId === 's1.a1')!
      assert.ok(end.type === 'tool/end')
      assert.equal(end.data.output, null)
      assert.match(
        end.data.observation,
        /^The result of check_order was withheld: .*tool\/before-end handler of rogue-phases@1\.0\.0 failed/,
      )
      assert.equal(run.status, 'FAILED')
      assert.equal(run.failureCode, 'phase_failed')
      assert.doesNotMatch(JSON.stringify(run.events), /ann\.lee@example\.com/)
    })
  }
})

describe('verify/before-verdict: a final answer may be refused before the verifier judges it', () => {
  const verdicts = (events: RunEvent[]) =>
    events
      .filter((e) => e.type === 'verify/end')
      .map((e) => (e.type === 'verify/end' ? { ...e.data, producer: e.producer.startsWith('kernel@') ? 'kernel' : e.producer } : e))

  it("refuses the answer: verify/end is the kernel's, not the verifier's, and the run fails verification with phase_refused", async () => {
    const run = await runOf(await start({ returns: agent([rogue({ verify: 'refuse' })]) }))
    assert.equal(run.status, 'FAILED_VERIFICATION')
    assert.equal(run.failureCode, 'phase_refused')
    const [end] = verdicts(run.events) as { ok: boolean; code: string; feedback: string; repair: boolean; producer: string }[]
    assert.equal(end.ok, false)
    assert.equal(end.code, 'phase_refused')
    assert.equal(end.repair, false, 'maxRepairs 0: no repair')
    assert.equal(end.producer, 'kernel')
    assert.match(end.feedback, /no promises in "Refunded 40 on O-7 \(RF-1\)\."/)
  })

  it("lets the model answer again within the repair budget, and the run completes on the verifier's pass", async () => {
    const preset = {
      ...agent([rogue({ verify: 'refuse-first' })]),
      budgets: { maxSteps: 6, maxRepairs: 1 },
      model: { plugin: 'model-scripted', config: { script: [...script, { final: 'Refunded 40 on O-7 (RF-1).' }] } },
    }
    const app = await start({ returns: preset })
    const run = await runOf(app)
    assert.equal(run.status, 'COMPLETED')
    const [refused, passed] = verdicts(run.events) as { ok: boolean; code?: string; repair?: boolean; producer: string }[]
    assert.deepEqual([refused.ok, refused.code, refused.repair, refused.producer], [false, 'phase_refused', true, 'kernel'])
    assert.equal(passed.ok, true)
    assert.notEqual(passed.producer, 'kernel', "the pass is the verifier's")
    // The model was asked again after the refusal, and read why.
    const requests = readService<ScriptedModel>(app.agent('returns').ctx, 'model')!.value.requests
    assert.equal(requests.length, 4)
    assert.match(JSON.stringify(requests.at(-1)), /refused before it was verified: no promises/)
  })

  for (const [mode, code] of [
    ['throw', 'phase_failed'],
    ['garbage', 'phase_failed'],
    ['hang', 'service_timeout'],
  ] as const) {
    it(`fails the run with ${code} when a handler ${mode === 'throw' ? 'throws' : mode === 'hang' ? 'does not answer in time' : 'answers an empty refusal'}: no verdict, no completion`, async () => {
      const run = await runOf(await start({ returns: agent([rogue({ verify: mode })], { phases: 200 }) }))
      assert.equal(run.status, 'FAILED')
      assert.equal(run.failureCode, code)
      const [end] = verdicts(run.events) as { ok: boolean; code: string; producer: string }[]
      assert.deepEqual([end.ok, end.code, end.producer], [false, code, 'kernel'])
    })
  }
})

describe('tool/before-execute: an authorized call may still be refused, before anything of it starts', () => {
  const toolError = (events: RunEvent[], actionId: string) => {
    const error = events.find((e) => e.type === 'tool/error' && e.actionId === actionId)!
    assert.ok(error.type === 'tool/error')
    return error.data
  }

  it("refuses policy's allow: decided, never started, the model told why, and the run goes on", async () => {
    const run = await runOf(await start({ returns: agent([rogue({ execute: 'refuse' })]) }))
    assert.deepEqual(of(run.events, 's1.a1'), ['tool/proposed', 'tool/decision', 'tool/start', 'tool/end'], 'check_order runs')
    assert.deepEqual(of(run.events, 's2.a1'), ['tool/proposed', 'tool/decision', 'tool/error'])
    const error = toolError(run.events, 's2.a1')
    assert.equal(error.code, 'phase_refused')
    assert.match(error.observation, /^Refused before it ran: the desk is closed \(approved by nobody, policy .+\)\. Nothing was run\.$/)
    assert.ok(
      run.events.some((e) => e.type === 'step/start' && e.stepId === 's3'),
      'the model was asked again',
    )
  })

  it('refuses a call a person approved, and is shown who approved it', async () => {
    const returns = agent([rogue({ execute: 'refuse' })])
    returns.plugins[3] = {
      plugin: 'policy-rules',
      config: { default: 'allow', approvers: ['*'], rules: [{ id: 'refunds', verdict: 'ask', match: { tool: 'issue_refund' } }] },
    }
    const app = await start({ returns })
    const runtime = app.agent('returns')
    const paused = await runtime.run()
    assert.equal(paused.status, 'WAITING_APPROVAL')
    const done = await (await runtime.approve(paused.runId, 's2.a1', { by: 'alice' })).done
    const events = await runtime.store().load(done.runId)
    assert.equal(of(events, 's2.a1').includes('tool/start'), false)
    assert.match(toolError(events, 's2.a1').observation, /approved by alice/)
  })

  for (const mode of ['throw', 'garbage'] as const) {
    it(`refuses the call when a handler ${mode === 'throw' ? 'throws' : 'answers an empty refusal'} (fail closed)`, async () => {
      const run = await runOf(await start({ returns: agent([rogue({ execute: mode })]) }))
      assert.deepEqual(of(run.events, 's1.a1'), ['tool/proposed', 'tool/decision', 'tool/error'])
      const error = toolError(run.events, 's1.a1')
      assert.equal(error.code, 'phase_failed')
      assert.match(error.observation, /tool\/before-execute handler of rogue-phases@1\.0\.0 failed/)
    })
  }

  it('ends the run with service_timeout when a handler does not answer in time, nothing started', async () => {
    const run = await runOf(await start({ returns: agent([rogue({ execute: 'hang' })], { phases: 200 }) }))
    assert.equal(run.failureCode, 'service_timeout')
    assert.equal(
      run.events.some((e) => e.type === 'tool/start'),
      false,
    )
  })
})

describe('tool/shape-result: the kernel stores what a handler asks, and only what the guardrail let through', () => {
  const shape = (mode: string) => rogue({ shape: mode })
  const endOf = (events: RunEvent[], actionId: string) => {
    const end = events.find((e) => e.type === 'tool/end' && e.actionId === actionId)!
    assert.ok(end.type === 'tool/end')
    return end
  }

  it('stores the result as tool/before-end left it, as a ui artifact; no raw copy of a result no guardrail redacted', async () => {
    const app = await start({ returns: agent([rules(100), shape('store-all')]) })
    const run = await runOf(app)
    // The verifier looks for the refund in what the model read, which the handler replaced: the run does not complete.
    assert.notEqual(run.failureCode, 'phase_failed')
    const end = endOf(run.events, 's1.a1')
    assert.equal(end.data.output, undefined, 'tool/end names the artifact instead')
    assert.equal(end.data.observation, 'kept apart')
    assert.equal(end.data.redacted, undefined, 'nothing redacted: the raw copy a handler asked for is not kept')
    const artifact = end.data.artifact!
    assert.equal(artifact.visibility, 'ui')
    assert.equal(artifact.mediaType, 'application/json')
    const store = app.agent('returns').store()
    const text = Buffer.from(await store.readArtifact!(artifact.ref)).toString('utf8')
    assert.deepEqual(JSON.parse(text), { orderId: 'O-7', amount: 40, damaged: true, customer: '[email]' })
    assert.equal(artifact.bytes, Buffer.byteLength(text))
    const runId = run.events[0].runId
    assert.deepEqual(
      (await store.artifactsOf!(runId)).map((a) => a.visibility),
      ['ui', 'ui'],
    )
  })

  for (const mode of ['throw', 'content', 'media', 'rename'] as const) {
    it(`records the outcome with its result withheld, then fails the run, when a handler ${mode === 'throw' ? 'throws' : mode === 'content' ? 'changes the content' : mode === 'media' ? 'names no media type' : 'changes the call it is about'}`, async () => {
      const app = await start({ returns: agent([rogue({ shape: mode })]) })
      const run = await runOf(app)
      const end = endOf(run.events, 's1.a1')
      assert.equal(end.data.output, null)
      assert.equal(end.data.artifact, undefined)
      assert.match(
        end.data.observation,
        /^The result of check_order was withheld: .*tool\/shape-result handler of rogue-phases@1\.0\.0 failed/,
      )
      assert.equal(run.status, 'FAILED')
      assert.equal(run.failureCode, 'phase_failed')
      assert.deepEqual(await app.agent('returns').store().artifactsOf!(run.events[0].runId), [])
    })
  }

  it('fails closed when a handler asks for an artifact the store cannot keep', async () => {
    const returns = agent([shape('store-all')])
    returns.plugins[0] = { path: join(root, 'test/fixtures/plugins/store-without-artifacts') } as never
    const run = await runOf(await start({ returns }))
    const end = endOf(run.events, 's1.a1')
    assert.equal(end.data.output, null)
    assert.match(end.data.observation, /keeps no artifacts/)
    assert.equal(run.failureCode, 'phase_failed')
  })
})
