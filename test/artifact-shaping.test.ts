/**
 * What becomes an artifact is the artifacts plugin's decision (issue 28), made at `tool/shape-result`
 * after the guardrail screened the result; the kernel stores what it asks and records the reference.
 * Without the plugin a result is recorded inline, whatever its size; an agent that asks for artifacts
 * (`artifactAboveBytes`, `audit.keepRedacted`) without it is refused at load, naming the plugin; the
 * plugin takes the agent's keys (or its own config) as its threshold; a store without artifacts keeps
 * a large result inline.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { eventsOf, startApp, testPreset, type PluginEntry, type TestApp } from '../core/testing/index.ts'
import { Cordage } from '../core/host/app.ts'
import { CordageError } from 'cordage'
import { bigReport, PageReport, ReportBytes } from './fixtures/plugins/artifact-desk/index.ts'
import { cordage } from './cordage-process.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')
const desk = { path: join(root, 'test/fixtures/plugins/artifact-desk') }
const withoutArtifacts = { path: join(root, 'test/fixtures/plugins/store-without-artifacts') }
const allow = [{ id: 'all', verdict: 'allow', match: { tool: '*' } }]

const apps: TestApp[] = []
after(async () => {
  for (const app of apps) await app.stop()
})

/** The desk agent calling `tool` once, with these plugins (after the desk) and agent keys. */
function preset(tool: string, plugins: PluginEntry[], keys: Record<string, unknown> = {}, store?: PluginEntry) {
  const p = testPreset({
    script: [{ tool }, { final: 'done' }],
    rules: allow,
    plugins: [{ plugin: 'verifier-basic', config: { minCount: 0 } }, desk, ...plugins],
  })
  const agent = (p.agents as Record<string, Record<string, unknown>>).agent
  Object.assign(agent, keys)
  if (store) (agent.plugins as unknown[])[0] = store
  return p
}

async function runOnce(p: Record<string, unknown>) {
  const app = await startApp(p)
  apps.push(app)
  const run = await app.run()
  assert.equal(run.state.status, 'COMPLETED', run.state.reason)
  const [end] = eventsOf(run, 'tool/end')
  return { app, run, end }
}

