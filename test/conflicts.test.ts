/**
 * A conflict is explained: which plugin wants what (its name, version, the preset entry and the
 * manifest field), what the agent has instead, and what is installed that would fit, or that nothing is.
 */
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import type { CordageError } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { PluginCatalog } from '../core/host/catalog.ts'
import { tempDir } from './temp.ts'

const fixtures = resolve(import.meta.dirname, 'fixtures')

/** The incompatible-requirement fixture in a temp project, optionally with an npm package providing tools 2.0.0. */
function project(withProvider: boolean): string {
  const dir = tempDir('cordage-conflict-')
  mkdirSync(join(dir, 'presets'))
  cpSync(join(fixtures, 'presets/incompatible-requirement.yml'), join(dir, 'presets/x.yml'))
  cpSync(join(fixtures, 'plugins/requires-tools-2'), join(dir, 'plugins/requires-tools-2'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', dependencies: withProvider ? { 'tools-next': '2.0.0' } : {} }))
  if (withProvider) {
    const pkg = join(dir, 'node_modules/tools-next')
    mkdirSync(pkg, { recursive: true })
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'tools-next', version: '2.0.0', type: 'module', cordage: { plugin: './index.js' } }),
    )
    writeFileSync(join(pkg, 'manifest.js'), "export default { name: 'tools-next', version: '2.0.0', provides: { tools: '2.0.0' } }\n")
    writeFileSync(join(pkg, 'index.js'), 'export default {}\n')
  }
  return dir
}

async function refusal(dir: string): Promise<CordageError> {
  try {
    const app = await Cordage.fromPreset(join(dir, 'presets/x.yml'), { catalog: await PluginCatalog.scan(undefined, { project: dir }) })
    await app.stop()
  } catch (error) {
    return error as CordageError
  }
  assert.fail('the preset loaded')
}

describe('conflict messages', () => {
  it('say who wants what, what the agent has, and that nothing installed would fit', async () => {
    const error = await refusal(project(false))
    assert.equal(error.code, 'plugin_requirement_incompatible')
    assert.match(
      error.message,
      /x\.yml:\d+:\d+ agents\.support\.plugins\[5\]\) requires service "tools" \^2\.0\.0 \(manifest field requires\.tools\)/,
      'who wants what, and where',
    )
    assert.match(
      error.message,
      /but tools-registry@1\.0\.0 \(agents\.support\.plugins\[1\]\) provides "tools" 1\.0\.0/,
      'what the agent has',
    )
    assert.match(
      error.message,
      /; no installed plugin provides "tools" \^2\.0\.0 \(installed providers: tool-search@1\.1\.0 \(provides 1\.0\.0\), tools-registry@1\.0\.0 \(provides 1\.0\.0\)\)$/,
      'what is available',
    )
  })

  it('name the installed plugin that would fit', async () => {
    const error = await refusal(project(true))
    assert.equal(error.code, 'plugin_requirement_incompatible')
    assert.match(error.message, /; installed plugins that provide "tools" \^2\.0\.0: tools-next@2\.0\.0 \(provides 2\.0\.0\)$/)
  })

  it('name the other provider when two plugins provide one service, and the installed versions when a range admits none', async () => {
    const dir = project(true)
    const file = join(dir, 'presets/two.yml')
    writeFileSync(
      file,
      `agents:
  support:
    model: { plugin: model-scripted, config: { script: [ { final: hi } ] } }
    plugins: [store-memory, tools-registry, context-basic, verifier-basic, policy-rules@^7.0.0, tools-next]
`,
    )
    await assert.rejects(
      Cordage.fromPreset(file, { catalog: await PluginCatalog.scan(undefined, { project: dir }) }),
      (error: CordageError) => {
        assert.equal(error.code, 'plugin_version_unsatisfiable')
        assert.match(
          error.message,
          /agents\.support\.plugins\[4\]: no installed version of "policy-rules" satisfies \^7\.0\.0 \(installed: 2\.1\.0, 1\.0\.0\)/,
        )
        return true
      },
    )
    writeFileSync(
      file,
      `agents:
  support:
    model: { plugin: model-scripted, config: { script: [ { final: hi } ] } }
    plugins: [store-memory, tools-registry, context-basic, verifier-basic, policy-rules, tools-next]
`,
    )
    await assert.rejects(
      Cordage.fromPreset(file, { catalog: await PluginCatalog.scan(undefined, { project: dir }) }),
      (error: CordageError) => {
        assert.equal(error.code, 'plugin_conflict')
        assert.match(
          error.message,
          /agents\.support\.plugins\[5\]: "tools-next" and "tools-registry" \(agents\.support\.plugins\[1\]\) both provide "tools"; an agent has one provider per service/,
        )
        return true
      },
    )
  })
})
