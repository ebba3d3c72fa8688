import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { readService, type CordageError, type WorkspaceService } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { tempDir as makeTempDir } from '../../../test/helpers.ts'
import { LocalWorkspace } from '../local-workspace.ts'

/** Temporary folders of this file, removed when it is done. */
const made: string[] = []
function tempDir(prefix?: string): string {
  const dir = makeTempDir(prefix)
  made.push(dir)
  return dir
}
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A template folder with a file and a subfolder. */
function template(): string {
  const dir = tempDir('cordage-template-')
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'src', 'a.js'), 'export const a = 1\n')
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n')
  return dir
}

/** A preset folder with one agent using workspace-local (and coding-tools, so a run touches its workspace). */
function presetWith(workspace: Record<string, unknown>, final = 'done', minCount = 0) {
  const dir = tempDir()
  const preset = {
    cordage: 1,
    agents: {
      coder: {
        task: 'look around',
        budgets: { maxSteps: 3 },
        model: { plugin: 'model-scripted', config: { script: [{ tool: 'list_files' }, { final }] } },
        plugins: [
          'store-memory',
          'tools-registry',
          'context-basic',
          { plugin: 'policy-rules', config: { default: 'deny', rules: [{ id: 'read', verdict: 'allow', match: { sideEffect: 'none' } }] } },
          { plugin: 'verifier-basic', config: { minCount } },
          { plugin: 'workspace-local', config: workspace },
          'coding-tools',
        ],
      },
    },
  }
  writeFileSync(join(dir, 'preset.yml'), stringify(preset))
  return { dir, file: join(dir, 'preset.yml') }
}