describe('artifacts are the plugin’s', () => {
  it('records a 5 MB result inline in tool/end when the agent lists no artifacts plugin', async () => {
    const { app, run, end } = await runOnce(preset('big_report', []))
    assert.equal(end.data.artifact, undefined)
    assert.equal(end.data.output, bigReport(), 'the whole result, inline')
    assert.ok(end.data.observation.length < 4200, `the model still sees a bounded observation (${end.data.observation.length})`)
    assert.equal(run.state.artifacts, undefined)
    assert.deepEqual(await app.agent().store().artifactsOf!(run.state.runId), [])
  })

  it('stores it as an artifact with the plugin, above the threshold the agent or the plugin config sets', async () => {
    const stored = async (p: Record<string, unknown>) => (await runOnce(p)).end.data.artifact
    assert.equal(await stored(preset('page_report', ['artifacts'])), undefined, '8 KiB is under the default 256 KiB')
    for (const p of [
      preset('page_report', ['artifacts'], { artifactAboveBytes: 4096 }),
      preset('page_report', [{ plugin: 'artifacts', config: { artifactAboveBytes: 4096 } }]),
    ]) {
      const artifact = await stored(p)
      assert.equal(artifact?.bytes, Buffer.byteLength(PageReport))
      assert.equal(artifact?.mediaType, 'text/plain; charset=utf-8')
      assert.equal(artifact?.visibility, 'ui')
    }
    const big = await runOnce(preset('big_report', ['artifacts']))
    assert.equal(big.end.data.artifact?.bytes, ReportBytes)
    assert.match(big.end.data.observation, /Read more with read_artifact \{"ref":"artifact:sha256:[0-9a-f]{64}","offset":4000\}/)
  })

  it('refuses at load an agent that sets artifactAboveBytes or audit.keepRedacted without the plugin: exit 2, naming it', async () => {
    const dir = tempDir('cordage-artifact-keys-')
    const file = join(dir, 'preset.yml')
    const p = preset('big_report', [], { artifactAboveBytes: 4096, audit: { keepRedacted: true } })
    ;(p.agents as Record<string, Record<string, unknown>>).agent.plugins = (
      (p.agents as Record<string, Record<string, unknown>>).agent.plugins as unknown[]
    ).map((e) => (e === desk ? { path: desk.path } : e))
    writeFileSync(file, stringify(p))
    const r = await cordage(['run', '--preset', file], dir)
    assert.equal(r.code, 2, r.err)
    const lines = r.err.trim().split('\n')
    assert.equal(lines.filter((l) => l.startsWith('error [')).length, 1, `one error: ${r.err}`)
    assert.match(
      r.err,
      /error \[plugin_requirement_missing\]: .*agents\.agent: artifactAboveBytes and audit\.keepRedacted need the artifacts plugin.*add it to agents\.agent\.plugins: - artifacts/s,
    )
    assert.doesNotMatch(r.err, /\n\s+at /, 'no stack trace')
  })

  it('takes audit.keepRedacted: false without the plugin (it asks for nothing)', async () => {
    const { end } = await runOnce(preset('customer_record', [], { audit: { keepRedacted: false } }))
    assert.equal(end.data.artifact, undefined)
  })

  it('refuses a key set both on the agent and in the plugin config', async () => {
    const dir = tempDir('cordage-artifact-keys-')
    const file = join(dir, 'preset.yml')
    writeFileSync(
      file,
      stringify(preset('big_report', [{ plugin: 'artifacts', config: { artifactAboveBytes: 8192 } }], { artifactAboveBytes: 4096 })),
    )
    const refused = await Cordage.fromPreset(file, { onError: () => {} }).then(
      (app) => app.stop(),
      (error: unknown) => error,
    )
    assert.ok(CordageError.is(refused, 'plugin_config_invalid'), String(refused))
    assert.match(
      refused.message,
      /agents\.agent\.artifactAboveBytes .*agents\.agent\.plugins\[\d\]\.config\.artifactAboveBytes.*set it in one place/s,
    )
  })

  it('keeps a large result inline when the store keeps no artifacts (store contract before 2.3.0), and says so once', async () => {
    const dir = tempDir('cordage-artifact-keys-')
    const file = join(dir, 'preset.yml')
    const p = preset('big_report', ['artifacts'], {}, withoutArtifacts)
    const agent = (p.agents as Record<string, Record<string, unknown>>).agent
    agent.model = {
      plugin: 'model-scripted',
      config: { script: [{ calls: [{ tool: 'big_report' }, { tool: 'big_report' }] }, { final: 'done' }] },
    }
    writeFileSync(file, stringify(p))
    const lines: string[] = []
    const app = await Cordage.fromPreset(file, { onError: () => {}, log: (line) => lines.push(line) })
    try {
      const runtime = app.agent('agent')
      const state = await runtime.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const ends = (await runtime.store().load(state.runId)).filter((e) => e.type === 'tool/end')
      assert.equal(ends.length, 2)
      for (const end of ends) {
        assert.ok(end.type === 'tool/end')
        assert.equal(end.data.artifact, undefined)
        assert.equal(end.data.output, bigReport())
        assert.doesNotMatch(end.data.observation, /read_artifact/, 'no reference the model could not read')
      }
      assert.equal(state.artifacts, undefined)
      const notes = lines.filter((l) => l.includes('keeps no artifacts'))
      assert.equal(notes.length, 1, lines.join('\n'))
      assert.match(notes[0], /this agent's store keeps no artifacts, so a result above 262144 bytes is kept inline in its event/)
    } finally {
      await app.stop()
    }
  })
})
