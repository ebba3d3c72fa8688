/**
 * A lazily scanned catalogue (core/host/catalog.ts ScanOptions.lazy, what one-shot `cordage` commands
 * use) reads only the folders of the plugins a preset names, and answers what a whole scan answers:
 * the same plans, the same errors (which list every installed plugin), the same versions, and a loud
 * error for a caller that asks before reading.
 */
import assert from 'node:assert/strict'
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { BuiltinPluginsDir, PluginCatalog } from '../core/host/catalog.ts'
import { loadPreset } from '../core/host/preset.ts'
import { planAgent } from '../core/host/resolve.ts'
import { tempDir } from './temp.ts'

function preset(plugins: unknown[], model: unknown = { plugin: 'model-scripted', config: { script: [{ final: 'Hi.' }] } }) {
  const file = join(tempDir(), 'p.yml')
  writeFileSync(file, stringify({ cordage: 1, agents: { a: { task: 'Hi.', model, plugins } } }))
  return loadPreset(file)
}

const minimal = [
  'store-memory',
  'tools-registry',
  'context-basic',
  { plugin: 'policy-rules', config: { default: 'deny' } },
  'verifier-basic',
]

/** The agent of a preset of `plugins` planned from a lazy scan and from a whole one. */
async function plans(plugins: unknown[]) {
  const p = preset(plugins)
  const planned = async (lazy: boolean) => {
    const catalog = await PluginCatalog.scan(undefined, { lazy, project: false })
    try {
      const plan = await planAgent(p, p.agents.a, catalog)
      return { catalog, plan: plan.plugins.map((x) => `${x.entry.manifest.name}@${x.entry.manifest.version} ${x.entry.dir}`) }
    } catch (error) {
      return { catalog, error: error as Error }
    }
  }
  return { lazy: await planned(true), whole: await planned(false) }
}

describe('a lazily scanned catalogue', () => {
  it('holds only folders named as their plugin, or as it and "-" (what reading by name relies on)', async () => {
    const whole = await PluginCatalog.scan(undefined, { project: false })
    const folders = readdirSync(BuiltinPluginsDir)
    for (const entry of whole.entries()) {
      const folder = entry.dir.split(/[\\/]/).pop()!
      assert.ok(folder === entry.manifest.name || folder.startsWith(`${entry.manifest.name}-`), `${folder} holds ${entry.manifest.name}`)
      assert.ok(folders.includes(folder))
    }
  })

  it('reads the folders a preset names, and plans as a whole scan does', async () => {
    const { lazy, whole } = await plans(minimal)
    assert.deepEqual(lazy.plan, whole.plan)
    assert.equal(lazy.catalog.whole, false, 'the other folders were not read')
  })

  it('finds a version in a folder named after the plugin and "-" (policy-rules 1.x in policy-rules-v1)', async () => {
    const plugins = [...minimal.slice(0, 3), { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'deny' } }, 'verifier-basic']
    const { lazy, whole } = await plans(plugins)
    assert.equal(lazy.error, undefined, String(lazy.error))
    assert.deepEqual(lazy.plan, whole.plan)
    assert.ok(lazy.plan!.some((p) => p.startsWith('policy-rules@1.')))
  })

  it("gives the whole scan's errors: an unknown plugin lists every installed one, a missing service every provider", async () => {
    for (const plugins of [[...minimal, 'policy-rulez'], minimal.filter((p) => p !== 'store-memory')]) {
      const { lazy, whole } = await plans(plugins)
      assert.ok(whole.error, 'the preset is refused')
      assert.equal(lazy.error?.message, whole.error.message)
      assert.match(whole.error.message, /store-postgres|installed: /)
    }
  })

  it('refuses, loudly, a caller that asks before reading', async () => {
    const catalog = await PluginCatalog.scan(undefined, { lazy: true, project: false })
    assert.throws(() => catalog.find('store-memory', '*'), /must be read first/)
    assert.throws(() => catalog.entries(), /must be read first/)
    assert.throws(() => catalog.providersOf('store'), /must be read first/)
    await catalog.read(['store-memory'])
    assert.equal(catalog.find('store-memory', '*').manifest.name, 'store-memory')
    assert.throws(() => catalog.entries(), /must be read first/)
    await catalog.read()
    assert.equal(catalog.whole, true)
    assert.ok(catalog.entries().length >= 30)
  })
})
