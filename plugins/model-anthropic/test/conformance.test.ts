/**
 * Conformance with the Messages API as the official client, @anthropic-ai/sdk, has it. The SDK is the
 * reference: the bodies below are typed with its request types (tsc checks them against the API's
 * schema), sent through the SDK to the same recording server as this adapter's requests, and compared
 * with what the adapter sends for the same conversation. Responses are built with the SDK's response
 * types and read by the adapter.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import Anthropic from '@anthropic-ai/sdk'
import type { ContextMessage, ModelRequest } from 'cordage'
import { AskUserTool } from 'cordage/wire'
import { lookupTool, modelRequest, supportHistory } from '../../../test/servers/model-request.ts'
import { ProviderServer } from '../../../test/servers/provider-server.ts'
import { AnthropicMessagesModel } from '../anthropic-model.ts'
import { markCache, type CacheControl } from '../cache.ts'
import { stubTool } from '../history-tools.ts'
import manifest from '../manifest.ts'
import { Message, MessageAnswer, StreamEvent } from '../response.ts'

const key = 'sk-ant-conf-5e1b7a9c3d'
const env = { CONF_ANTHROPIC_KEY: key }
const history = supportHistory('Checking.')
const request = (over: Partial<ModelRequest> = {}) => modelRequest(history, over)
const config = (server: ProviderServer, over: Record<string, unknown> = {}) =>
  manifest.config({ model: 'claude-test', baseUrl: server.baseUrl, apiKeyEnv: 'CONF_ANTHROPIC_KEY', ...over })

const mark: Anthropic.CacheControlEphemeral = { type: 'ephemeral' }
const toolParam = (t: { name: string; description: string; inputSchema: Record<string, unknown> }): Anthropic.Tool => ({
  name: t.name,
  description: t.description,
  input_schema: { type: 'object', ...t.inputSchema },
})

/** The support exchange as a caller of the SDK writes it, prompt cache marks included. */
const reference: Anthropic.MessageCreateParamsStreaming = {
  model: 'claude-test',
  max_tokens: 4096,
  stream: true,
  system: [{ type: 'text', text: 'You answer support questions.', cache_control: mark }],
  tools: [toolParam(lookupTool), toolParam(AskUserTool)],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Refund window?', cache_control: mark }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_s1_a1', name: 'lookup_policy', input: { topic: 'refunds' } },
        { type: 'tool_use', id: 'call_s1_a2', name: 'lookup_policy', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_s1_a1', content: '30 days' },
        { type: 'tool_result', tool_use_id: 'call_s1_a2', content: 'not valid JSON', is_error: true, cache_control: mark },
      ],
    },
  ],
}

const marks = (body: Record<string, any>) => JSON.stringify(body).split('"cache_control"').slice(1).length

