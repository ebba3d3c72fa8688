/**
 * Extended thinking through a real agent: model-anthropic against a local Messages API that refuses a
 * tool-use continuation unless its last assistant turn carries back the thinking blocks it was given,
 * signatures unchanged. Streamed and whole answers, both context plugins, a run that goes on in a new
 * app from its SQLite log, and one whose process is killed after the tool call and taken over by
 * another (the blocks come back from the recorded events, through the reducer).
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import type { ContextMessage, RunEvent } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { chatMessages } from '../plugins/model-openai/request.ts'
import { FaultLab, wellFormed } from './fault-lab.ts'
import { refundAnswer, supportDesk, type DeskOptions } from './helpers.ts'
import { ThinkingServer, type ThinkingReply } from './servers/anthropic-thinking.ts'

const KeyEnv = 'CORDAGE_TEST_THINKING_KEY'
const Key = 'sk-ant-thinking-5c1e7a90b2'
const lookup: ThinkingReply = {
  thinking: 'The customer asks about damaged items; the refund policy says. I should look it up.',
  redacted: true,
  text: 'Let me check the policy.',
  toolCalls: [{ name: 'lookup_policy', args: { topic: 'refunds' } }],
}
const answer: ThinkingReply = { thinking: 'The policy gives 30 days; cite policy/refunds#2.', text: refundAnswer }

const responses = (events: RunEvent[]) => events.filter((e) => e.type === 'step/model-response') as RunEvent<'step/model-response'>[]

async function thinkingDesk(config: Record<string, unknown>, options: Partial<DeskOptions> = {}, replies = [lookup, answer]) {
  process.env[KeyEnv] = Key
  const server = await ThinkingServer.start(Key, replies)
  const modelPlugin = {
    plugin: 'model-anthropic',
    config: {
      model: 'claude-test',
      baseUrl: server.baseUrl,
      apiKeyEnv: KeyEnv,
      maxTokens: 4096,
      thinking: { budgetTokens: 2048 },
      ...config,
    },
  }
  const desk = await supportDesk({ script: [], modelPlugin, verifier: { minCount: 0 }, ...options })
  return { desk, server }
}

/** The second request sent back, first in its last assistant turn, the blocks the first answer was recorded with. */
function assertSentBack(server: ThinkingServer, events: RunEvent[]): void {
  const [first, second] = responses(events)
  assert.equal(first.data.reasoning?.provider, 'anthropic')
  const blocks = first.data.reasoning!.blocks as { type: string; signature?: string; thinking?: string }[]
  assert.deepEqual(
    blocks.map((b) => b.type),
    ['redacted_thinking', 'thinking'],
  )
  assert.equal(blocks[1].thinking, lookup.thinking)
  assert.equal(blocks[1].signature, server.sign(lookup.thinking))
  assert.equal(second.data.reasoning?.blocks.length, 1, 'the final answer keeps its thinking too')
  const body = server.requests[1].body
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2048 })
  const turn = body.messages.at(-2)
  assert.equal(turn.role, 'assistant')
  assert.deepEqual(turn.content.slice(0, 2), blocks)
  assert.deepEqual(
    turn.content.slice(2).map((b: { type: string }) => b.type),
    ['text', 'tool_use'],
  )
}

