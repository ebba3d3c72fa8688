/**
 * Review of the issue-5 work (pinning, layered presets, drift, hot reload, playground): each test either
 * proves a bug (it fails until the bug is fixed) or guards a property the review checked.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { request } from 'node:http'
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { loadPreset } from '../core/host/preset.ts'
import { startPlayground, type Playground } from '../playground/server.ts'
import { defaultPresetCopy } from './playground-helpers.ts'
import { refundAnswer, tempDir } from './helpers.ts'

const root = resolve(import.meta.dirname, '..')
const bin = resolve(root, 'core/cli/bin.js')

function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
const jsonEvents = (stdout: string): RunEvent[] => stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))

describe('review issue 5: --set overrides', () => {
  it('--set __proto__.x=1 does not pollute Object.prototype of the process', () => {
    const proto = Object.prototype as Record<string, unknown>
    try {
      try { loadPreset(join(root, 'presets/default.yml'), { sets: ['__proto__.reviewPolluted=1'] }) } catch { /* a refusal is fine */ }
      assert.equal(proto.reviewPolluted, undefined, 'Object.prototype.reviewPolluted was set by --set')
      // And a later, valid load is not poisoned by it.
      assert.doesNotThrow(() => loadPreset(join(root, 'presets/default.yml')))
    } finally {
      delete proto.reviewPolluted
    }
  })

  it('--set constructor.prototype.x=1 is refused as preset_invalid, not a TypeError crash', () => {
    const proto = Object.prototype as Record<string, unknown>
    try {
      assert.throws(() => loadPreset(join(root, 'presets/default.yml'), { sets: ['constructor.prototype.reviewPolluted2=1'] }), (e: any) => e?.code === 'preset_invalid')
      assert.equal(proto.reviewPolluted2, undefined)
    } finally {
      delete proto.reviewPolluted2
    }
  })
})

describe('review issue 5: drift decisions', () => {
  const rules = [
    { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
    { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
  ]
  function writePreset(dir: string, policy: Record<string, unknown>, extra: unknown[] = []): void {
    writeFileSync(join(dir, 'desk.yml'), stringify({
      agents: {
        support: {
          task: 'Refund T-1001 and tell me the window',
          model: { plugin: 'model-scripted', config: { script: [
            { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'first' } },
            { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'second' } },
            { tool: 'lookup_policy', args: { topic: 'refunds' } },
            { final: refundAnswer },
          ] } },
          plugins: [
            { plugin: 'store-sqlite', config: { path: 'runs.db' } },
            'tools-registry', 'context-basic', 'verifier-basic',
            { plugin: 'policy-rules', config: { default: 'deny', rules }, ...policy },
            { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
            ...extra,
          ],
        },
      },
    }))
  }

  it('a run that accepted changed plugin files, resumed again on the files it started with, records a drift decision (it last ran the edited ones)', () => {
    const dir = tempDir()
    const greeter = join(dir, 'greeter')
    cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), greeter, { recursive: true })
    writeFileSync(join(greeter, 'package.json'), '{ "type": "module" }\n')
    const original = readFileSync(join(greeter, 'index.ts'), 'utf8')
    writePreset(dir, { version: '^1.0.0' }, [{ path: 'greeter' }])
    const started = cordage(['run', '--preset', 'desk.yml', '--json'], dir)
    assert.equal(started.code, 5, started.stderr)
    const runId = jsonEvents(started.stdout)[0].runId
    // Edit the plugin, and accept the drift: the run goes on under the edited files and pauses again.
    writeFileSync(join(greeter, 'index.ts'), original + '\n// edited after the run started\n')
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--accept-drift'], dir)
    assert.equal(accepted.code, 5, accepted.stderr)
    // Put the original files back: the run's code changes again (edited → original); that must be a decision.
    writeFileSync(join(greeter, 'index.ts'), original)
    const back = cordage(['approve', runId, 's2.a1', '--preset', 'desk.yml'], dir)
    const read = cordage(['events', runId, '--preset', 'desk.yml', '--json'], dir)
    const drifts = jsonEvents(read.stdout).filter((e) => e.type === 'run/version-drift').map((e) => (e.data as any))
    assert.equal(drifts.length, 2, `the switch back to the original greeter files went unrecorded (approve exit ${back.code}); drift events: ${JSON.stringify(drifts)}`)
  })

  it('a run that accepted changed plugin files is not refused again for the same, already accepted, files', () => {
    const dir = tempDir()
    const greeter = join(dir, 'greeter')
    cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), greeter, { recursive: true })
    writeFileSync(join(greeter, 'package.json'), '{ "type": "module" }\n')
    writePreset(dir, { version: '^1.0.0' }, [{ path: 'greeter' }])
    const started = cordage(['run', '--preset', 'desk.yml', '--json'], dir)
    assert.equal(started.code, 5, started.stderr)
    const runId = jsonEvents(started.stdout)[0].runId
    appendFileSync(join(greeter, 'index.ts'), '\n// edited after the run started\n')
    const accepted = cordage(['approve', runId, 's1.a1', '--preset', 'desk.yml', '--accept-drift'], dir)
    assert.equal(accepted.code, 5, accepted.stderr)
    // Nothing changed since the accepted resume; the run already runs these files.
    const again = cordage(['approve', runId, 's2.a1', '--preset', 'desk.yml'], dir)
    assert.equal(again.code, 0, `refused again for the drift it already accepted: ${again.stderr}`)
  })
})

describe('review issue 5: playground security', () => {
  let playground: Playground
  let base: string
  const errors: unknown[] = []
  before(async () => {
    playground = await startPlayground({ preset: defaultPresetCopy(), port: 0, onError: (e) => errors.push(e) })
    base = playground.origin.replace(/\/$/, '')
  })
  after(async () => { await playground.close() })

  const raw = (path: string, options: { method?: string; headers?: Record<string, string>; body?: string }) => new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((done, fail) => {
    const req = request(base + path, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c }).on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', fail)
    req.end(options.body)
  })

  it('guard: a cross-origin page cannot start a run (preflight gets no CORS grant; simple bodies are refused; rebinding Host refused)', async () => {
    const host = new URL(base).host
    const preflight = await raw('/api/runs', { method: 'OPTIONS', headers: { host, origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } })
    assert.ok(preflight.status >= 400, String(preflight.status))
    assert.equal(preflight.headers['access-control-allow-origin'], undefined)
    // Even with the token (which a page on another origin does not have): a foreign Origin is refused.
    const auth = { authorization: `Bearer ${playground.token}` }
    const simple = await raw('/api/runs', { method: 'POST', headers: { host, ...auth, origin: 'http://evil.example', 'content-type': 'text/plain' }, body: JSON.stringify({ agent: 'support' }) })
    assert.equal(simple.status, 403)
    const form = await raw('/api/runs', { method: 'POST', headers: { host, ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'agent=support' })
    assert.equal(form.status, 415)
    const rebound = await raw('/api/runs', { method: 'POST', headers: { host: `evil.example:${playground.port}`, ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'support' }) })
    assert.equal(rebound.status, 403)
    const runs = JSON.parse((await raw('/api/runs', { headers: { host, ...auth } })).text)
    assert.deepEqual(runs.runs, [])
  })

  it('guard: static files never leave playground/public (encoded dot segments, backslashes, absolute paths)', async () => {
    const host = new URL(base).host
    for (const path of ['/..%2fpackage.json', '/%2e%2e%2f%2e%2e%2fpackage.json', '/..%5c..%5cpackage.json', '/%2fetc%2fpasswd', '/public/../../package.json', '//etc/passwd']) {
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
