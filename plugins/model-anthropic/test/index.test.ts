import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ContextMessage, ModelRequest } from 'cordage'
import { lookupTool, modelRequest, supportHistory } from '../../../test/servers/model-request.ts'
import { ProviderServer } from '../../../test/servers/provider-server.ts'
import { AnthropicMessagesModel } from '../anthropic-model.ts'
import manifest from '../manifest.ts'
import { MessageAnswer, StreamEvent } from '../response.ts'

const key = 'sk-ant-unit-7d2e9c4b1a'
const env = { UNIT_ANTHROPIC_KEY: key }
const history: ContextMessage[] = [
  ...supportHistory('Checking.'),
  { role: 'user', text: '[harness] The answer must cite a source.', source: 11 },
  { role: 'system', text: 'Be brief.', source: 12 },
]
const request = (over: Partial<ModelRequest> = {}) => modelRequest(history, over)
const config = (server: ProviderServer, over: Record<string, unknown> = {}) =>
  manifest.config({ model: 'claude-test', baseUrl: server.baseUrl, apiKeyEnv: 'UNIT_ANTHROPIC_KEY', ...over })

describe('model-anthropic', () => {
  let server: ProviderServer
  before(async () => {
    server = await ProviderServer.start({ protocol: 'anthropic', apiKey: key })
  })
  after(() => server.close())

  it('sends the system prompt on top, merges turns so roles alternate, answers every tool_use first thing, and flags a failed result', async () => {
    server.queue({ text: 'It is 30 days.' })
    const model = new AnthropicMessagesModel(
      config(server, { maxTokens: 512, temperature: 0.3, headers: { 'anthropic-beta': 'x' }, promptCache: false }),
      env,
    )
    const response = await model.respond(request())
    assert.deepEqual(response.decision, { kind: 'final', text: 'It is 30 days.' })
    const sent = server.requests.at(-1)!
    assert.equal(sent.headers['x-api-key'], key)
    assert.equal(sent.headers['anthropic-version'], '2023-06-01')
    assert.equal(sent.headers['anthropic-beta'], 'x')
    assert.equal(sent.headers.authorization, undefined)
    assert.equal(sent.body.system, 'You answer support questions.')
    assert.equal(sent.body.max_tokens, 512)
    assert.equal(sent.body.temperature, 0.3)
    assert.deepEqual(sent.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Refund window?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_s1_a1', name: 'lookup_policy', input: { topic: 'refunds' } },
          // Malformed arguments cannot go back as text here: tool_use input must be an object.
          { type: 'tool_use', id: 'call_s1_a2', name: 'lookup_policy', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_s1_a1', content: '30 days' },
          // A failed result is flagged, as the API has it, rather than marked in its text.
          { type: 'tool_result', tool_use_id: 'call_s1_a2', content: 'not valid JSON', is_error: true },
          { type: 'text', text: '[harness] The answer must cite a source.' },
          { type: 'text', text: '[system] Be brief.' },
        ],
      },
    ])
    assert.deepEqual(sent.body.tools, [
      { name: 'lookup_policy', description: 'Find the policy', input_schema: lookupTool.inputSchema },
      { name: 'ask_user', description: sent.body.tools[1].description, input_schema: sent.body.tools[1].input_schema },
    ])
    assert.equal(sent.body.stream, true)
  })

  it('counts cached input tokens in the total and prices reads and writes as configured', async () => {
    server.queue({ text: 'ok', usage: { input: 200_000, cachedInput: 800_000, output: 1_000_000 } })
    const model = new AnthropicMessagesModel(
      config(server, { prices: { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 } }),
      env,
    )
    const { usage } = await model.respond(request())
    assert.equal(usage.inputTokens, 1_000_000)
    assert.equal(usage.outputTokens, 1_000_000)
    assert.equal(usage.costUsd, 0.2 * 3 + 0.8 * 0.3 + 15)
  })

  it('takes 529 overloaded as transient, with the type the API sends', async () => {
    server.queue({ fault: { status: 529, message: 'Overloaded' } })
    await assert.rejects(new AnthropicMessagesModel(config(server), env).respond(request()), {
      code: 'model_transient',
      message: /529: Overloaded/,
    })
  })

  it('fails permanently on a refusal', async () => {
    server.queue({ text: 'I cannot help with that.', stopReason: 'refusal' })
    await assert.rejects(new AnthropicMessagesModel(config(server), env).respond(request()), {
      code: 'model_permanent',
      message: /refusal/,
    })
  })

  it('keeps thinking blocks out of the decision, as the reasoning that goes back with it', () => {
    const answer = new MessageAnswer()
    const events: unknown[] = [
      { type: 'message_start', message: { model: 'claude-test', usage: { input_tokens: 10, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ]
    for (const e of events) answer.add(StreamEvent.parse(e))
    const result = answer.result({ inputPerMTok: 0, outputPerMTok: 0 }, 'x', true)
    assert.deepEqual(result.decision, { kind: 'final', text: 'Hello' })
    assert.deepEqual(result.reasoning, { provider: 'anthropic', blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'abc' }] })
    assert.deepEqual(result.usage, { inputTokens: 10, outputTokens: 5, costUsd: 0 })
  })

  it('reads a non-streamed message with tool_use blocks', async () => {
    server.queue({ text: 'Looking.', toolCalls: [{ name: 'lookup_policy', args: { topic: 'returns' } }] })
    const response = await new AnthropicMessagesModel(config(server, { stream: false }), env).respond(request())
    assert.equal(server.requests.at(-1)!.body.stream, undefined)
    assert.equal(response.decision.kind, 'tool_calls')
    assert.deepEqual(response.decision.kind === 'tool_calls' && response.decision.calls.map((c) => [c.name, c.args]), [
      ['lookup_policy', { topic: 'returns' }],
    ])
  })

  it('refuses to start without a key for api.anthropic.com, naming the variable', () => {
    assert.throws(
      () => new AnthropicMessagesModel(manifest.config({ model: 'claude-test', apiKeyEnv: 'CORDAGE_UNSET_KEY' }), {}),
      /CORDAGE_UNSET_KEY is not set/,
    )
    assert.equal(
      new AnthropicMessagesModel(manifest.config({ model: 'm' }), { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' }).baseUrl,
      'http://127.0.0.1:9/',
    )
  })

  it('reads a thinking block and skips an unknown event served over the wire, and prices cache writes', async () => {
    server.queue({
      text: 'Hello',
      quirks: { thinking: 'Let me think.', unknownEvent: true },
      usage: { input: 100_000, cacheWrite: 1_000_000, output: 0 },
    })
    const model = new AnthropicMessagesModel(
      config(server, { prices: { inputPerMTok: 3, outputPerMTok: 15, cacheWritePerMTok: 3.75 } }),
      env,
    )
    const { decision, usage } = await model.respond(request())
    assert.deepEqual(decision, { kind: 'final', text: 'Hello' })
    assert.equal(usage.inputTokens, 1_100_000)
    assert.equal(usage.costUsd, 0.1 * 3 + 3.75)
  })

  it('fails a text answer cut off at max_tokens rather than take it for a final one', async () => {
    server.queue({ text: 'Damaged items can be refu', stopReason: 'max_tokens' })
    await assert.rejects(new AnthropicMessagesModel(config(server), env).respond(request()), {
      code: 'model_permanent',
      message: /cut off at max_tokens/,
    })
  })

  it('leaves out an empty system prompt', async () => {
    server.queue({ text: 'ok' })
    await new AnthropicMessagesModel(config(server), env).respond(
      request({
        messages: [
          { role: 'system', text: ' ', source: 0 },
          { role: 'user', text: 'hi', source: 1 },
        ],
      }),
    )
    assert.equal('system' in server.requests.at(-1)!.body, false)
  })
})
