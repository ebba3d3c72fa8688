/**
 * docs/guides/mcp.md is part of the contract: its example preset runs against a real MCP server process,
 * and its configuration table lists exactly the keys of the plugin's config schema.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, it } from 'node:test'
import { Cordage } from 'cordage/host'
import { tempDir } from '../../../test/temp.ts'
import { allExited, FixtureServer } from './fixture-server.ts'
import manifest from '../manifest.ts'

const doc = readFileSync(resolve(import.meta.dirname, '../../../docs/guides/mcp.md'), 'utf8')

describe('docs/guides/mcp.md', () => {
  it('runs its example preset: the lookup is allowed, the note waits for approval, then is written once', async (t) => {
    const example = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.startsWith('# example:'))
    assert.ok(example, 'the page has an example preset')
    const dir = tempDir('cordage-mcp-docs-')
    writeFileSync(join(dir, 'preset.yml'), example)
    // The example's orders-server.mjs is the fixture server.
    writeFileSync(
      join(dir, 'orders-server.mjs'),
      `process.env.MCP_FIXTURE_PIDS = ${JSON.stringify(join(dir, 'pids.txt'))}\nawait import(${JSON.stringify(pathToFileURL(FixtureServer).href)})\n`,
    )
    process.env.ORDERS_API_TOKEN = 'docs-example-token'
    try {
      const app = await Cordage.fromPreset(join(dir, 'preset.yml'), {
        onError: (error) => {
          throw error
        },
      })
      // Stopped whatever happens: a failed assertion must not leave the server process running.
      t.after(() => app.stop())
      const agent = app.agent('orders')
      const paused = await agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      assert.equal(paused.waiting?.actionId, 's2.a1')
      const done = await (await agent.approve(paused.runId, 's2.a1', { by: 'alice' })).done
      assert.equal(done.status, 'COMPLETED')
      const events = await agent.store().load(done.runId)
      assert.deepEqual(
        events.map((e) => e.type),
        [
          'run/start',
          'turn/start',
          'step/start',
          'step/context',
          'step/model-request',
          'step/model-response',
          'tool/proposed',
          'tool/decision',
          'tool/start',
          'tool/end',
          'step/end',
          'step/start',
          'step/context',
          'step/model-request',
          'step/model-response',
          'tool/proposed',
          'tool/decision',
          'run/checkpoint',
          'tool/approval-requested',
          'run/paused',
          'tool/approval-decided',
          'run/resumed',
          'tool/start',
          'tool/end',
          'step/end',
          'step/start',
          'step/context',
          'step/model-request',
          'step/model-response',
          'verify/start',
          'verify/end',
          'step/end',
          'turn/end',
          'run/end',
        ],
      )
      assert.deepEqual(
        events.filter((e) => e.type === 'tool/end').map((e) => e.producer),
        ['mcp-tools@1.0.0', 'mcp-tools@1.0.0'],
      )
      await app.stop()
      const pids = readFileSync(join(dir, 'pids.txt'), 'utf8').split('\n').filter(Boolean).map(Number)
      assert.equal(pids.length, 1)
      await allExited(pids)
    } finally {
      delete process.env.ORDERS_API_TOKEN
    }
  })

  it('lists every config key in its table, and no key the plugin does not have', () => {
    const documented = [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]).filter((k) => /^(servers|reconnect|log)/.test(k))
    assert.deepEqual(documented.sort(), configKeys(manifest.config).sort())
  })
})

/** Every key of a schemastery schema, as the table writes it: `servers[].tools.<tool>.rename`. */
function configKeys(schema: unknown, prefix = ''): string[] {
  const s = schema as { type: string; dict?: Record<string, unknown>; inner?: unknown }
  if (s.type === 'object' && s.dict) {
    return Object.entries(s.dict).flatMap(([key, child]) => {
      const path = prefix ? `${prefix}.${key}` : key
      const c = child as { type: string }
      const nested = c.type === 'object' || c.type === 'dict' || c.type === 'array' ? configKeys(child, path) : []
      // A container is listed itself only when it is a list or a map of its own (servers, env, tools…).
      return c.type === 'object' ? nested : [path, ...nested]
    })
  }
  if (s.type === 'array' && s.inner) return configKeys(s.inner, `${prefix}[]`)
  if (s.type === 'dict' && s.inner) return configKeys(s.inner, `${prefix}.<tool>`)
  return []
}
