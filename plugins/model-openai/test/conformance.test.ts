/**
 * Conformance with Chat Completions as the official client, `openai`, has it. The SDK is the reference:
 * the body below is typed with its request types (tsc checks it against the API's schema), sent through
 * the SDK to the same recording server as this adapter's requests, and compared with what the adapter
 * sends for the same conversation. Responses are built with the SDK's response types and read by the
 * adapter.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import OpenAI from 'openai'
import type { ModelRequest } from 'cordage'
import { AskUserTool } from 'cordage/wire'
import { lookupTool, modelRequest, supportHistory } from '../../../test/servers/model-request.ts'
import { ProviderServer } from '../../../test/servers/provider-server.ts'
import manifest from '../manifest.ts'
import { OpenAIChatModel } from '../openai-model.ts'
import { ChatAnswer, Chunk } from '../response.ts'

const key = 'sk-conf-8b3e1f6a2c'
const env = { CONF_OPENAI_KEY: key }
const request = (over: Partial<ModelRequest> = {}) => modelRequest(supportHistory(), over)
const config = (server: ProviderServer, over: Record<string, unknown> = {}) =>
  manifest.config({ model: 'gpt-test', baseUrl: server.baseUrl, apiKeyEnv: 'CONF_OPENAI_KEY', ...over })

const toolParam = (t: { name: string; description: string; inputSchema: Record<string, unknown> }): OpenAI.ChatCompletionFunctionTool => ({
  type: 'function',
  function: { name: t.name, description: t.description, parameters: t.inputSchema },
})

/** The support exchange as a caller of the SDK writes it. */
const reference: OpenAI.ChatCompletionCreateParamsStreaming = {
  model: 'gpt-test',
  stream: true,
  stream_options: { include_usage: true },
  max_completion_tokens: 300,
  tools: [toolParam(lookupTool), toolParam(AskUserTool)],
  messages: [
    { role: 'system', content: 'You answer support questions.' },
    { role: 'user', content: 'Refund window?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_s1_a1', type: 'function', function: { name: 'lookup_policy', arguments: '{"topic":"refunds"}' } },
        { id: 'call_s1_a2', type: 'function', function: { name: 'lookup_policy', arguments: '{"topic": "ret' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_s1_a1', content: '30 days' },
    // ChatCompletionToolMessageParam has no error flag: a failure is said in the text.
    { role: 'tool', tool_call_id: 'call_s1_a2', content: 'Error: not valid JSON' },
  ],
}

/** The same, for the SDK's stream helper (which sets stream itself). */
const { stream: _, ...streamParams } = reference

describe('model-openai conformance with the openai SDK', () => {
  let server: ProviderServer
  let sdk: OpenAI
  before(async () => {
    server = await ProviderServer.start({ protocol: 'openai', apiKey: key })
    sdk = new OpenAI({ apiKey: key, baseURL: server.baseUrl, maxRetries: 0 })
  })
  after(() => server.close())

  it('sends the body the SDK sends for the same conversation: roles, tool_calls, tool messages, tools, max tokens, stream options', async () => {
    server.queue({ text: 'It is 30 days.' }, { text: 'It is 30 days.' })
    await new OpenAIChatModel(config(server, { maxTokens: 300 }), env).respond(request())
    const ours = server.requests.at(-1)!
    const stream = await sdk.chat.completions.create(reference)
    for await (const _ of stream);
    const theirs = server.requests.at(-1)!
    assert.deepEqual(ours.body, theirs.body)
    assert.deepEqual(ours.body, reference)
    for (const header of ['authorization', 'content-type']) assert.equal(ours.headers[header], theirs.headers[header], header)
  })

  it("is read by the SDK: the recording server's stream is one the official client assembles", async () => {
    server.queue({ text: 'Looking.', toolCalls: [{ name: 'lookup_policy', args: { topic: 'x' } }], usage: { input: 9, output: 4 } })
    const completion = await sdk.chat.completions.stream(streamParams).finalChatCompletion()
    assert.equal(completion.choices[0].finish_reason, 'tool_calls')
    const call = completion.choices[0].message.tool_calls?.[0]
    assert.equal(call?.type === 'function' && call.function.arguments, '{"topic":"x"}')
    assert.equal(completion.usage?.prompt_tokens, 9)
  })

  it('sends one output cap: extraBody.max_tokens (for older servers, without maxTokens) replaces max_completion_tokens, which OpenAI refuses both of', async () => {
    server.queue({ text: 'ok' }, { text: 'ok' })
    await new OpenAIChatModel(config(server, { extraBody: { max_tokens: 200 } }), env).respond(request())
    assert.deepEqual([server.requests.at(-1)!.body.max_tokens, server.requests.at(-1)!.body.max_completion_tokens], [200, undefined])
    await new OpenAIChatModel(config(server, { maxTokens: 300 }), env).respond(request())
    assert.deepEqual([server.requests.at(-1)!.body.max_tokens, server.requests.at(-1)!.body.max_completion_tokens], [undefined, 300])
  })

  it('refuses at start an extraBody field that would replace what the config sets, both caps in extraBody, and keys the adapter always sends', () => {
    const refused = (over: Record<string, unknown>, message: RegExp) =>
      assert.throws(() => new OpenAIChatModel(config(server, over), env), { code: 'plugin_config_invalid', message })
    // The output cap widened behind the config's back: 100000 would have been sent for maxTokens 50.
    refused(
      { maxTokens: 50, extraBody: { max_completion_tokens: 100000 } },
      /maxTokens \(50\) and extraBody.max_completion_tokens \(100000\) both set max_completion_tokens.*Keep maxTokens/,
    )
    // Even the same value: one key says what the cap is.
    refused(
      { maxTokens: 300, extraBody: { max_tokens: 300 } },
      /maxTokens \(300\) and extraBody.max_tokens \(300\) both set max_tokens.*keep extraBody.max_tokens and take maxTokens out/,
    )
    refused({ temperature: 0.2, extraBody: { temperature: 1 } }, /temperature \(0.2\) and extraBody.temperature \(1\) both set temperature/)
    refused({ extraBody: { max_tokens: 200, max_completion_tokens: 200 } }, /both max_tokens and max_completion_tokens/)
    refused({ extraBody: { stream_options: { include_usage: false } } }, /extraBody.stream_options is not taken.*set streamUsage instead/)
    refused({ extraBody: { messages: [] } }, /extraBody.messages is not taken.*context plugin makes the messages/)
    refused({ extraBody: { functions: [] } }, /extraBody.functions is not taken.*tools plugins/)
    refused({ extraBody: { function_call: 'auto' } }, /extraBody.function_call is not taken.*tool_choice/)
  })

  it("sends extraBody's tool_choice and parallel_tool_calls only with tools, which the API refuses them without (a summary)", async () => {
    server.queue({ text: 'step' }, { text: 'A summary.' })
    const model = new OpenAIChatModel(config(server, { extraBody: { tool_choice: 'required', parallel_tool_calls: false } }), env)
    await model.respond(request())
    assert.deepEqual([server.requests.at(-1)!.body.tool_choice, server.requests.at(-1)!.body.parallel_tool_calls], ['required', false])
    await model.respond(request({ tools: [], purpose: 'summary' }))
    const body = server.requests.at(-1)!.body
    assert.deepEqual(['tools' in body, 'tool_choice' in body, 'parallel_tool_calls' in body], [false, false, false])
  })

  it('takes from extraBody a field the config leaves unset', async () => {
    server.queue({ text: 'ok' })
    await new OpenAIChatModel(config(server, { extraBody: { max_completion_tokens: 64, temperature: 0.7, seed: 3 } }), env).respond(
      request(),
    )
    const body = server.requests.at(-1)!.body
    assert.deepEqual([body.max_completion_tokens, body.temperature, body.seed], [64, 0.7, 3])
  })

  it('fails a stream that ends with no choice at all (usage, then [DONE]) transiently: there is no answer, not an empty one', async () => {
    server.queue({ quirks: { usageOnly: true } }, { quirks: { usageOnly: true } })
    await assert.rejects(new OpenAIChatModel(config(server), env).respond(request()), {
      code: 'model_transient',
      message: /ended without any choice/,
    })
    // The SDK assembles it as a completion without choices, not as an empty message.
    const completion = await sdk.chat.completions.stream(streamParams).finalChatCompletion()
    assert.deepEqual(completion.choices, [])
  })

  it('reads chunks shaped by the SDK types: role, content, indexed tool calls, a usage chunk without choices', () => {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test' } as const
    const chunks: OpenAI.ChatCompletionChunk[] = [
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null, logprobs: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'Checking.' }, finish_reason: null }] },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup_policy', arguments: '' } }] },
            finish_reason: null,
          },
        ],
      },
      {
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"topic":"a"}' } }] }, finish_reason: null }],
      },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020, prompt_tokens_details: { cached_tokens: 800 } },
      },
    ]
    const answer = new ChatAnswer()
    for (const c of chunks) answer.add(Chunk.parse(c))
    answer.done = true
    const result = answer.result({ inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 }, 'x', true)
    assert.deepEqual(result.decision, {
      kind: 'tool_calls',
      calls: [{ name: 'lookup_policy', args: { topic: 'a' }, callId: 'call_1' }],
      text: 'Checking.',
    })
    assert.deepEqual(result.usage, { inputTokens: 1000, outputTokens: 20, costUsd: (200 * 2 + 800 * 0.5 + 20 * 8) / 1e6 })
  })
})
