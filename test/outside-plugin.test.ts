/**
 * A plugin folder anywhere on disk, outside this package and its node_modules: its imports of cordage,
 * cordis and zod reach the host's own copies (one ticket authority, one cordis), and a folder that is
 * not an ES module package is refused with a message that says what to add.
 */
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { Cordage } from '../core/host/app.ts'
import { tempDir } from './temp.ts'

function outside(packageJson: object | undefined) {
  const dir = tempDir('cordage-outside-')
  const plugin = join(dir, 'my-plugins', 'greeter')
  mkdirSync(join(dir, 'presets'), { recursive: true })
  cpSync(resolve(import.meta.dirname, 'fixtures/plugins/greeter'), plugin, { recursive: true })
  if (packageJson) writeFileSync(join(plugin, 'package.json'), JSON.stringify(packageJson))
  const preset = join(dir, 'presets', 'hello.yml')
  writeFileSync(
    preset,
    stringify({
      agents: {
        hello: {
          model: {
            plugin: 'model-scripted',
            config: { script: [{ tool: 'greet', args: { name: 'Ada' } }, { final: 'Hi Ada [source: greeter]' }] },
          },
          plugins: [
            'store-memory',
            'tools-registry',
            'context-basic',
            'verifier-basic',
            { plugin: 'policy-rules', config: { rules: [{ id: 'all', verdict: 'allow' }] } },
            { path: '../my-plugins/greeter', version: '^0.3.0', config: { greeting: 'Howdy' } },
          ],
        },
      },
    }),
  )
  return preset
}

describe('a plugin outside the repository', () => {
  it("loads with the host's cordage, cordis and zod, and its tool runs under the host's tickets", async () => {
    const app = await Cordage.fromPreset(outside({ type: 'module' }))
    const agent = app.agent('hello')
    const state = await agent.run('greet Ada')
    assert.equal(state.status, 'COMPLETED')
    const end = (await agent.store().load(state.runId)).find((e) => e.type === 'tool/end')
    assert.ok(end?.type === 'tool/end', "a second copy of cordage would refuse the kernel's ticket")
    assert.equal(end.data.output, 'Howdy, Ada! [source: greeter]')
    assert.equal(end.producer, 'greeter@0.3.0')
    await app.stop()
  })

  it('is refused, with what to add, when its folder is not an ES module package', async () => {
    await assert.rejects(Cordage.fromPreset(outside({})), {
      code: 'manifest_invalid',
      message:
        /my-plugins\/greeter is not an ES module package: .*package\.json does not say "type": "module"; add a package\.json with \{"type": "module"\}/,
    })
  })
})