describe('model-anthropic conformance with @anthropic-ai/sdk', () => {
  let server: ProviderServer
  let sdk: Anthropic
  before(async () => {
    server = await ProviderServer.start({ protocol: 'anthropic', apiKey: key })
    // The SDK's own default is `authorization: Bearer` with its newest anthropic-version (2026-10-21);
    // the adapter sends the documented x-api-key with its configured version (2023-06-01): the SDK is
    // told to do the same, so the bodies are compared under one API version.
    sdk = new Anthropic({
      apiKey: null,
      baseURL: server.baseUrl,
      maxRetries: 0,
      defaultHeaders: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    })
  })
  after(() => server.close())

  it('sends the body the SDK sends for the same conversation: roles, tool_use, tool_result with is_error, tools, cache marks', async () => {
    server.queue({ text: 'It is 30 days.' }, { text: 'It is 30 days.' })
    await new AnthropicMessagesModel(config(server), env).respond(request())
    const ours = server.requests.at(-1)!
    const stream = await sdk.messages.create(reference)
    for await (const _ of stream);
    const theirs = server.requests.at(-1)!
    assert.deepEqual(ours.body, theirs.body)
    assert.deepEqual(ours.body, reference)
    for (const header of ['anthropic-version', 'x-api-key', 'content-type'])
      assert.equal(ours.headers[header], theirs.headers[header], header)
  })

  it("is read by the SDK: the recording server's stream is one the official client assembles", async () => {
    server.queue({
      text: 'Looking.',
      toolCalls: [{ name: 'lookup_policy', args: { topic: 'x' } }],
      usage: { input: 5, cachedInput: 900, output: 7 },
    })
    const message = await sdk.messages
      .stream({ ...reference, stream: undefined } as Anthropic.MessageCreateParamsNonStreaming)
      .finalMessage()
    assert.deepEqual(
      message.content.map((b) => b.type),
      ['text', 'tool_use'],
    )
    assert.equal(message.stop_reason, 'tool_use')
    assert.equal(message.usage.cache_read_input_tokens, 900)
  })

  it('marks the stable prefix for the prompt cache: the system prompt, the previous user turn, the last turn; at most 4', async () => {
    const longer: ContextMessage[] = [
      ...history,
      { role: 'assistant', text: '', calls: [{ actionId: 's2.a1', name: 'lookup_policy', args: { topic: 'damaged' } }], source: 12 },
      { role: 'tool', actionId: 's2.a1', text: 'Refunds within 30 days.', source: 14 },
    ]
    server.queue({ text: 'ok' }, { text: 'ok' }, { text: 'ok' })
    await new AnthropicMessagesModel(config(server), env).respond(request({ messages: longer }))
    const body = server.requests.at(-1)!.body
    assert.equal(marks(body), 3)
    assert.deepEqual(body.system[0].cache_control, mark)
    assert.equal(body.messages.length, 5)
    assert.deepEqual(
      body.messages.map((m: { content: { cache_control?: unknown }[] }) => m.content.map((b) => b.cache_control !== undefined)),
      [[false], [false, false, false], [false, true], [false], [true]],
    )
    // Without a system prompt the tools carry the prefix mark; one hour when asked for; none when off.
    await new AnthropicMessagesModel(config(server, { promptCacheTtl: '1h' }), env).respond(request({ messages: longer.slice(1) }))
    const hour = server.requests.at(-1)!.body
    assert.equal('system' in hour, false)
    assert.deepEqual(hour.tools.at(-1).cache_control, { type: 'ephemeral', ttl: '1h' })
    assert.equal(marks(hour), 3)
    await new AnthropicMessagesModel(config(server, { promptCache: false }), env).respond(request({ messages: longer }))
    const off = server.requests.at(-1)!.body
    assert.equal(marks(off), 0)
    assert.equal(off.system, 'You answer support questions.')
  })

  it('never marks a thinking block, which takes no cache_control', () => {
    const thinking = { type: 'thinking', thinking: 'hmm', signature: 'sig' } as { type: string; cache_control?: CacheControl }
    const body = {
      messages: [
        { role: 'user' as const, content: [{ type: 'text' }] },
        { role: 'assistant' as const, content: [thinking] },
      ],
    }
    markCache(mark, body)
    assert.equal(thinking.cache_control, undefined)
    assert.deepEqual(body.messages[0].content[0], { type: 'text', cache_control: mark })
  })

  it('defines the tools its history used when a request offers none (a summary), so the API takes it', async () => {
    server.queue({ text: 'step' }, { text: 'A summary.' }, { text: 'A summary.' })
    const model = new AnthropicMessagesModel(config(server), env)
    await model.respond(request())
    const summary = await model.respond(request({ tools: [], purpose: 'summary' }))
    assert.deepEqual(summary.decision, { kind: 'final', text: 'A summary.' })
    const body = server.requests.at(-1)!.body
    // As offered before (the same bytes keep the cached prefix), and not to be called.
    assert.deepEqual(
      body.tools.map(({ cache_control, ...t }: Record<string, unknown>) => t),
      [toolParam(lookupTool)],
    )
    assert.deepEqual(body.tool_choice, { type: 'none' } satisfies Anthropic.ToolChoiceNone)
    // A new process (a resumed run) has not seen the definitions: a stub stands in.
    await new AnthropicMessagesModel(config(server), env).respond(request({ tools: [], purpose: 'summary' }))
    assert.deepEqual(server.requests.at(-1)!.body.tools, [toolParam(stubTool('lookup_policy'))])
  })

  it('refuses at start extraBody keys the adapter sends itself', () => {
    for (const [field, fix] of [
      ['max_tokens', /set maxTokens instead/],
      ['system', /context plugin makes the system prompt/],
      ['model', /set the model key instead/],
    ] as const)
      assert.throws(() => new AnthropicMessagesModel(config(server, { extraBody: { [field]: 1 } }), env), {
        code: 'plugin_config_invalid',
        message: new RegExp(`extraBody.${field} is not taken.*${fix.source}`),
      })
  })

  it('refuses at start an extraBody field that would replace what the config sets', () => {
    assert.throws(() => new AnthropicMessagesModel(config(server, { temperature: 0.2, extraBody: { temperature: 1 } }), env), {
      code: 'plugin_config_invalid',
      message:
        /temperature \(0.2\) and extraBody.temperature \(1\) both set temperature.*Keep temperature and take temperature out of extraBody/,
    })
  })

  it("takes extraBody's temperature and tool_choice where the adapter sets none, but its own tool_choice none wins on a summary", async () => {
    server.queue({ text: 'step' }, { text: 'A summary.' })
    const model = new AnthropicMessagesModel(config(server, { extraBody: { temperature: 1, tool_choice: { type: 'any' } } }), env)
    await model.respond(request())
    assert.deepEqual([server.requests.at(-1)!.body.temperature, server.requests.at(-1)!.body.tool_choice], [1, { type: 'any' }])
    // The summary request defines the history's tools only so the API takes it: none may be called.
    await model.respond(request({ tools: [], purpose: 'summary' }))
    assert.deepEqual(server.requests.at(-1)!.body.tool_choice, { type: 'none' })
  })

  it('reads a stream shaped by the SDK types: thinking, cache usage, a server tool block, an unknown delta', () => {
    const events: Anthropic.RawMessageStreamEvent[] = [
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          container: null,
          diagnostics: null,
          stop_details: null,
          usage: {
            input_tokens: 10,
            output_tokens: 1,
            cache_creation_input_tokens: 2000,
            cache_read_input_tokens: 8000,
            cache_creation: null,
            inference_geo: null,
            output_tokens_details: null,
            server_tool_use: null,
            service_tier: 'standard',
            speed: null,
          },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Look it up.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup_policy', input: {}, caller: { type: 'direct' } },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"topic":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"refunds"}' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null } as Anthropic.MessageDeltaEvent['delta'],
        usage: { output_tokens: 30 } as Anthropic.MessageDeltaUsage,
      },
      { type: 'message_stop' },
    ]
    const answer = new MessageAnswer()
    for (const e of events) answer.add(StreamEvent.parse(e))
    const result = answer.result({ inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75 }, 'x', true)
    assert.deepEqual(result.decision, {
      kind: 'tool_calls',
      calls: [{ name: 'lookup_policy', args: { topic: 'refunds' }, callId: 'toolu_1' }],
    })
    assert.equal(result.usage.inputTokens, 10_010)
    assert.equal(result.usage.costUsd, (10 * 3 + 8000 * 0.3 + 2000 * 3.75 + 30 * 15) / 1e6)
    assert.deepEqual(result.reasoning?.blocks, [{ type: 'thinking', thinking: 'Look it up.', signature: 'c2ln' }])
  })

  it('fails an answer cut off by the context window (stop_reason model_context_window_exceeded) rather than take it whole', () => {
    const message: Pick<Anthropic.Message, 'content' | 'stop_reason' | 'model'> = {
      model: 'claude-test',
      content: [{ type: 'text', text: 'The refund window is', citations: null }],
      stop_reason: 'model_context_window_exceeded',
    }
    const answer = new MessageAnswer()
    answer.read(Message.parse(message))
    assert.throws(() => answer.result({ inputPerMTok: 0, outputPerMTok: 0 }, 'x', true), {
      code: 'model_permanent',
      message: /model_context_window_exceeded/,
    })
  })
})
