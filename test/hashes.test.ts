/**
 * docs/reference/hashes.md holds: the content hash that `cordage lock` writes is the one a run records
 * for the same files; the bundle hash of a hot reload is another value, of another length, that a
 * comment, a data file or a README does not change, while the content hash changes with a comment or a
 * data file; a policy's version changes with its rules, not its code. The outputs that show a hash say
 * which one it is, and the page is linked from the pages that show them.
 */
import assert from 'node:assert/strict'
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import type { PluginEvent, RunEvent } from 'cordage'
import { printReload } from '../core/cli/dev-output.ts'
import { main } from '../core/cli/main.ts'
import { Cordage } from '../core/host/app.ts'
import { pluginHash } from '../core/host/plugin-hash.ts'
import { hashPlugin } from '../core/host/reload-build.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')

/** The tutorial's project (docs/examples/library) in a temp folder: its preset names the plugin folder by path. */
function library(): { dir: string; preset: string; plugin: string } {
  const dir = join(tempDir('cordage-hashes-'), 'library')
  cpSync(join(root, 'docs/examples/library'), dir, { recursive: true })
  return { dir, preset: join(dir, 'library.yml'), plugin: join(dir, 'plugins/library-desk') }
}

async function capture(argv: string[]): Promise<{ code: number; out: string[] }> {
  const out: string[] = []
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => out.push(l) })
  return { code, out }
}

describe('the hashes of docs/reference/hashes.md', () => {
  it('the content hash the lock writes is the one a run records for the same files', async () => {
    const { preset, plugin } = library()
    const locked = await capture(['lock', '--preset', preset])
    assert.equal(locked.code, 0, locked.out.join('\n'))
    const lock = JSON.parse(readFileSync(preset.replace(/\.yml$/, '.lock.json'), 'utf8'))
    const inLock = lock.agents.desk['library-desk'].hash
    assert.match(inLock, /^sha256:[0-9a-f]{32}$/)
    assert.equal(inLock, pluginHash(plugin))

    const app = await Cordage.fromPreset(preset)
    try {
      const agent = app.agent('desk')
      const state = await agent.run()
      const start = (await agent.store().load(state.runId)).find((e): e is RunEvent<'run/start'> => e.type === 'run/start')!
      assert.equal(start.data.hashes?.['library-desk'], inLock)
      assert.deepEqual(
        Object.fromEntries(Object.entries(lock.agents.desk).map(([name, p]) => [name, (p as { hash: string }).hash])),
        start.data.hashes,
      )
    } finally {
      await app.stop()
    }
  })

  it('the bundle hash is another value; a comment and a data file change only the content hash, a README neither, code both', async () => {
    const { plugin } = library()
    const entry = join(plugin, 'index.ts')
    const both = async () => ({ content: pluginHash(plugin), bundle: (await hashPlugin(plugin, entry))! })
    const start = await both()
    assert.match(start.bundle, /^sha256:[0-9a-f]{16}$/)
    assert.notEqual(start.bundle, start.content)

    appendFileSync(join(plugin, 'tools.ts'), '\n// a comment\n')
    const comment = await both()
    assert.notEqual(comment.content, start.content)
    assert.equal(comment.bundle, start.bundle, 'a comment is no reload')

    writeFileSync(join(plugin, 'holidays.json'), '["2025-12-25"]')
    const data = await both()
    assert.notEqual(data.content, comment.content)
    assert.equal(data.bundle, start.bundle)

    writeFileSync(join(plugin, 'README.md'), '# library-desk\n')
    assert.deepEqual(await both(), data)

    writeFileSync(
      join(plugin, 'tools.ts'),
      readFileSync(join(plugin, 'tools.ts'), 'utf8').replace('Renewed ${bookId}', 'Renewed: ${bookId}'),
    )
    const code = await both()
    assert.notEqual(code.content, data.content)
    assert.notEqual(code.bundle, data.bundle)
  })

  it("a policy's version changes with its rules, not with its code", async () => {
    const { preset } = library()
    const versionOf = async (sets: string[]) => {
      const app = await Cordage.fromPreset(preset, { sets })
      try {
        const state = await app.agent('desk').run()
        return state.actions['s1.a1']!.decision!.policyVersion
      } finally {
        await app.stop()
      }
    }
    const before = await versionOf([])
    assert.match(before, /^policy-rules@2\.\d+\.\d+\+[0-9a-f]{8}$/)
    assert.notEqual(await versionOf(['agents.desk.plugins[3].config.default=allow']), before)
  })

  it('the outputs say which hash they show: content in the lock, bundle in a reload line', async () => {
    const { preset } = library()
    const locked = await capture(['lock', '--preset', preset])
    assert.match(locked.out[0]!, /^agent desk \(exact version and content hash of each plugin\):$/)

    const lines: string[] = []
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) }
    const base = { agent: 'desk', name: 'library-desk', version: '1.0.0', dir: '/p', durationMs: 9 }
    printReload(
      {
        ...base,
        ok: true,
        from: { version: '1.0.0', hash: 'sha256:aaaaaaaabbbbbbbb' },
        to: { version: '1.0.0', hash: 'sha256:ccccccccdddddddd' },
      } as PluginEvent,
      io,
    )
    printReload(
      {
        ...base,
        ok: false,
        code: 'plugin_start_failed',
        message: 'cannot build',
        from: { version: '1.0.0', hash: 'sha256:aaaaaaaabbbbbbbb' },
      } as PluginEvent,
      io,
    )
    assert.deepEqual(lines, [
      'reloaded library-desk in desk: 1.0.0 → 1.0.0  bundle sha256:aaaaaaaa → sha256:cccccccc  9ms',
      'reload of library-desk failed in desk [plugin_start_failed]: cannot build\n  library-desk@1.0.0 (bundle sha256:aaaaaaaa) keeps serving',
    ])
  })

  it('the page is linked from the pages that show a hash', () => {
    const pages = [
      'docs/README.md',
      'docs/reference/presets.md',
      'docs/reference/manifest.md',
      'docs/reference/events.md',
      'docs/reference/cli.md',
      'docs/guides/dev.md',
      'docs/guides/tutorial.md',
      'docs/guides/playground.md',
    ]
    for (const page of pages)
      assert.ok(
        /\]\((?:\.\.\/reference\/|reference\/)?hashes\.md(?:#[\w-]+)?\)/.test(readFileSync(join(root, page), 'utf8')),
        `${page} links to hashes.md`,
      )
  })
})
