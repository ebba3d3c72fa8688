/**
 * Issue 12's proof for artifacts: a 5 MB tool result is stored once as an artifact (the run's events
 * hold its reference, not its bytes), the model pages through it with read_artifact (each offset the
 * `next` of the read before, then the last page) and answers with what only the last page holds;
 * read_artifact refuses another run's artifact and an audit-only one; a redacted result is stored
 * redacted, its raw form kept (audit-only) only when the preset says so.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { eventsOf, startApp, testPreset, type ScriptStep, type TestApp } from '../core/testing/index.ts'
import { bigReport, CardNumber, CustomerRecord, FinalCode, ReportBytes } from './fixtures/plugins/artifact-desk/index.ts'
import Database from 'better-sqlite3'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stringify } from 'yaml'
import { main } from '../core/cli/main.ts'
import { tempDir } from './temp.ts'
import sqliteManifest from '../plugins/store-sqlite/manifest.ts'
import postgresManifest from '../plugins/store-postgres/manifest.ts'

/** Skip a store whose plugin does not keep artifacts yet (store contract before 2.3.0). */
const keepsArtifacts = (m: { provides?: Record<string, string> }) =>
  (m.provides?.store ?? '0').localeCompare('2.3.0', undefined, { numeric: true }) >= 0 ? undefined : 'this store keeps no artifacts yet'

const desk = { path: 'test/fixtures/plugins/artifact-desk' }
const allow = [{ id: 'all', verdict: 'allow', match: { tool: '*' } }]
const sha = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')
const reportRef = `artifact:sha256:${sha(bigReport())}`
const Page = 65_536
/** The head the model sees (observationChars, 4000 by default) ends where the first read starts. */
const Head = 4000

interface StoreCase {
  name: string
  entry: () => unknown
  skip?: string
  /** Blobs the store holds, counted in its own tables (not through the contract). */
  blobs?: () => number
}

let sqlitePath = ''

const stores: StoreCase[] = [
  { name: 'store-memory', entry: () => 'store-memory' },
  {
    name: 'store-sqlite',
    entry: () => {
      sqlitePath = `${tempDir()}/runs.db`
      return { plugin: 'store-sqlite', config: { path: sqlitePath } }
    },
    skip: keepsArtifacts(sqliteManifest),
    blobs: () => {
      const db = new Database(sqlitePath, { readonly: true })
      try {
        return (db.prepare('SELECT count(*) AS n FROM artifact_blobs').get() as { n: number }).n
      } finally {
        db.close()
      }
    },
  },
  {
    name: 'store-postgres',
    entry: () => {
      const schema = `art_${process.pid}_${Date.now()}`
      pgSchemas.push(schema)
      return { plugin: 'store-postgres', config: { url: process.env.CORDAGE_PG_URL, schema } }
    },
    skip: process.env.CORDAGE_PG_URL ? keepsArtifacts(postgresManifest) : 'CORDAGE_PG_URL is not set',
  },
]

function preset(store: StoreCase, script: ScriptStep[], extra: Record<string, unknown> = {}, plugins: unknown[] = [], citations = 0) {
  const verifier = { plugin: 'verifier-basic', config: { minCount: citations } }
  const p = testPreset({ script, rules: allow, plugins: [verifier, 'artifacts', desk, ...(plugins as never[])], budgets: { maxSteps: 12 } })
  const agent = (p.agents as Record<string, Record<string, unknown>>).agent
  ;(agent.plugins as unknown[])[0] = store.entry()
  Object.assign(agent, extra)
  return p
}

