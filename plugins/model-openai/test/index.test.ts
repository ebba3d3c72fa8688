import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { ContextMessage, ModelDelta, ModelRequest, ToolView } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { tempDir } from '../../../test/temp.ts'
import { lookupTool, modelRequest, supportHistory } from '../../../test/servers/model-request.ts'
import { ProviderServer } from '../../../test/servers/provider-server.ts'
import manifest from '../manifest.ts'
import { OpenAIChatModel } from '../openai-model.ts'

const key = 'sk-unit-4c1d8e2f9a7b'
const env = { UNIT_OPENAI_KEY: key }
const history = supportHistory()
const request = (over: Partial<ModelRequest> = {}) => modelRequest(history, over)
const config = (server: ProviderServer, over: Record<string, unknown> = {}) =>
  manifest.config({ model: 'gpt-test', baseUrl: server.baseUrl, apiKeyEnv: 'UNIT_OPENAI_KEY', ...over })

describe('model-openai', () => {
  let server: ProviderServer
  before(async () => {
    server = await ProviderServer.start({ protocol: 'openai', apiKey: key })
  })
  after(() => server.close())

  it('sends the projection as Chat Completions messages, pairing each tool message with its call', async () => {
    server.queue({ text: 'It is 30 days.' })
    const model = new OpenAIChatModel(
      config(server, { maxTokens: 300, temperature: 0.2, headers: { 'OpenAI-Organization': 'org-1' }, extraBody: { seed: 7 } }),
      env,
    )
    const response = await model.respond(request())
    assert.deepEqual(response.decision, { kind: 'final', text: 'It is 30 days.' })
    const sent = server.requests.at(-1)!
    assert.equal(sent.headers.authorization, `Bearer ${key}`)
    assert.equal(sent.headers['openai-organization'], 'org-1')
    assert.deepEqual(sent.body.messages, [
      { role: 'system', content: 'You answer support questions.' },
      { role: 'user', content: 'Refund window?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_s1_a1', type: 'function', function: { name: 'lookup_policy', arguments: '{"topic":"refunds"}' } },
          // What the model wrote, even though it did not parse: the model sees its own mistake.
          { id: 'call_s1_a2', type: 'function', function: { name: 'lookup_policy', arguments: '{"topic": "ret' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_s1_a1', content: '30 days' },
      { role: 'tool', tool_call_id: 'call_s1_a2', content: 'Error: not valid JSON' },
    ])
    assert.deepEqual(
      sent.body.tools.map((t: { function: { name: string } }) => t.function.name),
      ['lookup_policy', 'ask_user'],
    )
    assert.deepEqual(sent.body.tools[0], {
      type: 'function',
      function: { name: 'lookup_policy', description: 'Find the policy', parameters: lookupTool.inputSchema },
    })
    assert.equal(sent.body.stream, true)
    assert.deepEqual(sent.body.stream_options, { include_usage: true })
    assert.equal(sent.body.max_completion_tokens, 300)
    assert.equal(sent.body.temperature, 0.2)
    assert.equal(sent.body.seed, 7)
  })

  it('leaves out ask_user when told to, or when a real tool has that name', async () => {
    server.queue({ text: 'a' }, { text: 'b' })
    await new OpenAIChatModel(config(server, { askUser: false }), env).respond(request())
    assert.deepEqual(
      server.requests.at(-1)!.body.tools.map((t: { function: { name: string } }) => t.function.name),
      ['lookup_policy'],
    )
    const realAskUser: ToolView = { name: 'ask_user', description: 'a real tool', inputSchema: { type: 'object' } }
    await new OpenAIChatModel(config(server), env).respond(request({ tools: [realAskUser] }))
    assert.deepEqual(
      server.requests.at(-1)!.body.tools.map((t: { function: { description: string } }) => t.function.description),
      ['a real tool'],
    )
  })

  it('reads a JSON answer from a server that ignores stream, and asks no usage when streamUsage is off', async () => {
    server.queue(
      { toolCalls: [{ name: 'lookup_policy', args: { topic: 'x' } }], ignoreStream: true, usage: { input: 7, output: 3 } },
      { text: 'ok' },
    )
    const model = new OpenAIChatModel(config(server), env)
    const response = await model.respond(request())
    assert.deepEqual(response.decision, {
      kind: 'tool_calls',
      calls: [{ name: 'lookup_policy', args: { topic: 'x' }, callId: `call_${server.requests.length}_0` }],
    })
    assert.deepEqual(response.usage, { inputTokens: 7, outputTokens: 3, costUsd: 0 })
    const quiet = await new OpenAIChatModel(config(server, { streamUsage: false }), env).respond(request())
    assert.equal(server.requests.at(-1)!.body.stream_options, undefined)
    assert.deepEqual(quiet.usage, { inputTokens: 0, outputTokens: 0, costUsd: 0 })
  })

  it('prices cached input tokens at the cached price', async () => {
    server.queue({ text: 'ok', usage: { input: 1_000_000, cachedInput: 800_000, output: 0 } })
    const model = new OpenAIChatModel(config(server, { prices: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 } }), env)
    const { usage } = await model.respond(request())
    assert.equal(usage.inputTokens, 1_000_000)
    assert.equal(usage.costUsd, 0.2 * 2 + 0.8 * 0.5)
  })

  it('passes text and argument pieces to onDelta as they arrive', async () => {
    server.queue({ text: 'Checking.', toolCalls: [{ name: 'lookup_policy', args: { topic: 'refunds' } }], chunkChars: 4 })
    const deltas: ModelDelta[] = []
    await new OpenAIChatModel(config(server), env).respond(request({ onDelta: (d) => deltas.push(d) }))
    assert.equal(deltas.map((d) => d.text ?? '').join(''), 'Checking.')
    assert.equal(deltas.find((d) => d.toolCall?.name)?.toolCall?.name, 'lookup_policy')
    assert.equal(deltas.map((d) => d.toolCall?.argsDelta ?? '').join(''), '{"topic":"refunds"}')
  })

  it('takes the base URL from OPENAI_BASE_URL when the preset gives none', () => {
    const model = new OpenAIChatModel(manifest.config({ model: 'm' }), { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' })
    assert.equal(model.baseUrl, 'http://127.0.0.1:11434/v1')
  })

  it('refuses to start without a key for api.openai.com, naming the variable; a local server needs none', async () => {
    const dir = tempDir()
    const file = join(dir, 'p.yml')
    writeFileSync(
      file,
      stringify({
        cordage: 1,
        agents: {
          a: {
            task: 't',
            model: { plugin: 'model-openai', config: { model: 'gpt-4.1-mini', apiKeyEnv: 'CORDAGE_UNSET_KEY' } },
            plugins: ['store-memory', 'tools-registry', 'context-basic', 'verifier-basic', 'policy-rules'],
          },
        },
      }),
    )
    await assert.rejects(Cordage.fromPreset(file), /CORDAGE_UNSET_KEY is not set/)
    assert.doesNotThrow(() => new OpenAIChatModel(manifest.config({ model: 'llama3', baseUrl: 'http://127.0.0.1:11434/v1' }), {}))
  })

  it('says what is wrong with a baseUrl that is not a URL', () => {
    assert.throws(() => new OpenAIChatModel(manifest.config({ model: 'm', baseUrl: 'localhost:8000' }), {}), /must start with http/)
    assert.throws(() => new OpenAIChatModel(manifest.config({ model: 'm', baseUrl: 'not a url' }), {}), /is not a URL; write it in full/)
  })

  it('fails a content-filtered answer permanently, and an answer cut before its finish reason transiently', async () => {
    server.queue({ text: 'partial', stopReason: 'content_filter' }, { text: 'partial', fault: { dropAfter: 2 } })
    const model = new OpenAIChatModel(config(server), env)
    await assert.rejects(model.respond(request()), { code: 'model_permanent', message: /content_filter/ })
    await assert.rejects(model.respond(request()), { code: 'model_transient' })
  })

  it('reads what compatible servers do differently: repeated names, calls without index, null usage', async () => {
    const calls = [
      { name: 'lookup_policy', args: { topic: 'a' } },
      { name: 'lookup_policy', args: { topic: 'b' } },
    ]
    server.queue(
      { toolCalls: calls, quirks: { repeatNames: true, nullUsage: true }, usage: { input: 9, output: 4 } },
      { toolCalls: calls, quirks: { noIndex: true } },
    )
    const model = new OpenAIChatModel(config(server), env)
    for (const expected of [
      [9, 4],
      [50, 10],
    ]) {
      const { decision, usage } = await model.respond(request())
      assert.equal(decision.kind, 'tool_calls')
      assert.deepEqual(decision.kind === 'tool_calls' && decision.calls.map((c) => [c.name, c.args, c.argsError]), [
        ['lookup_policy', { topic: 'a' }, undefined],
        ['lookup_policy', { topic: 'b' }, undefined],
      ])
      assert.deepEqual([usage.inputTokens, usage.outputTokens], expected)
    }
  })

  it('sends a note that arrived while calls were open after their results, as the API requires', async () => {
    server.queue({ text: 'ok' })
    const interrupted: ContextMessage[] = [
      history[1],
      history[2],
      history[3],
      { role: 'user', text: 'Also check returns.', source: 10 },
      { role: 'tool', actionId: 's1.a2', text: 'Error: not valid JSON', source: 11 },
    ]
    await new OpenAIChatModel(config(server), env).respond(request({ messages: interrupted }))
    assert.deepEqual(
      server.requests.at(-1)!.body.messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'tool', 'tool', 'user'],
    )
  })

  it('fails a text answer cut off at the output limit rather than take it for a final one', async () => {
    server.queue({ text: 'Damaged items can be refu', stopReason: 'length' })
    await assert.rejects(new OpenAIChatModel(config(server), env).respond(request()), {
      code: 'model_permanent',
      message: /cut off.*raise maxTokens/,
    })
  })

  it('does not retry a status the server says not to retry (x-should-retry: false)', async () => {
    const plainServer = (await import('node:http')).createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json', 'x-should-retry': 'false' })
      res.end(JSON.stringify({ error: { message: 'broken for good', type: 'server_error' } }))
    })
    await new Promise<void>((r) => plainServer.listen(0, '127.0.0.1', r))
    const port = (plainServer.address() as { port: number }).port
    try {
      await assert.rejects(
        new OpenAIChatModel(manifest.config({ model: 'm', baseUrl: `http://127.0.0.1:${port}/v1` }), {}).respond(request()),
        { code: 'model_permanent', message: /500: broken for good/ },
      )
    } finally {
      plainServer.close()
    }
  })

  it('names the URL it asked and where baseUrl came from on a 404', async () => {
    const model = new OpenAIChatModel(manifest.config({ model: 'm' }), { OPENAI_BASE_URL: server.origin })
    await assert.rejects(model.respond(request()), {
      code: 'model_permanent',
      message: new RegExp(`404.*requested ${server.origin}/chat/completions \\(baseUrl from \\$OPENAI_BASE_URL\\).*ends in /v1`),
    })
  })
})
