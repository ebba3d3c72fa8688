/**
 * core/wire/client.ts, adapter-config.ts and the reading helpers of HttpCall: what both model adapters
 * set up and do on every call, on their own, against a bare local HTTP server.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { z } from 'zod'
import { CordageError } from '../../core/contracts/errors.ts'
import { AdapterSchema } from '../../core/wire/adapter-config.ts'
import { isJsonAnswer, ProviderClient, type ProviderApi } from '../../core/wire/client.ts'
import { HttpCall } from '../../core/wire/http.ts'
import { Redactor } from '../../core/wire/redact.ts'

const key = 'sk-wire-unit-5e8a1c3d'

/** Answers each request with the status and body queued for it, and records what it got. */
function bareServer() {
  const seen: { url: string; headers: IncomingHttpHeaders; body: unknown }[] = []
  const answers: { status: number; type: string; body: string }[] = []
  const server = createServer((req, res) => {
    let text = ''
    req.on('data', (chunk) => {
      text += chunk
    })
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(text) })
      const answer = answers.shift() ?? { status: 200, type: 'application/json', body: '{}' }
      res.writeHead(answer.status, { 'content-type': answer.type })
      res.end(answer.body)
    })
  })
  return {
    seen,
    answer: (status: number, body: string, type = 'application/json') => answers.push({ status, type, body }),
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

const api: ProviderApi = {
  plugin: 'model-test',
  baseUrlEnv: 'TEST_BASE_URL',
  defaultBaseUrl: 'https://api.example.com',
  path: 'v1/answers',
  auth: (k) => ({ 'x-api-key': k }),
  headers: { 'api-version': '2024-01-01' },
  baseUrlShape: 'a test baseUrl does not end in /v1',
}
const connection = (baseUrl?: string, headers: Record<string, string> = {}) => ({
  model: 'test-model',
  baseUrl,
  apiKeyEnv: 'TEST_KEY',
  timeoutMs: 5000,
  headers,
})
const signal = () => new AbortController().signal
const read = async (response: Response) => (await response.json()) as unknown

describe('ProviderClient', () => {
  const server = bareServer()
  let origin = ''
  before(async () => {
    origin = await server.start()
  })
  after(() => server.close())

  it('posts the body to the base URL and path, with the preset headers, then the API headers, then the key', async () => {
    const client = new ProviderClient(
      api,
      connection(`${origin}/base/`, { 'x-trace': 't1', 'api-version': 'old', 'x-api-key': 'preset' }),
      {
        TEST_KEY: key,
      },
    )
    assert.equal(client.baseUrl, `${origin}/base/`)
    assert.equal(client.url, `${origin}/base/v1/answers`)
    server.answer(200, '{"answer":42}')
    assert.deepEqual(await client.post({ question: 'q' }, signal(), read), { answer: 42 })
    const sent = server.seen.at(-1)!
    assert.equal(sent.url, '/base/v1/answers')
    assert.deepEqual(sent.body, { question: 'q' })
    assert.equal(sent.headers['x-trace'], 't1')
    assert.equal(sent.headers['api-version'], '2024-01-01', "the API's own header wins over the preset's")
    assert.equal(sent.headers['x-api-key'], key, 'the key wins over a header of the same name')
  })

  it('sends no key header when there is no key, and takes the base URL from the variable', async () => {
    const client = new ProviderClient(api, connection(undefined, { 'x-trace': 't2' }), { TEST_BASE_URL: origin })
    assert.equal(client.baseUrl, origin)
    await client.post({}, signal(), read)
    assert.equal(server.seen.at(-1)!.headers['x-api-key'], undefined)
    assert.equal(server.seen.at(-1)!.headers['x-trace'], 't2')
  })

  it('refuses a wrong endpoint when made, not at the first call', () => {
    assert.throws(() => new ProviderClient(api, connection('localhost:8000'), {}), {
      code: 'plugin_config_invalid',
      message: /model-test: baseUrl/,
    })
    assert.throws(() => new ProviderClient(api, connection(), {}), { code: 'plugin_config_invalid', message: /TEST_KEY is not set/ })
  })

  it('names the model, the URL asked, where baseUrl came from and how it should end on a 404', async () => {
    const client = new ProviderClient(api, connection(origin), { TEST_KEY: key })
    server.answer(404, '{"error":{"message":"no such route"}}')
    await assert.rejects(client.post({}, signal(), read), {
      code: 'model_permanent',
      message: `test-model at ${origin} answered 404: no such route (requested ${origin}/v1/answers (baseUrl from the preset); check the model name, and that a test baseUrl does not end in /v1)`,
    })
  })

  it('says which variable the refused key came from on a 401, with the key redacted from what the server echoed', async () => {
    const client = new ProviderClient(api, connection(origin), { TEST_KEY: key })
    server.answer(401, JSON.stringify({ error: { message: `bad key ${key}` } }))
    await assert.rejects(client.post({}, signal(), read), (error: CordageError) => {
      assert.equal(error.code, 'model_permanent')
      assert.match(error.message, /bad key \[redacted\] \(check the key in \$TEST_KEY\)/)
      assert.ok(!error.message.includes(key))
      return true
    })
  })

  it("redacts the key from what the reader throws, and passes the reader's value and errors through", async () => {
    const client = new ProviderClient(api, connection(origin), { TEST_KEY: key })
    await assert.rejects(
      client.post({}, signal(), async () => {
        throw new CordageError('model_invalid_response', `it said ${key}`)
      }),
      { code: 'model_invalid_response', message: 'it said [redacted]' },
    )
    const plain = new Error(`not a CordageError ${key}`)
    await assert.rejects(
      client.post({}, signal(), async () => {
        throw plain
      }),
      (error) => error === plain,
    )
  })

  it("gives the reader the call, labelled with the model and the server, so the reader's errors name them", async () => {
    const client = new ProviderClient(api, connection(origin), { TEST_KEY: key })
    await assert.rejects(
      client.post({}, signal(), async (_response, call) => {
        throw call.incomplete()
      }),
      { code: 'model_transient', message: `test-model at ${origin}: the stream ended before the answer was complete` },
    )
  })
})

describe('isJsonAnswer', () => {
  const response = (type?: string) => new Response('{}', { headers: type ? { 'content-type': type } : {} })

  it('reads JSON when streaming is off, whatever the content type', () => {
    assert.equal(isJsonAnswer(response('text/event-stream'), false), true)
    assert.equal(isJsonAnswer(response(), false), true)
  })

  it('reads a stream when asked for one, unless the server answered with JSON anyway', () => {
    assert.equal(isJsonAnswer(response('text/event-stream'), true), false)
    assert.equal(isJsonAnswer(response(), true), false)
    assert.equal(isJsonAnswer(response('application/json; charset=utf-8'), true), true)
  })
})

describe('HttpCall reading helpers', () => {
  const call = () => new HttpCall({ label: 'm at http://h', timeoutMs: 1000, signal: signal(), redactor: new Redactor([key]) })
  const Body = z.object({ choices: z.array(z.object({ text: z.string() })).min(1) })

  it('parse: JSON, or model_invalid_response with the start of the text, redacted', () => {
    assert.deepEqual(call().parse('{"a":[1]}', 'a stream chunk'), { a: [1] })
    assert.throws(
      () => call().parse(`oops ${key} ${'x'.repeat(200)}`, 'a stream chunk'),
      (error: CordageError) => {
        assert.equal(error.code, 'model_invalid_response')
        assert.equal(
          error.message,
          `m at http://h sent a stream chunk that is not JSON: oops [redacted] ${'x'.repeat(120 - 6 - key.length)}`,
        )
        return true
      },
    )
  })

  it('checked: the value as the schema reads it, or the first place it does not fit', () => {
    assert.deepEqual(call().checked(Body, { choices: [{ text: 'hi' }], extra: 1 }, 'a body that does not fit'), {
      choices: [{ text: 'hi' }],
    })
    assert.throws(() => call().checked(Body, { choices: [{ text: 3 }] }, 'a body that does not fit the format'), {
      code: 'model_invalid_response',
      message:
        /^m at http:\/\/h sent a body that does not fit the format: choices\.0\.text: Invalid input: expected string, received number$/,
    })
  })

  it('incomplete: a transient failure that says the stream ended early', () => {
    const error = call().incomplete()
    assert.equal(error.code, 'model_transient')
    assert.deepEqual(error.data, { reason: 'incomplete_stream' })
  })
})

describe('AdapterSchema', () => {
  it('defaults the key variable to the one given, and never asks for the key itself', () => {
    assert.equal(AdapterSchema.apiKeyEnv('OPENAI_API_KEY')(undefined), 'OPENAI_API_KEY')
    assert.equal(AdapterSchema.apiKeyEnv('OPENAI_API_KEY')('MY_KEY'), 'MY_KEY')
  })

  it('takes a timeout from 1 ms to the most setTimeout takes, 60 s by default, and says what silence is', () => {
    const timeout = AdapterSchema.timeoutMs('stream events')
    assert.equal(timeout(undefined), 60_000)
    assert.equal(timeout(2_147_483_647), 2_147_483_647)
    assert.throws(() => timeout(0))
    assert.throws(() => timeout(2_147_483_648))
    assert.throws(() => timeout(1.5))
    assert.match(String(timeout.meta.description), /between stream events\)\.$/)
  })

  it('streams and offers ask_user unless told not to, and prices at 0 without a table', () => {
    assert.equal(AdapterSchema.stream(undefined), true)
    assert.equal(AdapterSchema.stream(false), false)
    assert.equal(AdapterSchema.askUser(undefined), true)
    assert.deepEqual(AdapterSchema.prices(undefined), { inputPerMTok: 0, outputPerMTok: 0 })
    assert.deepEqual(AdapterSchema.prices({ inputPerMTok: 2, outputPerMTok: 8 }), { inputPerMTok: 2, outputPerMTok: 8 })
  })
})
