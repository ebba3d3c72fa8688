/**
 * `cordage dev` and its preset (core/cli/dev.ts, core/host/preset-reload.ts): --set and --no-lock as
 * for run; an edit of the preset while dev runs swaps the plugins whose config changed, plans the
 * agents again when the plugin list changed, and changes nothing when the edit does not load. The real
 * CLI runs as a child process on a preset in a temp folder; its --json lines are read as they come.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { devProcess, type Line } from './dev-process.ts'
import { saves, type SaveStyle } from './editor-saves.ts'
import { deskPreset, refundAnswer, tempDir } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

const fixture = resolve(import.meta.dirname, 'fixtures/plugins/dev-policy')

/** A temp folder with preset.yml (the desk, answering `answer`) and a writable copy of the dev-policy plugin. */
interface Edit {
  policy?: object
  plugins?: object[]
  /** More keys of the model's config. */
  model?: Record<string, unknown>
  /** The model's answer waits this long (a run in flight meanwhile). */
  delayMs?: number
}

function project(answer: string, first: Edit = {}): { dir: string; write: (answer: string, more?: Edit, save?: SaveStyle) => void } {
  const dir = tempDir('cordage-dev-preset-')
  const plugin = join(dir, 'dev-policy')
  cpSync(fixture, plugin, { recursive: true })
  writeFileSync(join(plugin, 'package.json'), JSON.stringify({ type: 'module' }))
  const write = (text: string, more: Edit = {}, save: SaveStyle = 'inPlace') => {
    const preset = deskPreset(
      {
        script: [{ final: text, ...(more.delayMs ? { delayMs: more.delayMs } : {}) }],
        ...(more.model ? { model: more.model } : {}),
        policyPlugin: { path: './dev-policy', ...more.policy },
        plugins: more.plugins ?? [],
      },
      'outbox.jsonl',
    )
    saves[save](join(dir, 'preset.yml'), stringify(preset))
  }
  write(answer, first)
  return { dir, write }
}

const answerOf = (l: Line) => (l.type === 'run/end' ? (l.data?.answer as string | undefined) : undefined)
const ended = (answer: string) => (l: Line) => answerOf(l) === answer

describe('cordage dev: --set and --no-lock', () => {
  it('applies a --set overlay to the preset it loads', async () => {
    const { dir } = project(refundAnswer)
    const dev = devProcess(dir, ['--task', 'refund window?', '--set', 'agents.support.model.config.script=[{final: "from --set"}]'])
    try {
      const end = await dev.expect((l) => l.type === 'run/end')
      assert.equal(answerOf(end), 'from --set', dev.stderr())
    } finally {
      assert.equal((await dev.stop()).code, 0)
    }
  })

  it('takes --model as run does, and its runs record it', async () => {
    const { dir } = project(refundAnswer)
    const script = JSON.stringify([{ final: 'from --model' }])
    const dev = devProcess(dir, ['--task', 'refund window?', '--model', 'model-scripted@^1', '--set', `model.config.script=${script}`])
    try {
      const start = await dev.expect((l) => l.type === 'run/start')
      assert.deepEqual(start.data?.overrides, { model: 'model-scripted@1.2.0' })
      assert.equal(answerOf(await dev.expect((l) => l.type === 'run/end')), 'from --model')
    } finally {
      assert.equal((await dev.stop()).code, 0)
    }
  })

  it('honours the lock as run does, and ignores a stale one with --no-lock', async () => {
    const { dir } = project(refundAnswer)
    // A lock written for another set of plugins: it no longer matches the preset.
    writeFileSync(join(dir, 'preset.lock.json'), JSON.stringify({ cordage: 1, preset: 'preset.yml', agents: { support: {} } }))
    const refused = spawnSync(process.execPath, [bin, 'dev', '--preset', 'preset.yml', '--task', 'x'], { cwd: dir, encoding: 'utf8' })
    assert.equal(refused.status, 2, refused.stderr)
    assert.match(refused.stderr, /error \[lock_mismatch\]: preset preset\.yml does not match its lock/)

    const dev = devProcess(dir, ['--task', 'refund window?', '--no-lock'])
    try {
      assert.equal(answerOf(await dev.expect((l) => l.type === 'run/end')), refundAnswer)
    } finally {
      assert.equal((await dev.stop()).code, 0)
    }
  })
})

