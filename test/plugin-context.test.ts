/**
 * What a plugin's `apply` gets besides its services: `ctx.baseDir`, the folder of the preset file it
 * was loaded from, typed on {@link PluginContext} (read-only) so a plugin needs no cast to read it.
 */
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { definePlugin, type PluginContext } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { tempDir } from './temp.ts'

type Probe = { baseDirs: string[] }
const probe = ((globalThis as { cordageBaseDirProbe?: Probe }).cordageBaseDirProbe ??= { baseDirs: [] })

/** A plugin folder that notes the baseDir it was applied with. */
function probePlugin(dir: string): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'manifest.ts'), "export default { name: 'probe', version: '1.0.0' }\n")
  writeFileSync(
    join(dir, 'index.ts'),
    [
      "import { definePlugin } from 'cordage'",
      "import manifest from './manifest.ts'",
      'export default definePlugin(manifest, (ctx) => { globalThis.cordageBaseDirProbe.baseDirs.push(ctx.baseDir) })',
      '',
    ].join('\n'),
  )
}

const agent = (probePath: string) => ({
  model: { plugin: 'model-scripted', config: { script: [{ final: 'ok' }] } },
  plugins: [
    'store-memory',
    'tools-registry',
    'context-basic',
    { plugin: 'verifier-basic', config: { minCount: 0 } },
    { plugin: 'policy-rules', config: { rules: [{ id: 'all', verdict: 'allow' }] } },
    { path: probePath },
  ],
})

describe('ctx.baseDir', () => {
  it('is the absolute folder of the preset file named, not of the base it extends', async () => {
    const dir = tempDir('cordage-basedir-')
    probePlugin(join(dir, 'plugins', 'probe'))
    mkdirSync(join(dir, 'base'))
    mkdirSync(join(dir, 'prod'))
    writeFileSync(join(dir, 'base', 'base.yml'), stringify({ agents: { desk: agent('../plugins/probe') } }))
    writeFileSync(join(dir, 'prod', 'prod.yml'), stringify({ extends: '../base/base.yml', agents: { desk: { budgets: { maxSteps: 3 } } } }))
    probe.baseDirs.length = 0
    const app = await Cordage.fromPreset(join(dir, 'prod', 'prod.yml'))
    await app.stop()
    assert.deepEqual(probe.baseDirs, [join(dir, 'prod')])
  })

  it('is typed on the plugin context, read-only', () => {
    const plugin = definePlugin({ name: 'typed', version: '1.0.0' }, (ctx) => {
      const dir: string = ctx.baseDir
      // @ts-expect-error a plugin cannot move every other plugin's files
      ctx.baseDir = '/elsewhere'
      return void dir
    })
    const reader = (ctx: PluginContext): string => ctx.baseDir
    assert.equal(typeof plugin.apply, 'function')
    assert.equal(typeof reader, 'function')
  })
})
