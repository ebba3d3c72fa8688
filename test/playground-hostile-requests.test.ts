/**
 * What a hostile page or client gets from a running playground: a page on another origin cannot start
 * a run, static files never leave playground/public, and a malformed URL is the client's error, not an
 * internal one.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { startPlayground, type Playground } from '../playground/server.ts'
import { defaultPresetCopy } from './playground-helpers.ts'

describe('the playground refuses hostile requests', () => {
  let playground: Playground
  let base: string
  const errors: unknown[] = []
  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, onError: (e) => errors.push(e) })
    base = playground.origin.replace(/\/$/, '')
  })
  after(async () => {
    await playground.close()
  })

  const raw = (path: string, options: { method?: string; headers?: Record<string, string>; body?: string }) =>
    new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((done, fail) => {
      const req = request(base + path, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
        let text = ''
        res
          .on('data', (c) => {
            text += c
          })
          .on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, text }))
      })
      req.on('error', fail)
      req.end(options.body)
    })

  it('a cross-origin page cannot start a run (preflight gets no CORS grant; simple bodies are refused; rebinding Host refused)', async () => {
    const host = new URL(base).host
    const preflight = await raw('/api/runs', {
      method: 'OPTIONS',
      headers: {
        host,
        origin: 'http://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    })
    assert.ok(preflight.status >= 400, String(preflight.status))
    assert.equal(preflight.headers['access-control-allow-origin'], undefined)
    // Even with the token (which a page on another origin does not have): a foreign Origin is refused.
    const auth = { authorization: `Bearer ${playground.token}` }
    const simple = await raw('/api/runs', {
      method: 'POST',
      headers: { host, ...auth, origin: 'http://evil.example', 'content-type': 'text/plain' },
      body: JSON.stringify({ agent: 'support' }),
    })
    assert.equal(simple.status, 403)
    const form = await raw('/api/runs', {
      method: 'POST',
      headers: { host, ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'agent=support',
    })
    assert.equal(form.status, 415)
    const rebound = await raw('/api/runs', {
      method: 'POST',
      headers: { host: `evil.example:${playground.port}`, ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'support' }),
    })
    assert.equal(rebound.status, 403)
    const runs = JSON.parse((await raw('/api/runs', { headers: { host, ...auth } })).text)
    assert.deepEqual(runs.runs, [])
  })

  it('static files never leave playground/public (encoded dot segments, backslashes, absolute paths)', async () => {
    const host = new URL(base).host
    for (const path of [
      '/..%2fpackage.json',
      '/%2e%2e%2f%2e%2e%2fpackage.json',
      '/..%5c..%5cpackage.json',
      '/%2fetc%2fpasswd',
      '/public/../../package.json',
      '//etc/passwd',
    ]) {
      const res = await raw(path, { headers: { host } })
      assert.equal(res.status, 404, `${path}: ${res.status} ${res.text.slice(0, 80)}`)
    }
  })

  it('a malformed percent-encoding is a 400/404, not a 500 reported as an internal error', async () => {
    const host = new URL(base).host
    const before = errors.length
    const page = await raw('/%E0%A4%A', { headers: { host } })
    const api = await raw('/api/runs/%E0%A4%A', { headers: { host, authorization: `Bearer ${playground.token}` } })
    assert.ok(page.status === 400 || page.status === 404, `page: ${page.status} ${page.text}`)
    assert.ok(api.status === 400 || api.status === 404, `api: ${api.status} ${api.text}`)
    assert.equal(errors.length, before, 'a bad URL from a client was reported as an internal error')
  })
})