describe('cordage dev: preset edits', () => {
  it('reloads the plugin whose config changed, and the next run uses the new config (--set still applied)', async () => {
    const { dir, write } = project('one')
    const dev = devProcess(dir, ['--task', 'refund window?', '--set', 'agents.support.budgets.maxSteps=5'])
    try {
      await dev.expect(ended('one'))
      const mark = dev.lines.length
      write('two')
      const reloaded = await dev.expect((l) => l.type === 'preset/reloaded', mark)
      assert.equal(reloaded.ok, true, String(reloaded.message))
      assert.deepEqual(
        (reloaded.swapped as { agent: string; name: string; changed: string[] }[]).map((s) => [s.agent, s.name, s.changed]),
        [['support', 'model-scripted', ['config']]],
      )
      await dev.expect(ended('two'), mark)
      // The --set overlay was applied to the edited preset too.
      const start = dev.lines.filter((l) => l.type === 'run/start').at(-1)
      assert.equal((start?.data?.budgets as { maxSteps: number } | undefined)?.maxSteps, 5)
    } finally {
      assert.equal((await dev.stop()).code, 0)
    }
  })

  it('follows a preset saved by write-then-rename, and by every other way editors save, save after save', async () => {
    const { dir, write } = project('one')
    const dev = devProcess(dir, ['--task', 'refund window?'])
    try {
      await dev.expect(ended('one'))
      const styles: SaveStyle[] = ['atomic', 'atomic', 'atomic', 'backup', 'replace', 'inPlace']
      for (const [i, style] of styles.entries()) {
        const answer = `answer ${i + 2} (${style})`
        const mark = dev.lines.length
        write(answer, {}, style)
        const reloaded = await dev.expect((l) => l.type === 'preset/reloaded', mark)
        assert.equal(reloaded.ok, true, String(reloaded.message))
        await dev.expect(ended(answer), mark)
      }
    } finally {
      assert.equal((await dev.stop()).code, 0)
    }
  })

  // A --set of a plugin's config, and the --set overrides --model becomes, hold after an edit of another
  // key of that plugin's config swaps it: the edited preset is read with the same overrides.
  const overrides: [string, string[]][] = [
    ['--set', ['--set', 'agents.support.model.config.script=[{final: "from --set"}]']],
    ['--model', ['--model', 'model-scripted@^1', '--set', 'model.config.script=[{final: "from --set"}]']],
  ]
  for (const [flag, args] of overrides)
    it(`keeps the ${flag} overrides of a plugin's config when an edit of that config swaps it`, async () => {
      const { dir, write } = project('from the file')
      const dev = devProcess(dir, ['--task', 'refund window?', ...args])
      try {
        await dev.expect(ended('from --set'))
        const mark = dev.lines.length
        write('from the file', { model: { summaries: ['edited'] } })
        const reloaded = await dev.expect((l) => l.type === 'preset/reloaded', mark)
        assert.equal(reloaded.ok, true, String(reloaded.message))
        assert.deepEqual(
          (reloaded.swapped as { name: string; changed: string[] }[]).map((s) => [s.name, s.changed]),
          [['model-scripted', ['config']]],
        )
        const end = await dev.expect((l) => l.type === 'run/end', mark)
        assert.equal(answerOf(end), 'from --set', dev.stderr())
      } finally {
        assert.equal((await dev.stop()).code, 0)
      }
    })

  it('reports an edit that does not load and keeps the old preset serving, never half of an edit', async () => {
    const { dir, write } = project('one')
    const dev = devProcess(dir, ['--task', 'refund window?'])
    try {
      await dev.expect(ended('one'))
      let mark = dev.lines.length
      writeFileSync(join(dir, 'preset.yml'), `${readFileSync(join(dir, 'preset.yml'), 'utf8')}\n  oops: [\n`)
      const broken = await dev.expect((l) => l.type === 'preset/reloaded', mark)
      assert.equal(broken.ok, false)
      assert.equal(broken.code, 'preset_invalid')
      assert.match(String(broken.message), /preset\.yml/)

      // Two changes, the second of which does not fit its plugin's config: neither is applied.
      mark = dev.lines.length
      write('two', { policy: { config: { startOnce: 'yes' } } })
      const refused = await dev.expect((l) => l.type === 'preset/reloaded', mark)
      assert.equal(refused.ok, false)
      assert.match(String(refused.message), /startOnce/)
      assert.deepEqual(refused.swapped, [])

      // A plugin edit starts the next run: it still answers with the old model config.
      mark = dev.lines.length
      writeFileSync(join(dir, 'dev-policy', 'label.ts'), "export const Label = 'v2'\n")
      await dev.expect((l) => l.type === 'plugin/reloaded' && l.ok === true, mark)
      const end = await dev.expect((l) => l.type === 'run/end', mark)
      assert.equal(answerOf(end), 'one')
    } finally {
      const { code, stderr } = await dev.stop()
      assert.equal(code, 0, stderr)
    }
  })

  it('plans the agent again when the plugin list changes and no run is in flight', async () => {
    const { dir, write } = project('one')
    const dev = devProcess(dir, ['--task', 'refund window?'])
    try {
      await dev.expect(ended('one'))
      const mark = dev.lines.length
      write('two', { plugins: [{ plugin: 'loop-guard' }] })
      const replanned = await dev.expect((l) => l.type === 'preset/reloaded', mark)
      assert.equal(replanned.ok, true, String(replanned.message))
      assert.match(String((replanned.replan as string[])[0]), /plugin list changed \(added loop-guard\)/)
      const start = await dev.expect((l) => l.type === 'run/start', mark)
      assert.ok('loop-guard' in ((start.data?.plugins ?? {}) as object))
      await dev.expect(ended('two'), mark)
    } finally {
      assert.equal((await dev.stop()).code, 0)
    }
  })

  it('refuses a new plugin list while a run is in flight, saying why, and changes nothing', async () => {
    const slow = { delayMs: 600_000 }
    const { dir, write } = project('one', slow)
    const dev = devProcess(dir, ['--task', 'refund window?'])
    try {
      // The model answers only after ten minutes: the run is in flight until dev stops and cancels it.
      await dev.expect((l) => l.type === 'step/model-request')
      const mark = dev.lines.length
      write('one', { ...slow, plugins: [{ plugin: 'loop-guard' }] })
      const refused = await dev.expect((l) => l.type === 'preset/reloaded', mark)
      assert.equal(refused.ok, false)
      assert.match(String(refused.message), /plugin list changed \(added loop-guard\)/)
      assert.match(
        String(refused.message),
        /run run_\S+ is in flight, so nothing changed: restart cordage dev, or save the preset again once the run has ended/,
      )
    } finally {
      const { code, stderr } = await dev.stop()
      assert.equal(code, 0, stderr)
      assert.match(stderr, /run run_\S+ CANCELLED/)
    }
  })
})
