/**
 * The kernel's side of version drift (core/kernel/drift.ts): the host hands a runtime its binding check
 * (core/kit/drift.ts decides what differs and what to do); the kernel records the answer and refuses
 * on a refused change, and a check that throws or answers garbage refuses too (fail closed), leaving the
 * run as it was. A runtime built without the host's check refuses every change not accepted.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Context } from 'cordis'
import { z } from 'zod'
import { createAgentContext, CordageError, defineTool, type RunEvent } from 'cordage'
import type { BindingCheck } from '../core/contracts/drift.ts'
import { AgentRuntime } from '../core/kernel/agent.ts'
import { KernelWriter } from '../core/kernel/store-writer.ts'
import { MemoryStore } from '../plugins/store-memory/memory-store.ts'

const pay = defineTool({
  name: 'pay',
  description: 'pays',
  input: z.object({}),
  sideEffect: 'external',
  idempotent: true,
  run: () => ({ output: 'paid' }),
})

/** A runtime on `store` whose model asks to pay once (policy: ask), then answers. */
function runtime(store: MemoryStore, options: { binding?: BindingCheck; plugins?: Record<string, string> } = {}): AgentRuntime {
  const ctx = createAgentContext(new Context(), 'desk')
  ctx.plugin({
    name: 'desk-services',
    manifest: {
      name: 'desk-services',
      version: '1.0.0',
      provides: { store: '1.0.0', tools: '1.0.0', context: '1.0.0', policy: '1.0.0', verifier: '1.0.0', model: '1.0.0' },
    },
    apply(c: Context) {
      c.set('store', store)
      c.set('tools', {
        register: () => () => {},
        get: (n: string) => (n === 'pay' ? pay : undefined),
        list: () => [pay],
        visible: () => [pay],
      })
      c.set('context', { assemble: () => ({ messages: [], tokens: 0 }) })
      c.set('policy', { version: 'p1', decide: () => ({ verdict: 'ask', ruleId: 'ask', reason: 'payments are asked' }) })
      c.set('verifier', { verify: () => ({ ok: true, evidence: [{ kind: 'test', ref: 'test' }] }) })
      c.set('model', {
        respond: async (request: { stepIndex: number }) => ({
          decision: request.stepIndex === 1 ? { kind: 'tool_calls', calls: [{ name: 'pay', args: {} }] } : { kind: 'final', text: 'done' },
          usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
        }),
      })
    },
  } as never)
  return new AgentRuntime(ctx, { writer: KernelWriter, name: 'desk', ...options })
}

const driftEvents = async (agent: AgentRuntime, runId: string) =>
  (await agent.store().load(runId)).filter((e): e is RunEvent<'run/version-drift'> => e.type === 'run/version-drift')

describe("the host's binding check, as the kernel enforces it", () => {
  it('refuses an approve when the check throws or answers garbage: nothing recorded, the action still waits', async () => {
    let answer: () => unknown = () => []
    const agent = runtime(new MemoryStore(10_000), { binding: () => answer() as never })
    const waiting = await agent.run('pay')
    assert.equal(waiting.status, 'WAITING_APPROVAL')
    const actionId = waiting.waiting!.actionId!
    for (const [bad, why] of [
      [
        () => {
          throw new Error('boom')
        },
        /it failed: boom/,
      ],
      [() => ({ plugin: 'x' }), /it must be a list of changes/],
      [() => [{ plugin: 'x', decision: 'maybe' }], /each change must be/],
      [() => [{ plugin: 'x', decision: 'accepted', to: 2 }], /to of x must be a string/],
    ] as const) {
      answer = bad
      await assert.rejects(agent.approve(waiting.runId, actionId, { by: 'alice' }), (error: unknown) => {
        assert.ok(CordageError.is(error, 'version_drift'), String(error))
        assert.match(error.message, /was not continued: the host's check of the plugins it is bound to did not answer/)
        assert.match(error.message, why)
        return true
      })
      const state = await agent.load(waiting.runId)
      assert.equal(state.status, 'WAITING_APPROVAL')
      assert.equal(state.actions[actionId].status, 'awaiting_approval')
    }
    assert.deepEqual(await driftEvents(agent, waiting.runId), [])
    // A refused change is recorded, and refused with the harness's message.
    answer = () => [{ plugin: 'policy', from: '1.0.0', to: '2.0.0', decision: 'refused' }]
    await assert.rejects(agent.approve(waiting.runId, actionId, { by: 'alice' }), /the approve given by alice was not carried out/)
    assert.deepEqual(
      (await driftEvents(agent, waiting.runId)).map((e) => [e.data.decision, e.data.changes]),
      [['refused', [{ plugin: 'policy', from: '1.0.0', to: '2.0.0', decision: 'refused' }]]],
    )
    answer = () => []
    assert.equal((await (await agent.approve(waiting.runId, actionId, { by: 'alice' })).done).status, 'COMPLETED')
  })

  it("suspends a worker's run when the check throws, recorded, so no worker picks it up again", async () => {
    const agent = runtime(new MemoryStore(10_000), {
      binding: () => {
        throw new Error('no rules loaded')
      },
    })
    const runId = await agent.submit('pay')
    const state = await (await agent.driveNext())!.done
    assert.equal(state.status, 'SUSPENDED')
    assert.match(state.waiting!.reason, /did not answer \(it failed: no rules loaded\)/)
    assert.equal(state.runId, runId)
  })

  it('without a check from the host, refuses every plugin that differs unless the command accepts drift', async () => {
    const store = new MemoryStore(10_000)
    const waiting = await runtime(store, { plugins: { policy: '1.0.0', tools: '1.0.0' } }).run('pay')
    const later = runtime(store, { plugins: { policy: '2.0.0', tools: '1.0.0', extra: '1.0.0' } })
    const actionId = waiting.waiting!.actionId!
    await assert.rejects(
      later.approve(waiting.runId, actionId, { by: 'alice' }),
      /started with other plugin versions \(extra \(none\) → 1\.0\.0, policy 1\.0\.0 → 2\.0\.0\)/,
    )
    const done = await (await later.approve(waiting.runId, actionId, { by: 'alice', acceptDrift: true })).done
    assert.equal(done.status, 'COMPLETED')
    assert.deepEqual(
      (await driftEvents(later, waiting.runId)).map((e) => [e.data.decision, e.data.changes.map((c) => [c.plugin, c.decision])]),
      [
        [
          'refused',
          [
            ['extra', 'refused'],
            ['policy', 'refused'],
          ],
        ],
        [
          'accepted',
          [
            ['extra', 'accepted'],
            ['policy', 'accepted'],
          ],
        ],
      ],
    )
  })
})