describe('model-anthropic with extended thinking, against a server that checks the thinking sent back', () => {
  for (const [stream, context] of [
    [true, 'context-basic'],
    [false, 'context-basic'],
    [true, 'context-default'],
  ] as const) {
    it(`carries the thinking blocks of a tool call into the continuation (${stream ? 'streamed' : 'whole'} answers, ${context})`, async () => {
      const { desk, server } = await thinkingDesk({ stream }, { contextPlugin: context })
      try {
        const state = await desk.agent.run()
        assert.deepEqual(server.refusals, [])
        assert.equal(state.status, 'COMPLETED', state.reason)
        assert.equal(state.answer, refundAnswer)
        assert.equal(server.requests.length, 2)
        assertSentBack(server, await desk.events(state.runId))
      } finally {
        await desk.stop()
        await server.close()
      }
    })
  }

  it('goes on in a new app from the log: the blocks come back from the recorded answer', async () => {
    const ask = [{ id: 'ask-lookups', verdict: 'ask', match: { tool: 'lookup_policy' } }]
    const { desk, server } = await thinkingDesk({}, { rules: ask, storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } } })
    let app: Cordage | undefined
    try {
      const paused = await desk.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL', paused.reason)
      await desk.stop()
      // A new app on the same preset and store: nothing of the first app's memory is left.
      app = await Cordage.fromPreset(desk.presetFile)
      const agent = app.agent('support')
      const state = await (await agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.deepEqual(server.refusals, [])
      assert.equal(state.status, 'COMPLETED', state.reason)
      assertSentBack(server, await agent.store().load(paused.runId))
    } finally {
      await app?.stop()
      await server.close()
    }
  })

  it('goes on after the process is killed after the tool call: another process sends the blocks back from the log', async () => {
    process.env[KeyEnv] = Key
    const server = await ThinkingServer.start(Key, [
      { thinking: 'I need the record first.', redacted: true, toolCalls: [{ name: 'lookup', args: {} }] },
      { thinking: 'Found it in kb/1.', text: 'done [source: kb/1]' },
    ])
    const lab = new FaultLab({ script: [] })
    try {
      // The fault lab's preset (store-sqlite, fault-desk), with this plugin as its model.
      const preset = parse(readFileSync(lab.presetFile, 'utf8'))
      preset.agents.pay.model = {
        plugin: 'model-anthropic',
        config: { model: 'claude-test', baseUrl: server.baseUrl, apiKeyEnv: KeyEnv, maxTokens: 4096, thinking: { budgetTokens: 2048 } },
      }
      writeFileSync(lab.presetFile, stringify(preset))
      const crashed = await lab.run(['run', '--json'], 'kill-after=tool/start#1')
      assert.equal(crashed.signal, 'SIGKILL', crashed.stderr)
      const runId = crashed.events[0].runId
      await lab.leaseExpiry()
      const resumed = await lab.run(['resume', runId, '--json'])
      assert.equal(resumed.code, 0, resumed.stderr)
      assert.deepEqual(server.refusals, [])
      const events = await lab.events(runId)
      assert.equal(wellFormed(events), undefined)
      assert.equal(events.filter((e) => e.type === 'run/recovered').length, 1, 'another process took the run over')
      const end = events.at(-1)!
      assert.equal(end.type === 'run/end' && end.data.status, 'COMPLETED')
      const recorded = responses(events)[0].data.reasoning!.blocks
      const turn = server.requests[1].body.messages.at(-2)
      assert.deepEqual(turn.content.slice(0, 2), recorded)
      assert.deepEqual(
        recorded.map((b) => (b as { type: string }).type),
        ['redacted_thinking', 'thinking'],
      )
    } finally {
      lab.close()
      await server.close()
    }
  })

  it('is refused by the server when the thinking does not go back (the check the tests above pass)', async () => {
    const server = await ThinkingServer.start(Key, [lookup, answer])
    try {
      const first = await fetch(`${server.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': Key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'm',
          max_tokens: 4096,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          messages: [{ role: 'user', content: 'Refund window?' }],
        }),
      })
      const message = (await first.json()) as { content: { type: string; id?: string; thinking?: string }[] }
      const continuation = (assistant: unknown[]) =>
        fetch(`${server.baseUrl}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': Key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'm',
            max_tokens: 4096,
            thinking: { type: 'enabled', budget_tokens: 2048 },
            // The API wants tools defined whenever the messages hold tool blocks.
            tools: [{ name: 'lookup_policy', input_schema: { type: 'object' } }],
            messages: [
              { role: 'user', content: 'Refund window?' },
              { role: 'assistant', content: assistant },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_10', content: '30 days' }] },
            ],
          }),
        })
      const rest = message.content.filter((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking')
      const without = await continuation(rest)
      assert.equal(without.status, 400)
      const refusal = (await without.json()) as { type: string; error: { type: string; message: string } }
      assert.equal(refusal.type, 'error')
      assert.equal(refusal.error.type, 'invalid_request_error')
      assert.match(refusal.error.message, /Expected `thinking` or `redacted_thinking`, but found `text`/)
      const changed = message.content.map((b) => (b.type === 'thinking' ? { ...b, thinking: `${b.thinking} [REDACTED]` } : b))
      const forged = await continuation(changed)
      assert.equal(forged.status, 400)
      assert.match(((await forged.json()) as { error: { message: string } }).error.message, /Invalid `signature` in `thinking` block/)
      assert.equal((await continuation(message.content)).status, 200, 'the blocks as given are taken')
    } finally {
      await server.close()
    }
  })

  it('keeps a secret out of the log: thinking that holds one is not recorded, and the continuation fails saying why', async () => {
    // The model thinks aloud about the key: the record scrubs it, which would break the signature.
    const leaky = { ...lookup, thinking: `The key is ${Key}; never mind.` }
    const { desk, server } = await thinkingDesk({}, {}, [leaky, answer])
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'FAILED')
      assert.equal(state.failureCode, 'model_permanent')
      assert.match(state.reason ?? '', /has no thinking blocks to send back/)
      const events = await desk.events(state.runId)
      assert.equal(responses(events)[0].data.reasoning, undefined)
      assert.doesNotMatch(JSON.stringify(events), new RegExp(Key))
      assert.equal(server.requests.length, 1, 'the refused continuation was not sent')
    } finally {
      await desk.stop()
      await server.close()
    }
  })

  it('fails the run when the API refuses the request (thinking left off for a model served with thinking only)', async () => {
    const { desk, server } = await thinkingDesk({ thinking: undefined })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'FAILED')
      assert.equal(state.failureCode, 'model_permanent')
      assert.match(state.reason ?? '', /thinking enabled only/)
    } finally {
      await desk.stop()
      await server.close()
    }
  })
})

describe('reasoning on an assistant message, for another provider', () => {
  it('is left out of a Chat Completions request', () => {
    const messages: ContextMessage[] = [
      { role: 'user', text: 'Refund window?', source: 1 },
      {
        role: 'assistant',
        text: 'Checking.',
        source: 2,
        calls: [{ actionId: 's1.a1', name: 'lookup_policy', args: { topic: 'refunds' } }],
        reasoning: { provider: 'anthropic', blocks: [{ type: 'thinking', thinking: 'hm', signature: 'sig' }] },
      },
      { role: 'tool', text: '30 days', actionId: 's1.a1', source: 3 },
    ]
    const plain = messages.map(({ reasoning: _, ...m }) => m)
    assert.deepEqual(chatMessages(messages), chatMessages(plain))
    assert.doesNotMatch(JSON.stringify(chatMessages(messages)), /signature|thinking/)
  })
})