describe('workspace-local', () => {
  it("creates the run's directory on first use, filled from the template, which stays as it was", async () => {
    const root = join(tempDir(), 'workspaces')
    const tpl = template()
    const workspace = new LocalWorkspace(root, tpl)
    const dir = await workspace.dir('run_abc_123')
    assert.equal(dir, join(root, 'run_abc_123'))
    assert.equal(readFileSync(join(dir, 'src', 'a.js'), 'utf8'), 'export const a = 1\n')
    writeFileSync(join(dir, 'src', 'a.js'), 'changed')
    assert.equal(await workspace.dir('run_abc_123'), dir)
    assert.equal(readFileSync(join(dir, 'src', 'a.js'), 'utf8'), 'changed', "a second call keeps the run's files")
    assert.equal(readFileSync(join(tpl, 'src', 'a.js'), 'utf8'), 'export const a = 1\n')
    assert.deepEqual(readdirSync(root), ['run_abc_123'], 'nothing else is left in the root')
  })

  it('gives every process the same directory for a run, and copies the template once when they race', async () => {
    const root = join(tempDir(), 'workspaces')
    const tpl = template()
    // Two services over one root stand in for two processes.
    const [a, b] = [new LocalWorkspace(root, tpl), new LocalWorkspace(root, tpl)]
    const dirs = await Promise.all([a.dir('run_x'), b.dir('run_x'), a.dir('run_x'), b.dir('run_x')])
    assert.equal(new Set(dirs).size, 1)
    assert.deepEqual(readdirSync(root), ['run_x'], "the losers' copies are gone")
    assert.deepEqual(readdirSync(dirs[0]).sort(), ['package.json', 'src'])
  })

  it('refuses run ids that could name a directory outside the root, creating nothing', async () => {
    const base = tempDir()
    const root = join(base, 'workspaces')
    const workspace = new LocalWorkspace(root)
    for (const runId of ['../escape', '..', '.', '', 'a/b', 'a\\b', '/etc', 'run\0x', 'x'.repeat(200)]) {
      await assert.rejects(
        workspace.dir(runId),
        (error: CordageError) => {
          assert.equal(error.code, 'invalid_input')
          assert.match(error.message, /cannot name a workspace/)
          return true
        },
        JSON.stringify(runId),
      )
    }
    assert.deepEqual(readdirSync(base), [], 'no root, no escape')
  })

  it('resolves root and template against the preset, and defaults the root to .cordage/workspaces of the working directory', async () => {
    const tpl = template()
    const preset = presetWith({ root: 'ws', template: tpl })
    const app = await Cordage.fromPreset(preset.file)
    const service = readService<WorkspaceService>(app.agent('coder').ctx, 'workspace')!
    assert.equal(service.provider, 'workspace-local@1.0.0')
    assert.equal(await service.value.dir('run_1'), join(preset.dir, 'ws', 'run_1'))
    assert.ok(existsSync(join(preset.dir, 'ws', 'run_1', 'src', 'a.js')))
    await app.stop()

    const cwd = process.cwd()
    const elsewhere = tempDir()
    process.chdir(elsewhere)
    try {
      const app2 = await Cordage.fromPreset(presetWith({}).file)
      const workspace = readService<LocalWorkspace>(app2.agent('coder').ctx, 'workspace')!.value
      assert.equal(workspace.pathOf('run_2'), join(elsewhere, '.cordage', 'workspaces', 'run_2'))
      await app2.stop()
    } finally {
      process.chdir(cwd)
    }
  })

  it("keeps or removes a run's workspace when the run ends, as `keep` says", async () => {
    const outcomes: [string, string, number, boolean][] = [
      ['always', 'done', 0, true],
      ['never', 'done', 0, false],
      ['failed', 'done', 0, false], // completed: removed
      ['failed', 'no sources', 1, true], // failed verification: kept for a look
    ]
    for (const [keep, final, minCount, kept] of outcomes) {
      const preset = presetWith({ root: 'ws', keep }, final, minCount)
      const app = await Cordage.fromPreset(preset.file)
      const state = await app.agent('coder').run()
      assert.equal(state.status, minCount ? 'FAILED_VERIFICATION' : 'COMPLETED')
      assert.equal(existsSync(join(preset.dir, 'ws', state.runId)), kept, `keep: ${keep}, ${state.status}`)
      await app.stop()
    }
  })

  it('refuses a template that is not a folder, and a root inside the template', async () => {
    const tpl = template()
    for (const [config, message] of [
      [{ template: 'missing-folder' }, /template .*missing-folder is not a folder/],
      [{ template: tpl, root: join(tpl, 'runs') }, /root .* is inside the template/],
      [{ root: 'ws', temporary: true }, /give root or temporary: true, not both/],
    ] as const) {
      await assert.rejects(Cordage.fromPreset(presetWith(config).file), (error: CordageError) => {
        assert.equal(error.code, 'plugin_config_invalid')
        assert.match(error.message, message)
        return true
      })
    }
  })

  it('temporary: puts the workspaces in a private folder of the OS temporary folder, and refuses one it does not own', async () => {
    const tmp = tempDir('cordage-tmpdir-')
    const saved = process.env.TMPDIR
    process.env.TMPDIR = tmp
    try {
      const tpl = template()
      const root = join(tmp, `cordage-workspaces-${process.getuid!()}`)
      const app = await Cordage.fromPreset(presetWith({ temporary: true, template: tpl }).file)
      const workspace = readService<WorkspaceService>(app.agent('coder').ctx, 'workspace')!.value
      assert.equal(await workspace.dir('run_t1'), join(root, 'run_t1'))
      assert.ok(existsSync(join(root, 'run_t1', 'src', 'a.js')))
      assert.equal(statSync(root).mode & 0o777, 0o700, 'private to the user')
      await app.stop()

      // Loosened meanwhile: made private again when the plugin starts.
      chmodSync(root, 0o755)
      await (await Cordage.fromPreset(presetWith({ temporary: true }).file)).stop()
      assert.equal(statSync(root).mode & 0o777, 0o700)

      // A link planted where the root should be is refused, not followed.
      rmSync(root, { recursive: true })
      symlinkSync(tempDir('cordage-elsewhere-'), root)
      await assert.rejects(Cordage.fromPreset(presetWith({ temporary: true }).file), (error: CordageError) => {
        assert.equal(error.code, 'plugin_config_invalid')
        assert.match(error.message, /the temporary root .* is not a directory \(a symbolic link, or a file\); remove it or set root/)
        return true
      })
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
  })
})
