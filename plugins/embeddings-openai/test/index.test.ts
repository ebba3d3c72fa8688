import assert from 'node:assert/strict'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import OpenAI from 'openai'
import plugin, { OpenAIEmbeddings } from '../index.ts'

interface Seen {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: any
}

/** A loopback server speaking /v1/embeddings; `answer` decides the body for each request. */
let answer: (body: any) => { status: number; body: unknown } = () => ({ status: 500, body: {} })
const seen: Seen[] = []
const server = createServer((req, res) => {
  let text = ''
  req.on('data', (c) => (text += c))
  req.on('end', () => {
    const body = JSON.parse(text)
    seen.push({ method: req.method!, path: req.url!, headers: req.headers, body })
    const reply = answer(body)
    res.writeHead(reply.status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(reply.body))
  })
})
let baseUrl = ''
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
after(() => server.close())

const vector = (i: number, n = 4) => Array.from({ length: n }, (_, d) => (d === i % n ? 1 : 0.1))
const list = (inputs: string[], n = 4, encode?: (v: number[]) => unknown) => ({
  object: 'list',
  data: inputs.map((_, i) => ({ object: 'embedding', index: i, embedding: encode ? encode(vector(i, n)) : vector(i, n) })),
  model: 'emb',
  usage: { prompt_tokens: 3, total_tokens: 3 },
})
const env = { TEST_KEY: 'sk-secret-1234567890' }
const config = (over: Record<string, unknown> = {}) =>
  plugin.manifest.config!({ model: 'emb', dimensions: 4, baseUrl, apiKeyEnv: 'TEST_KEY', ...over })

test('sends what the official SDK sends for embeddings.create with float encoding', async () => {
  answer = (body) => ({ status: 200, body: list(body.input) })
  seen.length = 0
  const sdk = new OpenAI({ baseURL: baseUrl, apiKey: env.TEST_KEY, maxRetries: 0 })
  await sdk.embeddings.create({ model: 'emb', input: ['open a pull request', 'refund a payment'], encoding_format: 'float' })
  await new OpenAIEmbeddings(config(), env).embed(['open a pull request', 'refund a payment'])
  const [official, ours] = seen
  assert.equal(ours.method, official.method)
  assert.equal(ours.path, official.path)
  assert.deepEqual(ours.body, official.body)
  assert.equal(ours.headers.authorization, official.headers.authorization)
  assert.match(String(ours.headers['content-type']), /^application\/json/)
})

test('reads float and base64 vectors, in index order, unit length', async () => {
  const base64 = (v: number[]) => Buffer.from(new Float32Array(v).buffer).toString('base64')
  for (const encode of [undefined, base64]) {
    answer = (body) => {
      const l = list(body.input, 4, encode)
      l.data.reverse() // the order of `data` is not the order of the inputs: `index` is
      return { status: 200, body: l }
    }
    const out = await new OpenAIEmbeddings(config(), env).embed(['a', 'b', 'c'])
    assert.equal(out.length, 3)
    assert.ok(out[1][1] > out[1][0], 'vector 1 peaks at dimension 1')
    assert.ok(Math.abs(out[2].reduce((s, x) => s + x * x, 0) - 1) < 1e-5)
  }
})

test('batches by batchSize and sends dimensions only when asked', async () => {
  answer = (body) => ({ status: 200, body: list(body.input) })
  seen.length = 0
  await new OpenAIEmbeddings(config({ batchSize: 2, sendDimensions: true }), env).embed(['a', 'b', 'c'])
  assert.deepEqual(
    seen.map((s) => s.body.input),
    [['a', 'b'], ['c']],
  )
  assert.equal(seen[0].body.dimensions, 4)
  seen.length = 0
  await new OpenAIEmbeddings(config(), env).embed(['a'])
  assert.equal('dimensions' in seen[0].body, false)
})

test('an answer that does not fit is refused whole: wrong length, a missing or repeated index, a NaN, a bad shape', async () => {
  const bad: [string, (input: string[]) => unknown, RegExp][] = [
    ['wrong length', (input) => list(input, 3), /has 3 numbers, expected 4/],
    ['missing index', (input) => ({ ...list(input), data: list(input).data.slice(1) }), /not an array|vector 0/],
    ['repeated index', (input) => ({ data: list(input).data.map((d) => ({ ...d, index: 0 })) }), /vector/],
    ['not numbers', (input) => ({ data: list(input).data.map((d) => ({ ...d, embedding: [1, 'x', 0, 0] })) }), /embeddings format/],
    ['no data', () => ({ object: 'list' }), /embeddings format/],
    ['all zeros', (input) => ({ data: input.map((_, i) => ({ index: i, embedding: [0, 0, 0, 0] })) }), /all zeros/],
  ]
  for (const [name, make, message] of bad) {
    answer = (body) => ({ status: 200, body: make(body.input) })
    await assert.rejects(new OpenAIEmbeddings(config(), env).embed(['a', 'b']), message, name)
  }
})

test('a refused key comes back as an error without the key in it', async () => {
  answer = () => ({
    status: 401,
    body: { error: { message: 'Incorrect API key provided: sk-secret-1234567890', type: 'invalid_request_error' } },
  })
  const error = await new OpenAIEmbeddings(config(), env).embed(['a']).then(
    () => assert.fail('expected a refusal'),
    (e: Error) => e,
  )
  assert.doesNotMatch(`${error.message} ${JSON.stringify(error)}`, /sk-secret-1234567890/)
})

test('the config names what is missing or wrong', () => {
  assert.throws(() => plugin.manifest.config!({ model: 'emb' }), /dimensions/)
  assert.throws(() => plugin.manifest.config!({ dimensions: 4 }), /model/)
  assert.throws(() => new OpenAIEmbeddings(config({ baseUrl: 'not a url' }), env))
})