const apps: TestApp[] = []
const pgSchemas: string[] = []
after(async () => {
  for (const app of apps) await app.stop()
  if (!pgSchemas.length) return
  const { default: pg } = await import('pg')
  const client = new pg.Client(process.env.CORDAGE_PG_URL)
  await client.connect()
  try {
    for (const schema of pgSchemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } finally {
    await client.end()
  }
})

async function start(p: Record<string, unknown>): Promise<TestApp> {
  const app = await startApp(p)
  apps.push(app)
  return app
}

for (const store of stores) {
  describe(`artifacts (${store.name})`, { skip: store.skip }, () => {
    it('stores a 5 MB result once, and the model pages through it to the last page', async () => {
      const script: ScriptStep[] = [
        // The same bytes twice: one blob, two listings.
        { calls: [{ tool: 'big_report' }, { tool: 'big_report' }] },
        { tool: 'read_artifact', args: { ref: reportRef, offset: Head, length: Page } },
        { tool: 'read_artifact', args: { ref: reportRef, offset: Head + Page, length: Page } },
        { tool: 'read_artifact', args: { ref: reportRef, offset: ReportBytes - Page, length: Page } },
        { final: `The ledger ends with ${FinalCode}.` },
      ]
      // The answer must cite what the last page says: the verifier checks the model saw it in a result.
      const app = await start(preset(store, script, {}, [], 1))
      const run = await app.run()
      assert.equal(run.state.status, 'COMPLETED', run.state.reason)

      const ends = eventsOf(run, 'tool/end')
      const reports = ends.filter((e) => e.data.tool === 'big_report')
      assert.equal(reports.length, 2)
      for (const end of reports) {
        assert.equal(end.data.output, undefined, 'tool/end leaves the output out')
        assert.deepEqual(end.data.artifact, {
          ref: reportRef,
          sha256: reportRef.slice('artifact:sha256:'.length),
          bytes: ReportBytes,
          mediaType: 'text/plain; charset=utf-8',
          visibility: 'ui',
        })
        // The model sees the head and where to read on.
        assert.ok(end.data.observation.length < Head + 400, `the observation is bounded (${end.data.observation.length})`)
        assert.ok(end.data.observation.includes(`read_artifact {"ref":"${reportRef}","offset":${Head}}`))
        assert.ok(!end.data.observation.includes(FinalCode))
      }
      // The log holds references, not the 5 MB (twice): what it holds is the three pages the model read.
      const logBytes = Buffer.byteLength(JSON.stringify(run.events))
      assert.ok(logBytes < 3 * 2 * Page + 64 * 1024, `the stored log is ${logBytes} bytes`)
      assert.deepEqual(run.state.artifacts, [reportRef])

      // One blob, listed under each action that stored it.
      const storeService = app.agent().store()
      const listed = await storeService.artifactsOf!(run.state.runId)
      assert.deepEqual(
        listed.map((a) => [a.ref, a.actionId, a.bytes]),
        [
          [reportRef, 's1.a1', ReportBytes],
          [reportRef, 's1.a2', ReportBytes],
        ],
      )
      if (store.blobs) assert.equal(store.blobs(), 1, 'one blob for the two calls')
      const whole = await storeService.readArtifact!(reportRef)
      assert.equal(whole.byteLength, ReportBytes)

      // The pages: each offset is the `next` of the read before; the last read reaches the end.
      const reads = ends.filter((e) => e.data.tool === 'read_artifact').map((e) => e.data.output as Record<string, unknown>)
      assert.equal(reads.length, 3)
      assert.deepEqual(
        reads.map((r) => [r.offset, r.bytes, r.total, r.next]),
        [
          [Head, Page, ReportBytes, Head + Page],
          [Head + Page, Page, ReportBytes, Head + 2 * Page],
          [ReportBytes - Page, Page, ReportBytes, undefined],
        ],
      )
      assert.equal(reads[1].offset, reads[0].next)
      assert.ok(!String(reads[0].text).includes(FinalCode) && !String(reads[1].text).includes(FinalCode))
      assert.ok(String(reads[2].text).includes(FinalCode), 'only the last page holds the code')
      assert.equal(run.state.answer, `The ledger ends with ${FinalCode}.`)
    })

    it("refuses another run's artifact and an audit-only one; a redacted result is stored redacted, raw only audit-only", async () => {
      const auditRef = `audit:sha256:${sha(CustomerRecord)}`
      // Both runs follow the same script: the first read asks for the report before this run stored it.
      const script: ScriptStep[] = [
        { tool: 'read_artifact', args: { ref: reportRef } },
        { tool: 'big_report' },
        { tool: 'customer_record' },
        { tool: 'read_artifact', args: { ref: auditRef } },
        { final: 'done' },
      ]
      const app = await start(preset(store, script, { audit: { keepRedacted: true } }, ['guardrails']))
      const first = await app.run()
      const second = await app.run()
      for (const run of [first, second]) {
        assert.equal(run.state.status, 'COMPLETED', run.state.reason)
        const errors = eventsOf(run, 'tool/error')
        assert.deepEqual(
          errors.map((e) => [e.actionId, e.data.code]),
          [
            ['s1.a1', 'tool_failed'],
            ['s4.a1', 'tool_failed'],
          ],
        )
        assert.match(errors[0].data.message, /is not an artifact of this run/)
        assert.match(errors[1].data.message, /is audit-only/)
        assert.deepEqual(run.state.artifacts, [reportRef, auditRef])
        // The redacted result: stored as the guardrail let it through; the raw one only as the audit artifact.
        const record = eventsOf(run, 'tool/end').find((e) => e.data.tool === 'customer_record')!
        assert.equal(record.data.redacted?.guard, 'card')
        assert.equal(record.data.redacted?.audit?.ref, auditRef)
        assert.equal(record.data.redacted?.audit?.visibility, 'audit')
        assert.ok(!JSON.stringify(run.events).includes(CardNumber), 'the card number is in no event')
        assert.match(String(record.data.output), /Customer C-7: Ada Lovelace, card \[redacted:card\], plan gold\./)
      }
      // The second run's refused read asked for a blob that exists (the first run's): listing is what counts.
      const storeService = app.agent().store()
      assert.ok(await storeService.artifact!(reportRef))
      const raw = Buffer.from(await storeService.readArtifact!(auditRef)).toString('utf8')
      assert.equal(raw, CustomerRecord, 'the audit artifact keeps the raw result')
    })

    it('keeps a write’s large result by reference in the ledger: a deduplicated call in another run gets the same artifact', async () => {
      const script: ScriptStep[] = [
        { tool: 'export_ledger' },
        { tool: 'read_artifact', args: { ref: reportRef, offset: ReportBytes - 200 } },
        { final: 'exported' },
      ]
      const app = await start(preset(store, script))
      const first = await app.run()
      const second = await app.run()
      for (const run of [first, second]) assert.equal(run.state.status, 'COMPLETED', run.state.reason)
      const [entry] = first.effects!
      assert.deepEqual(entry.output, { 'cordage:artifact': eventsOf(first, 'tool/end')[0].data.artifact })
      const again = eventsOf(second, 'tool/end')[0]
      assert.deepEqual(again.data.deduplicated, { runId: first.state.runId, actionId: 's1.a1' })
      assert.equal(again.data.artifact?.ref, reportRef)
      assert.equal(again.data.output, undefined)
      // Listed under the second run as well, so it may read it.
      assert.deepEqual(
        (await app.agent().store().artifactsOf!(second.state.runId)).map((a) => [a.ref, a.actionId]),
        [[reportRef, 's1.a1']],
      )
      const read = eventsOf(second, 'tool/end')[1]
      assert.equal(read.data.tool, 'read_artifact')
      assert.ok(String((read.data.output as { text: string }).text).includes(FinalCode))
    })

    it('drops the raw result of a redacted call unless the preset keeps it', async () => {
      const app = await start(preset(store, [{ tool: 'customer_record' }, { final: 'done' }], {}, ['guardrails']))
      const run = await app.run()
      assert.equal(run.state.status, 'COMPLETED', run.state.reason)
      const record = eventsOf(run, 'tool/end')[0]
      assert.deepEqual(record.data.redacted, { guard: 'card' })
      assert.equal(run.state.artifacts, undefined)
      assert.deepEqual(await app.agent().store().artifactsOf!(run.state.runId), [])
      assert.ok(!JSON.stringify(run.events).includes(CardNumber))
    })
  })
}

describe('cordage artifacts and cordage artifact', { skip: keepsArtifacts(sqliteManifest) }, () => {
  it('lists a run’s artifacts, prints one by range, and prints an audit-only one only with --audit', async () => {
    const dir = tempDir()
    const file = join(dir, 'preset.yml')
    const p = preset(
      stores[1],
      [{ tool: 'big_report' }, { tool: 'customer_record' }, { final: 'done' }],
      { audit: { keepRedacted: true } },
      ['guardrails'],
    )
    const agent = (p.agents as Record<string, Record<string, unknown>>).agent
    ;(agent.plugins as unknown[])[0] = { plugin: 'store-sqlite', config: { path: join(dir, 'runs.db') } }
    agent.plugins = (agent.plugins as unknown[]).map((e) => (e === desk ? { path: resolve(desk.path) } : e))
    writeFileSync(file, stringify(p))
    const app = await startApp(file, { keepStores: true })
    const run = await app.run()
    await app.stop()
    assert.equal(run.state.status, 'COMPLETED', run.state.reason)
    const auditRef = `audit:sha256:${sha(CustomerRecord)}`

    const cli = async (...args: string[]) => {
      const out: string[] = []
      const err: string[] = []
      const code = await main([...args, '--preset', file], { out: (l) => out.push(l), err: (l) => err.push(l) })
      return { code, out: out.join('\n'), err: err.join('\n') }
    }
    const listed = await cli('artifacts', run.state.runId, '--json')
    assert.equal(listed.code, 0, listed.err)
    assert.deepEqual(
      listed.out
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((a) => [a.ref, a.bytes, a.mediaType, a.actionId, a.visibility]),
      [
        [reportRef, ReportBytes, 'text/plain; charset=utf-8', 's1.a1', 'ui'],
        [auditRef, Buffer.byteLength(CustomerRecord), 'text/plain; charset=utf-8', 's2.a1', 'audit'],
      ],
    )
    const lines = await cli('artifacts', run.state.runId)
    assert.match(lines.out, new RegExp(`${reportRef}\\s+${ReportBytes} B\\s+text/plain; charset=utf-8\\s+s1.a1\\s+ui`))

    const tail = await cli('artifact', reportRef, '--offset', String(ReportBytes - FinalCode.length - 1), '--length', '200')
    assert.equal(tail.code, 0, tail.err)
    assert.equal(tail.out, `${FinalCode}\n`)
    const out = join(dir, 'report.txt')
    assert.equal((await cli('artifact', reportRef, '--run', run.state.runId, '--out', out)).code, 0)
    assert.equal(readFileSync(out, 'utf8'), bigReport())

    // The UI view never prints an audit-only artifact; the audit view does.
    const forbidden = await cli('artifact', auditRef)
    assert.notEqual(forbidden.code, 0)
    assert.match(forbidden.err, /artifact_forbidden/)
    assert.ok(!forbidden.out.includes(CardNumber) && !forbidden.err.includes(CardNumber))
    const audit = await cli('artifact', auditRef, '--audit')
    assert.equal(audit.code, 0, audit.err)
    assert.equal(audit.out, CustomerRecord)

    const unknown = await cli('artifact', `artifact:sha256:${'0'.repeat(64)}`)
    assert.match(unknown.err, /artifact_not_found/)
    const elsewhere = await cli('artifact', reportRef, '--run', 'run_nope')
    assert.match(elsewhere.err, /run_not_found/)
    const bad = await cli('artifact', 'sha256:abc')
    assert.match(bad.err, /invalid_input/)
  })
})
