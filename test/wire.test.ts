/**
 * cordage/wire, the pieces model adapters share, on their own: the cases an adapter test would hit
 * only by luck (every split point of a stream, each Retry-After form, keys with stray whitespace).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { costOf, endpoint, joinUrl, parseArgs, readSse, Redactor, retryAfterMs, shownUrl } from 'cordage/wire'

async function collect(parts: string[]) {
  const bytes = parts.map((p) => new TextEncoder().encode(p))
  async function* source() {
    for (const b of bytes) yield b
  }
  const out = []
  for await (const m of readSse(source())) out.push(m)
  return out
}

describe('readSse', () => {
  const stream =
    'event: message_start\r\ndata: {"a":"é"}\r\n\r\n: a comment\ndata: line 1\ndata:line 2\n\ndata: {"b":1}\r\rdata: [DONE]\n\n'
  const expected = [
    { event: 'message_start', data: '{"a":"é"}' },
    { event: 'message', data: 'line 1\nline 2' },
    { event: 'message', data: '{"b":1}' },
    { event: 'message', data: '[DONE]' },
  ]

  it('reads CR, LF and CRLF line ends, comments and multi-line data', async () => {
    assert.deepEqual(await collect([stream]), expected)
  })

  it('gives the same messages however the bytes are split (inside a CRLF or a multibyte character too)', async () => {
    const bytes = new TextEncoder().encode(stream)
    for (let i = 1; i < bytes.length; i++) {
      const decoder = new TextDecoder()
      // Split the bytes, not the characters: feed raw chunks through a byte-level source.
      async function* source() {
        yield bytes.slice(0, i)
        yield bytes.slice(i)
      }
      const out = []
      for await (const m of readSse(source())) out.push(m)
      assert.deepEqual(out, expected, `split at byte ${i} (${JSON.stringify(decoder.decode(bytes.slice(0, i)).slice(-4))})`)
    }
  })

  it('drops a message left without its closing blank line', async () => {
    assert.deepEqual(await collect(['data: whole\n\ndata: cut']), [{ event: 'message', data: 'whole' }])
  })
})

describe('retryAfterMs', () => {
  const headers = (h: Record<string, string>) => new Headers(h)
  it('reads milliseconds, seconds and an HTTP date, and ignores what it cannot read', () => {
    assert.equal(retryAfterMs(headers({ 'retry-after-ms': '1500', 'retry-after': '9' })), 1500)
    assert.equal(retryAfterMs(headers({ 'retry-after': '2' })), 2000)
    const now = Date.parse('2026-11-29T12:00:00Z')
    assert.equal(retryAfterMs(headers({ 'retry-after': 'Sun, 29 Nov 2026 12:00:30 GMT' }), now), 30_000)
    assert.equal(retryAfterMs(headers({ 'retry-after': 'Sun, 29 Nov 2026 11:00:00 GMT' }), now), 0)
    assert.equal(retryAfterMs(headers({ 'retry-after': 'soon' })), undefined)
    assert.equal(retryAfterMs(headers({})), undefined)
  })
})

describe('Redactor', () => {
  it('replaces every occurrence of each secret, and leaves short values alone', () => {
    const r = new Redactor(['sk-abcdef123456', 'abc', undefined])
    assert.equal(r.text('key sk-abcdef123456 and again sk-abcdef123456; abc stays'), 'key [redacted] and again [redacted]; abc stays')
  })
})

describe('costOf', () => {
  it('prices each kind of token, cached and cache writes defaulting to the input price', () => {
    assert.equal(costOf({ input: 1_000_000, output: 1_000_000 }, { inputPerMTok: 2, outputPerMTok: 8 }), 10)
    assert.equal(costOf({ input: 0, cachedInput: 1_000_000, cacheWrite: 1_000_000, output: 0 }, { inputPerMTok: 2, outputPerMTok: 8 }), 4)
    assert.equal(
      costOf({ input: 0, cachedInput: 1_000_000, output: 0 }, { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 }),
      0.5,
    )
  })
})

describe('urls', () => {
  it('joins a path onto a base URL, keeping a query a query', () => {
    assert.equal(joinUrl('http://h:1/v1/', 'chat/completions'), 'http://h:1/v1/chat/completions')
    assert.equal(joinUrl('https://gw.example/v1?key=abc', '/chat/completions'), 'https://gw.example/v1/chat/completions?key=abc')
  })
  it('shows a URL without user, password or query', () => {
    assert.equal(shownUrl('https://user:pw@gw.example/v1/?key=abc'), 'https://gw.example/v1')
  })
})

describe('parseArgs', () => {
  it('takes a JSON object, "" as no arguments, and keeps anything else as raw text with the reason', () => {
    assert.deepEqual(parseArgs('{"a":1}'), { args: { a: 1 } })
    assert.deepEqual(parseArgs(' '), { args: {} })
    assert.equal(parseArgs('[1]').argsError, 'the arguments must be a JSON object')
    const broken = parseArgs('{"a": ')
    assert.equal(broken.args, '{"a": ')
    assert.ok(broken.argsError)
  })
})

describe('endpoint', () => {
  const base = {
    plugin: 'model-openai',
    baseUrlEnv: 'OPENAI_BASE_URL',
    defaultBaseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
  }

  it('trims the key, and takes an empty base URL variable for unset', () => {
    const found = endpoint({ ...base, env: { OPENAI_API_KEY: '  sk-live-123456789\n', OPENAI_BASE_URL: '' } })
    assert.equal(found.key, 'sk-live-123456789')
    assert.equal(found.baseUrl, 'https://api.openai.com/v1')
    assert.equal(found.baseUrlFrom, 'the default')
  })

  it('refuses a key no HTTP header can carry, without showing it', () => {
    assert.throws(
      () => endpoint({ ...base, env: { OPENAI_API_KEY: 'sk-live-12\n3456789' } }),
      (e: Error) => /cannot carry/.test(e.message) && !e.message.includes('sk-live'),
    )
  })

  it('refuses an apiKeyEnv that is not a variable name without echoing it (it may be the key itself)', () => {
    assert.throws(
      () => endpoint({ ...base, apiKeyEnv: 'sk-proj-REALKEY-123', env: {} }),
      (e: Error) => /must be the name of an environment variable/.test(e.message) && !e.message.includes('REALKEY'),
    )
  })

  it('says where a bad base URL came from', () => {
    assert.throws(
      () => endpoint({ ...base, env: { OPENAI_BASE_URL: 'localhost:4010/v1' } }),
      /from \$OPENAI_BASE_URL\) must start with http/,
    )
  })
})
