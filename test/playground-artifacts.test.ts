/**
 * Issue 12's proof that a guardrail redaction is absent from the UI view: the playground serves a run
 * whose tool output the guardrail redacted (a card number) and whose other output was a 5 MB artifact;
 * every UI route (runs, run, events, the SSE replay, the trace, each step's detail and context, the
 * artifact list and every page of the artifact) is fetched, and the raw card number is in none of
 * them. The audit-only artifact is refused (403 artifact_forbidden); the raw value exists only
 * through `cordage artifact REF --audit`.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { main } from '../core/cli/main.ts'
import { testPreset } from '../core/testing/index.ts'
import { startPlayground, type Playground } from '../playground/server.ts'
import { CardNumber, CustomerRecord, FinalCode, ReportBytes } from './fixtures/plugins/artifact-desk/index.ts'
import { tempDir } from './temp.ts'
import { bearer, readSse } from './playground-helpers.ts'

const auditRef = `audit:sha256:${createHash('sha256').update(CustomerRecord).digest('hex')}`
/** The card number as the tool returned it, and its digits alone: neither may be served. */
const raw = [CardNumber, CardNumber.replaceAll(' ', '')]

describe('the playground hides what a guardrail redacted', () => {
  let playground: Playground
  let preset: string
  let runId: string
  const bodies: { path: string; text: string }[] = []

  const get = async (path: string) => {
    const response = await fetch(`${playground.origin}${path}`, { headers: bearer(playground) })
    const text = await response.text()
    bodies.push({ path, text })
    return { status: response.status, body: JSON.parse(text) as any }
  }

  before(async () => {
    const dir = tempDir('cordage-playground-artifacts-')
    const p = testPreset({
      script: [{ tool: 'big_report' }, { tool: 'customer_record' }, { final: 'The record is on file.' }],
      rules: [{ id: 'all', verdict: 'allow', match: { tool: '*' } }],
      plugins: [
        { plugin: 'verifier-basic', config: { minCount: 0 } },
        'artifacts',
        { path: resolve('test/fixtures/plugins/artifact-desk') },
        'guardrails',
      ],
    })
    const agent = (p.agents as Record<string, Record<string, unknown>>).agent
    ;(agent.plugins as unknown[])[0] = { plugin: 'store-sqlite', config: { path: join(dir, 'runs.db') } }
    agent.audit = { keepRedacted: true }
    preset = join(dir, 'preset.yml')
    writeFileSync(preset, stringify(p))
    playground = await startPlayground({ preset, port: 0, onError: (e) => assert.fail(e as Error) })
    const run = await playground.app.agent('agent').run()
    assert.equal(run.status, 'COMPLETED', run.reason)
    runId = run.runId
  })

  after(() => playground?.close())

  it('serves no route of the UI view with the raw value, and refuses the audit-only artifact', async () => {
    assert.equal((await get('/api/runs')).status, 200)
    assert.equal((await get(`/api/runs/${runId}`)).status, 200)
    const { body: log } = await get(`/api/runs/${runId}/events`)
    const record = log.events.find((e: any) => e.type === 'tool/end' && e.data.tool === 'customer_record')
    assert.deepEqual(record.data.redacted.guard, 'card')
    assert.equal(record.data.redacted.audit.ref, auditRef)
    const report = log.events.find((e: any) => e.type === 'tool/end' && e.data.tool === 'big_report')
    assert.equal(report.data.output, undefined)
    const frames = await readSse(`${playground.origin}/api/runs/${runId}/stream?after=0`, bearer(playground), (f) => f.event === 'end')
    bodies.push({ path: 'stream', text: JSON.stringify(frames) })
    assert.ok(frames.some((f) => f.data?.type === 'run/end'))
    assert.equal((await get(`/api/runs/${runId}/trace`)).status, 200)
    for (const step of ['s1', 's2', 's3']) {
      const detail = await get(`/api/runs/${runId}/steps/${step}`)
      assert.equal(detail.status, 200)
      assert.equal((await get(`/api/runs/${runId}/steps/${step}/context`)).status, 200)
    }
    const { body: step1 } = await get(`/api/runs/${runId}/steps/s1`)
    assert.match(JSON.stringify(step1), /"artifact":\{"ref":"artifact:sha256:[0-9a-f]{64}"/)

    const { body: listed } = await get(`/api/runs/${runId}/artifacts`)
    assert.deepEqual(
      listed.artifacts.map((a: any) => [a.bytes, a.visibility]),
      [[ReportBytes, 'ui']],
    )
    assert.equal(listed.auditOnly, 1)
    // Every page of the artifact the UI may read.
    let offset: number | undefined = 0
    let text = ''
    while (offset !== undefined) {
      const { status, body } = await get(`/api/artifacts/${listed.artifacts[0].ref}?offset=${offset}&length=1048576`)
      assert.equal(status, 200)
      text += body.text
      offset = body.next
    }
    assert.equal(text.length, ReportBytes)
    assert.ok(text.endsWith(`${FinalCode}\n`))

    const forbidden = await get(`/api/artifacts/${encodeURIComponent(auditRef)}`)
    assert.equal(forbidden.status, 403)
    assert.equal(forbidden.body.error.code, 'artifact_forbidden')
    const unknown = await get(`/api/artifacts/artifact:sha256:${'0'.repeat(64)}`)
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'artifact_not_found'])
    const noToken = await fetch(`${playground.origin}/api/runs/${runId}/artifacts`)
    assert.equal(noToken.status, 401)

    for (const { path, text } of bodies) for (const value of raw) assert.ok(!text.includes(value), `${path} serves the raw value ${value}`)
  })

  it('keeps the raw value for the audit view alone: cordage artifact REF --audit', async () => {
    const cli = async (...args: string[]) => {
      const out: string[] = []
      const err: string[] = []
      const code = await main([...args, '--preset', preset], { out: (l) => out.push(l), err: (l) => err.push(l) })
      return { code, out: out.join('\n'), err: err.join('\n') }
    }
    const ui = await cli('artifact', auditRef)
    assert.match(ui.err, /artifact_forbidden/)
    const events = await cli('events', runId, '--json')
    assert.equal(events.code, 0, events.err)
    for (const value of raw) assert.ok(!events.out.includes(value) && !ui.out.includes(value))
    const audit = await cli('artifact', auditRef, '--audit')
    assert.equal(audit.code, 0, audit.err)
    assert.equal(audit.out, CustomerRecord)
  })
})
