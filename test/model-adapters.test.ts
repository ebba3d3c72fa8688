/**
 * Both real model adapters against a local server that speaks their provider's wire protocol: the same
 * behaviour is owed by each (streaming, tool calls, usage and cost, retries that honour Retry-After,
 * faults classified, keys redacted, cancellation reaching the HTTP request).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { indexOf, refundAnswer } from './helpers.ts'
import { Adapters, adapterDesk, TestKey } from './servers/adapter-desk.ts'
import type { ScriptedReply } from './servers/provider-server.ts'

const lookup: ScriptedReply = {
  text: 'Let me check the policy.',
  toolCalls: [{ name: 'lookup_policy', args: { topic: 'refunds' } }],
  usage: { input: 1200, output: 40 },
}
const answer: ScriptedReply = { text: refundAnswer, usage: { input: 1500, output: 60 } }
/** An answer that needs no tool before it (it cites nothing). */
const plain: ScriptedReply = { text: 'Damaged items can be refunded within 30 days.' }
const prices = { inputPerMTok: 2, outputPerMTok: 8 }

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as RunEvent<T>[]

for (const adapter of Adapters) {
  describe(`${adapter.plugin} against a local ${adapter.protocol} server`, () => {
    it('streams a tool call and a final answer; the run completes with usage and cost from the price table', async () => {
      const desk = await adapterDesk(adapter, [lookup, answer], { prices })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        assert.equal(state.answer, refundAnswer)
        const events = await desk.events(state.runId)
        const responses = ofType(events, 'step/model-response')
        // The provider's own call id is kept (the server names them call_<n>_<i> and toolu_<n><i>).
        const callId = adapter.protocol === 'openai' ? 'call_1_0' : 'toolu_00010'
        assert.deepEqual(responses[0].data.decision, {
          kind: 'tool_calls',
          text: 'Let me check the policy.',
          calls: [{ name: 'lookup_policy', args: { topic: 'refunds' }, callId }],
        })
        assert.deepEqual(
          responses.map((r) => [r.data.usage.inputTokens, r.data.usage.outputTokens]),
          [
            [1200, 40],
            [1500, 60],
          ],
        )
        // 1200 in at $2/M and 40 out at $8/M.
        assert.equal(responses[0].data.usage.costUsd, 0.00272)
        assert.equal(state.usage.costUsd, 0.00272 + 0.00348)
        assert.equal(responses[1].data.model, 'test-model')
        // The second request carried the call and its observation, and the server (which enforces the
        // provider's pairing rules) accepted it.
        assert.equal(desk.server.requests.length, 2)
        const second = JSON.stringify(desk.server.requests[1].body)
        assert.ok(second.includes('lookup_policy') && second.includes('policy/refunds#2'), 'the observation went back to the model')
        // Previews arrived while the answer streamed, and add up to what was decided.
        const step1 = desk.deltas.filter((d) => d.stepId === 's1')
        assert.equal(step1.map((d) => d.text ?? '').join(''), 'Let me check the policy.')
        assert.equal(step1.map((d) => d.toolCall?.argsDelta ?? '').join(''), JSON.stringify({ topic: 'refunds' }))
        assert.ok(step1.length > 4, `expected the answer in several pieces, got ${step1.length}`)
        assert.equal(
          desk.deltas
            .filter((d) => d.stepId === 's2')
            .map((d) => d.text ?? '')
            .join(''),
          refundAnswer,
        )
        assert.equal(desk.deltas[0].producer, `${adapter.plugin}@1.1.0`)
      } finally {
        await desk.close()
      }
    })

    it('stops the run at the cost budget, from the cost the adapter priced', async () => {
      // 1200 in and 40 out at these prices cost $0.00272, over a budget of $0.002.
      const desk = await adapterDesk(adapter, [lookup, plain], { prices }, { budgets: { maxCostUsd: 0.002 } })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'STOPPED')
        assert.equal(state.failureCode, 'cost_budget_exceeded')
        assert.equal(desk.server.requests.length, 1, 'no model call after the budget was spent')
      } finally {
        await desk.close()
      }
    })

    it('keeps waiting while pieces keep coming, and gives up on a stall of timeoutMs', async () => {
      // 12 pieces 60 ms apart take longer than timeoutMs (300 ms) in all, but no gap reaches it.
      const flowing: ScriptedReply = { text: 'Damaged items: 30 days.', chunkChars: 2, fault: { gapMs: 60 } }
      const stalling: ScriptedReply = { ...plain, fault: { stallAfter: 2, stallMs: 2000 } }
      const desk = await adapterDesk(adapter, [flowing, stalling, plain], { timeoutMs: 300 })
      try {
        const first = await desk.agent.run()
        assert.equal(first.status, 'COMPLETED', first.reason)
        assert.equal(ofType(await desk.events(first.runId), 'step/model-error').length, 0)
        const second = await desk.agent.run()
        assert.equal(second.status, 'COMPLETED', second.reason)
        const [error] = ofType(await desk.events(second.runId), 'step/model-error')
        assert.match(error.data.message, /sent nothing for 300 ms/)
      } finally {
        await desk.close()
      }
    })

    it('stops at the deadline instead of sleeping through a Retry-After that outlasts it', async () => {
      const desk = await adapterDesk(adapter, [{ fault: { status: 429, retryAfter: '30' } }, plain], {}, { budgets: { deadlineMs: 1500 } })
      try {
        const t0 = Date.now()
        const state = await desk.agent.run()
        assert.equal(state.status, 'STOPPED')
        assert.equal(state.failureCode, 'deadline_exceeded')
        assert.ok(Date.now() - t0 < 1500, 'it slept toward the Retry-After')
        const events = await desk.events(state.runId)
        assert.equal(ofType(events, 'step/model-request').length, 1)
        assert.equal(ofType(events, 'step/model-error')[0].data.retryInMs, undefined)
      } finally {
        await desk.close()
      }
    })

    it('is not disturbed by a model/delta listener that throws', async () => {
      const desk = await adapterDesk(adapter, [lookup, plain])
      const stop = desk.agent.ctx.on('model/delta', () => {
        throw new Error('listener broke')
      })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        assert.ok(desk.errors.length > 0, 'the throw was reported')
        assert.ok(desk.errors.every((e) => /listener broke/.test(String(e))))
        desk.errors.length = 0
      } finally {
        stop()
        await desk.close()
      }
    })

    it('skips what a newer API version adds (unknown events and fields)', async () => {
      const desk = await adapterDesk(adapter, [
        { ...lookup, quirks: { unknownEvent: true } },
        { ...plain, quirks: { unknownEvent: true } },
      ])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
      } finally {
        await desk.close()
      }
    })

    it('honours Retry-After on a 429, records each attempt, then succeeds', async () => {
      const desk = await adapterDesk(adapter, [{ fault: { status: 429, retryAfter: '1', message: 'Rate limit reached' } }, plain])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        const events = await desk.events(state.runId)
        assert.deepEqual(
          ofType(events, 'step/model-request').map((e) => e.data.attempt),
          [1, 2],
        )
        const [error] = ofType(events, 'step/model-error')
        assert.equal(error.data.code, 'model_transient')
        assert.match(error.data.message, /429.*Rate limit reached/)
        assert.ok(error.data.retryInMs! >= 1000, `waited ${error.data.retryInMs} ms, Retry-After asked for 1000`)
      } finally {
        await desk.close()
      }
    })

    it('retries 5xx with backoff and fails the run with model_transient once attempts run out', async () => {
      const e500: ScriptedReply = { fault: { status: 500, message: 'internal' } }
      const desk = await adapterDesk(adapter, [e500, e500, e500, plain])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'FAILED')
        assert.equal(state.failureCode, 'model_transient')
        const errors = ofType(await desk.events(state.runId), 'step/model-error')
        assert.deepEqual(
          errors.map((e) => [e.data.attempt, e.data.code, e.data.retryInMs === undefined]),
          [
            [1, 'model_transient', false],
            [2, 'model_transient', false],
            [3, 'model_transient', true],
          ],
        )
        assert.equal(desk.server.pending, 1, 'the fourth answer was never asked for')
      } finally {
        await desk.close()
      }
    })

    it('takes a stream dropped mid-answer as transient and asks again', async () => {
      const desk = await adapterDesk(adapter, [{ ...lookup, fault: { dropAfter: 3 } }, lookup, plain])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        const events = await desk.events(state.runId)
        const [error] = ofType(events, 'step/model-error')
        assert.equal(error.data.code, 'model_transient')
        assert.match(error.data.message, /connection failed|stream ended/)
        // The half-streamed call was never acted on: one lookup ran, from the complete answer.
        assert.equal(ofType(events, 'tool/start').length, 1)
        assert.ok(
          desk.deltas.some((d) => d.attempt === 1) && desk.deltas.some((d) => d.attempt === 2),
          'previews say which attempt they belong to',
        )
      } finally {
        await desk.close()
      }
    })

    it('gives up on a slow first byte after timeoutMs and retries', async () => {
      const desk = await adapterDesk(adapter, [{ ...plain, fault: { firstByteDelayMs: 2000 } }, plain], { timeoutMs: 150 })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        const [error] = ofType(await desk.events(state.runId), 'step/model-error')
        assert.match(error.data.message, /sent nothing for 150 ms/)
      } finally {
        await desk.close()
      }
    })

    it('treats an error event inside the stream as transient', async () => {
      const desk = await adapterDesk(adapter, [{ ...plain, fault: { streamErrorAfter: 2, message: 'Overloaded' } }, plain])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        const [error] = ofType(await desk.events(state.runId), 'step/model-error')
        assert.equal(error.data.code, 'model_transient')
        assert.match(error.data.message, /Overloaded/)
      } finally {
        await desk.close()
      }
    })

    it('fails the run on a stream chunk that is not JSON (the provider broke its protocol)', async () => {
      const desk = await adapterDesk(adapter, [{ ...plain, fault: { corruptAfter: 2 } }])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'FAILED')
        assert.equal(state.failureCode, 'model_invalid_response')
        assert.match(state.reason ?? '', /not JSON/)
      } finally {
        await desk.close()
      }
    })

    it('turns malformed tool arguments into an observation for the model, never into a call', async () => {
      const broken: ScriptedReply = { toolCalls: [{ name: 'lookup_policy', rawArgs: '{"topic": "refu' }] }
      const desk = await adapterDesk(adapter, [broken, lookup, plain])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        const events = await desk.events(state.runId)
        const [proposed] = ofType(events, 'tool/proposed')
        assert.equal(proposed.data.args, '{"topic": "refu')
        assert.ok(proposed.data.argsError)
        const closed = ofType(events, 'tool/error').find((e) => e.actionId === proposed.actionId)
        assert.equal(closed?.data.code, 'invalid_arguments')
        assert.ok(indexOf(events, 'tool/start', proposed.actionId) < 0, 'the malformed call never ran')
        // The model was told, in a message the provider accepts as the answer to that call.
        assert.match(JSON.stringify(desk.server.requests[1].body), /not valid JSON/)
      } finally {
        await desk.close()
      }
    })

    it('fails on 401 without retrying, and the key never reaches the message or the store', async () => {
      const desk = await adapterDesk(adapter, [plain])
      process.env.CORDAGE_TEST_WRONG_KEY = 'sk-wrong-5e0c8a4d2b7f41c3'
      await desk.app.swap('support', adapter.plugin, {
        config: { model: 'test-model', baseUrl: desk.server.baseUrl, apiKeyEnv: 'CORDAGE_TEST_WRONG_KEY' },
      })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'FAILED')
        assert.equal(state.failureCode, 'model_permanent')
        assert.match(state.reason ?? '', /401.*\[redacted\].*check the key in \$CORDAGE_TEST_WRONG_KEY/)
        const stored = JSON.stringify(await desk.events(state.runId))
        assert.ok(!stored.includes('sk-wrong-5e0c8a4d2b7f41c3') && !stored.includes(TestKey), 'a key reached the store')
        assert.equal(ofType(await desk.events(state.runId), 'step/model-request').length, 1)
      } finally {
        await desk.close()
      }
    })

    it("fails on a 400 without retrying, with the provider's reason", async () => {
      const desk = await adapterDesk(adapter, [{ fault: { status: 400, message: 'max_tokens is too large for this model' } }])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'FAILED')
        assert.equal(state.failureCode, 'model_permanent')
        assert.match(state.reason ?? '', /400: max_tokens is too large/)
      } finally {
        await desk.close()
      }
    })

    it('takes a refused connection as transient', async () => {
      const desk = await adapterDesk(adapter, [plain])
      await desk.server.close()
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'FAILED')
        assert.equal(state.failureCode, 'model_transient')
        assert.match(state.reason ?? '', /connection failed \(ECONNREFUSED\)/)
      } finally {
        await desk.stop()
      }
    })

    it('aborts the HTTP request when the run is cancelled', async () => {
      const desk = await adapterDesk(adapter, [{ ...plain, fault: { firstByteDelayMs: 10_000 } }])
      try {
        const handle = desk.agent.start()
        while (desk.server.requests.length === 0) await new Promise((r) => setTimeout(r, 5))
        const t0 = Date.now()
        const state = await desk.agent.cancel(handle.runId, { by: 'test' })
        assert.equal(state.status, 'CANCELLED')
        assert.ok(Date.now() - t0 < 2000, 'cancel waited for the model')
        for (let i = 0; i < 100 && desk.server.hangups === 0; i++) await new Promise((r) => setTimeout(r, 10))
        assert.equal(desk.server.hangups, 1, 'the server saw the client hang up')
      } finally {
        await desk.close()
      }
    })

    it('lets the model ask the user through the ask_user tool; the run waits for the answer', async () => {
      const desk = await adapterDesk(adapter, [{ toolCalls: [{ name: 'ask_user', args: { question: 'Which order is it about?' } }] }])
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'WAITING_USER')
        const paused = ofType(await desk.events(state.runId), 'run/paused')
        assert.equal(paused[0].data.reason, 'Which order is it about?')
        const tools = JSON.stringify(desk.server.requests[0].body.tools)
        assert.ok(tools.includes('ask_user') && tools.includes('lookup_policy'))
      } finally {
        await desk.close()
      }
    })

    it('reads a non-streamed answer the same way', async () => {
      const desk = await adapterDesk(adapter, [lookup, plain], { stream: false })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED', state.reason)
        assert.equal(desk.server.requests[0].body.stream, undefined)
        assert.equal(desk.deltas.length, 0, 'no previews without a stream')
        const [first] = ofType(await desk.events(state.runId), 'step/model-response')
        assert.equal(first.data.usage.inputTokens, 1200)
      } finally {
        await desk.close()
      }
    })
  })
}
