/**
 * Hot reload (`cordage dev`, core/host/dev.ts): editing a plugin's files swaps a rebuilt version into
 * the live agent at the next step boundary; a failed build or start keeps the old version serving, and
 * a policy never falls back to none; state crosses to the next version through `swapState`. The
 * plugin edited is a copy of test/fixtures/plugins/dev-policy in a temp folder.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { PluginEvent, RunEvent } from 'cordage'
import { DevReloader } from '../core/host/dev.ts'
import { devProcess } from './dev-process.ts'
import { saves } from './editor-saves.ts'
import { deskPreset, refundAnswer, supportDesk, tempDir, type Harness } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

const fixture = resolve(import.meta.dirname, 'fixtures/plugins/dev-policy')

/** A writable copy of the dev-policy fixture (an ES module package of its own, outside the repository). */
function pluginCopy(dir = tempDir('cordage-dev-')): string {
  const plugin = join(dir, 'dev-policy')
  cpSync(fixture, plugin, { recursive: true })
  writeFileSync(join(plugin, 'package.json'), JSON.stringify({ type: 'module' }))
  return plugin
}

const twoLookups = [
  { tool: 'lookup_policy', args: { topic: 'refunds' } },
  { tool: 'lookup_policy', args: { topic: 'shipping' } },
  { final: refundAnswer },
]

let harness: Harness | undefined
let dev: DevReloader | undefined
afterEach(async () => {
  dev?.stop()
  await dev?.settled()
  await harness?.stop()
  dev = undefined
  harness = undefined
})

async function setup(options: { script?: object[]; startOnce?: boolean; watch?: boolean } = {}) {
  const plugin = pluginCopy()
  harness = await supportDesk({
    script: (options.script ?? twoLookups) as never,
    policyPlugin: { path: plugin, config: { startOnce: !!options.startOnce } },
  })
  dev = await DevReloader.start(harness.app, { debounceMs: 20, watch: options.watch })
  return { plugin, h: harness, dev }
}

/** The next plugin/reloaded event for `name` (failing after 30 s: a deadline for a lost event, not a measure). */
function nextReload(h: Harness, name = 'dev-policy'): Promise<PluginEvent> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      stop()
      fail(new Error(`no plugin/reloaded for ${name} within 30 s`))
    }, 30_000)
    const stop = h.app.root.on('plugin/reloaded', (event: PluginEvent) => {
      if (event.name !== name) return
      stop()
      clearTimeout(timer)
      done(event)
    })
  })
}

async function decisions(h: Harness, runId: string) {
  return (await h.events(runId)).flatMap((e) =>
    e.type === 'tool/decision'
      ? [{ step: e.stepId, producer: e.producer, verdict: e.data.verdict, rule: e.data.ruleId, reason: e.data.reason }]
      : [],
  )
}

describe('cordage dev: hot reload', () => {
  it('reloads an edited plugin into a live run: the step in flight finishes on the old version, the next uses the new one, state carried over', async () => {
    const { plugin, h } = await setup({ script: [{ ...twoLookups[0], delayMs: 500 }, twoLookups[1], twoLookups[2]] })
    const log: string[] = []
    h.app.root.on('step/end', (e: RunEvent) => log.push(`step/end ${e.stepId}`))
    h.app.root.on('tool/end', (e: RunEvent) => log.push(`tool/end ${e.actionId}`))
    h.app.root.on('plugin/disposed', (e: PluginEvent) => log.push(`disposed ${e.name}`))
    h.app.root.on('plugin/loaded', (e: PluginEvent) => log.push(`loaded ${e.name}`))
    const reloaded = nextReload(h)
    // Edited while step 1 waits for the model, so the swap has to wait for that step to end.
    h.app.root.on('step/model-request', (e: RunEvent) => {
      if (e.stepId === 's1') writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v2'\n")
    })

    const state = await h.agent.run('refund window?')
    const event = await reloaded
    assert.equal(state.status, 'COMPLETED')
    assert.equal(event.ok, true, event.message)
    assert.equal(event.agent, 'support')
    assert.deepEqual(event.from?.version, '1.0.0')
    assert.deepEqual(event.to?.version, '1.0.0')
    assert.match(event.from?.hash ?? '', /^sha256:[0-9a-f]{16}$/)
    assert.match(event.to?.hash ?? '', /^sha256:[0-9a-f]{16}$/)
    assert.notEqual(event.to?.hash, event.from?.hash)
    // The tool call of step 1 got its result before the old version went away.
    assert.deepEqual(log.slice(0, 4), ['tool/end s1.a1', 'step/end s1', 'disposed dev-policy', 'loaded dev-policy'])
    assert.deepEqual(
      (await decisions(h, state.runId)).map((d) => [d.step, d.rule, d.reason]),
      [
        ['s1', 'v1', 'decision #1 by v1'],
        ['s2', 'v2', 'decision #2 by v2'],
      ],
    )
    assert.equal(dev!.hashOf('support', plugin), event.to?.hash)
  })

  it('reloads an edit saved while start is still going, after it took the hash (the watch was set first)', async () => {
    const plugin = pluginCopy()
    harness = await supportDesk({ script: twoLookups as never, policyPlugin: { path: plugin, config: { startOnce: false } } })
    const h = harness
    const reloaded = nextReload(h)
    let saved = false
    dev = await DevReloader.start(h.app, {
      debounceMs: 20,
      // The window, made deterministic: the hash of the folder is taken, start has not returned.
      hashed: (dir) => {
        if (dir !== plugin) return
        writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v2'\n")
        saved = true
      },
    })
    assert.ok(saved, 'the edit was saved during start')
    const event = await reloaded
    assert.equal(event.ok, true, event.message)
    assert.match(event.to?.hash ?? '', /^sha256:[0-9a-f]{16}$/)
    assert.equal(dev!.hashOf('support', plugin), event.to?.hash)
    const state = await h.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    assert.deepEqual(
      (await decisions(h, state.runId)).map((d) => d.rule),
      ['v2', 'v2'],
      'the next run decides with the edited version',
    )
  })

  it('reloads an edit saved during start before the hash of its folder was taken (a hash that holds the edit proves nothing)', async () => {
    const plugin = pluginCopy()
    harness = await supportDesk({ script: twoLookups as never, policyPlugin: { path: plugin, config: { startOnce: false } } })
    const h = harness
    const reloaded = nextReload(h)
    const order: string[] = []
    dev = await DevReloader.start(h.app, {
      debounceMs: 20,
      // Saved once another folder is hashed and before this one is: its hash is taken with the edit in,
      // while the agent still runs the version it loaded before.
      hashed: (dir) => {
        if (order.length === 0 && dir !== plugin) writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v2'\n")
        order.push(dir)
      },
    })
    assert.ok(order.indexOf(plugin) > 0, 'the plugin was hashed after the folder whose hook saved the edit')
    const event = await reloaded
    assert.equal(event.ok, true, event.message)
    assert.equal(event.from?.hash, undefined, 'what served before is not known: the hash start took already held the edit')
    assert.equal(dev!.hashOf('support', plugin), event.to?.hash)
    const state = await h.agent.run('refund window?')
    assert.deepEqual(
      (await decisions(h, state.runId)).map((d) => d.rule),
      ['v2', 'v2'],
      'the next run decides with the edited version',
    )
  })

  it('keeps the old version serving when the edit does not build, and reports where', async () => {
    const { plugin, h } = await setup()
    const failed = nextReload(h)
    writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v2\n")
    const event = await failed
    assert.equal(event.ok, false)
    assert.equal(event.code, 'plugin_start_failed')
    assert.match(event.message ?? '', /label\.ts:1:\d+: Unterminated string literal/)
    assert.equal(event.to, undefined)
    assert.equal(event.version, '1.0.0')
    const state = await h.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    assert.deepEqual(
      (await decisions(h, state.runId)).map((d) => d.rule),
      ['v1', 'v1'],
    )

    // Fixed: the next save goes through.
    const fixed = nextReload(h)
    writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v3'\n")
    assert.equal((await fixed).ok, true)
    const after = await h.agent.run('refund window?')
    assert.deepEqual(
      (await decisions(h, after.runId)).map((d) => d.rule),
      ['v3', 'v3'],
    )
  })

  it('keeps the old policy when the new version throws on start (fail closed: never none), with its state', async () => {
    const { plugin, h } = await setup()
    const first = await h.agent.run('refund window?')
    assert.deepEqual(
      (await decisions(h, first.runId)).map((d) => d.reason),
      ['decision #1 by v1', 'decision #2 by v1'],
    )
    const failed = nextReload(h)
    const source = readFileSync(join(plugin, 'index.ts'), 'utf8')
    writeFileSync(
      join(plugin, 'index.ts'),
      source.replace('let decided = 0', "throw new Error('rules file is corrupt')\n  let decided = 0"),
    )
    const event = await failed
    assert.equal(event.ok, false)
    assert.equal(event.code, 'plugin_start_failed')
    assert.match(event.message ?? '', /rules file is corrupt/)
    assert.equal(event.failClosed, undefined)
    assert.equal(h.app.pluginsOf('support')['dev-policy'], '1.0.0')
    const after = await h.agent.run('refund window?')
    assert.equal(after.status, 'COMPLETED')
    // The old version decides again, and got its own state back.
    assert.deepEqual(
      (await decisions(h, after.runId)).map((d) => [d.producer, d.verdict, d.reason]),
      [
        ['dev-policy@1.0.0', 'allow', 'decision #3 by v1'],
        ['dev-policy@1.0.0', 'allow', 'decision #4 by v1'],
      ],
    )
  })

  it('puts a refusing stand-in in place when neither the new nor the old policy version can start', async () => {
    const { plugin, h } = await setup({ startOnce: true, script: [twoLookups[0], { final: refundAnswer }] })
    const failed = nextReload(h)
    const source = readFileSync(join(plugin, 'index.ts'), 'utf8')
    writeFileSync(
      join(plugin, 'index.ts'),
      source.replace('let decided = 0', "throw new Error('rules file is corrupt')\n  let decided = 0"),
    )
    const event = await failed
    assert.equal(event.ok, false)
    assert.equal(event.failClosed, true)
    assert.match(
      event.message ?? '',
      /rules file is corrupt.*could not be plugged back either.*policy now refuse(s)? everything.*fail closed/,
    )
    const denied = await h.agent.run('refund window?')
    assert.deepEqual(
      (await decisions(h, denied.runId)).map((d) => [d.producer, d.verdict, d.rule]),
      [['dev-policy-fail-closed@1.0.0', 'deny', 'fail-closed']],
    )
    assert.notEqual(denied.status, 'COMPLETED')

    // A version that starts replaces the stand-in.
    const fixed = nextReload(h)
    writeFileSync(join(plugin, 'index.ts'), source)
    const ok = await fixed
    assert.equal(ok.ok, true, ok.message)
    const after = await h.agent.run('refund window?')
    assert.equal(after.status, 'COMPLETED')
    assert.deepEqual(
      (await decisions(h, after.runId)).map((d) => [d.producer, d.verdict, d.rule]),
      [['dev-policy@1.0.0', 'allow', 'v1']],
    )
  })

  it('reloads on every save, whichever way the editor saves, also in a folder made after it started', async () => {
    const { plugin, h } = await setup()
    const hashes = new Set([dev!.hashOf('support', plugin)])
    const styles = ['atomic', 'atomic', 'atomic', 'backup', 'replace', 'inPlace', 'atomic'] as const
    for (const [i, style] of styles.entries()) {
      const reloaded = nextReload(h)
      saves[style](join(plugin, 'label.ts'), `export const Label = 'v${i + 2}'\n`)
      const event = await reloaded
      assert.equal(event.ok, true, `${style} save #${i + 1}: ${event.message}`)
      assert.ok(!hashes.has(event.to?.hash), `${style} save #${i + 1} built a bundle seen before`)
      hashes.add(event.to?.hash)
    }
    // A folder made after the start is watched too: label.ts now takes its label from a file in it.
    mkdirSync(join(plugin, 'lib'))
    writeFileSync(join(plugin, 'lib', 'label.ts'), "export const Label = 'lib-1'\n")
    const moved = nextReload(h)
    saves.atomic(join(plugin, 'label.ts'), "export { Label } from './lib/label.ts'\n")
    assert.equal((await moved).ok, true, (await moved).message)
    for (const [i, style] of (['atomic', 'atomic', 'inPlace'] as const).entries()) {
      const reloaded = nextReload(h)
      saves[style](join(plugin, 'lib', 'label.ts'), `export const Label = 'lib-${i + 2}'\n`)
      const event = await reloaded
      assert.equal(event.ok, true, event.message)
      assert.ok(!hashes.has(event.to?.hash), `lib/label.ts save #${i + 1} (${style}) built a bundle seen before`)
      hashes.add(event.to?.hash)
    }
    // The last save is the code that decides.
    const state = await h.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    assert.deepEqual(
      (await decisions(h, state.runId)).map((d) => d.rule),
      ['lib-4', 'lib-4'],
    )
  })

  it('hands state over on every reload, and refuses a swap whose snapshot cannot be copied (old version keeps serving)', async () => {
    // Reloads are asked for here (no watching), so each edit is exactly one reload.
    const { plugin, h, dev } = await setup({ script: [twoLookups[0], { final: refundAnswer }], watch: false })
    for (const label of ['v2', 'v3']) {
      writeFileSync(join(plugin, 'label.ts'), `export const Label = '${label}'\n`)
      const [event] = await dev.reload(plugin)
      assert.equal(event.ok, true, event.message)
      await h.agent.run('refund window?')
    }
    const runs = await h.agent.store().list({})
    const reasons = (await Promise.all(runs.map(async (r) => (await decisions(h, r.runId)).map((d) => d.reason)))).flat().sort()
    assert.deepEqual(reasons, ['decision #1 by v2', 'decision #2 by v3'])

    // A snapshot holding a function cannot be handed over: the swap is refused before anything changes.
    const source = readFileSync(join(plugin, 'index.ts'), 'utf8')
    writeFileSync(
      join(plugin, 'index.ts'),
      source.replace('snapshot: () => ({ decided })', 'snapshot: () => ({ decided, f: () => decided })'),
    )
    assert.equal((await dev.reload(plugin))[0].ok, true)
    writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v4'\n")
    const [refused] = await dev.reload(plugin)
    assert.equal(refused.ok, false)
    assert.match(refused.message ?? '', /could not hand over its state \(snapshot\).*keeps serving/)
  })
})

describe('cordage dev (the command)', () => {
  it('watches a preset copy, hot-reloads an edited plugin into the next run, reports a broken edit, and stops cleanly', async () => {
    const dir = tempDir('cordage-dev-cli-')
    const plugin = pluginCopy(dir)
    const preset = deskPreset({ script: [twoLookups[0], { final: refundAnswer }], policyPlugin: { path: './dev-policy' } }, 'outbox.jsonl')
    writeFileSync(join(dir, 'preset.yml'), stringify(preset))
    const child = spawn(
      process.execPath,
      [bin, 'dev', '--preset', 'preset.yml', '--task', 'refund window?', '--debounce', '20', '--json'],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const lines: Record<string, unknown>[] = []
    let stderr = ''
    let waiting: { test: (line: Record<string, unknown>) => boolean; done: (line: Record<string, unknown>) => void } | undefined
    let buffer = ''
    child.stdout.on('data', (chunk) => {
      buffer += chunk
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = JSON.parse(buffer.slice(0, at)) as Record<string, unknown>
        buffer = buffer.slice(at + 1)
        lines.push(line)
        if (waiting?.test(line)) {
          waiting.done(line)
          waiting = undefined
        }
      }
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
    const expect = (test: (line: Record<string, unknown>) => boolean) => {
      const seen = lines.find(test)
      if (seen) return Promise.resolve(seen)
      return Promise.race([
        new Promise<Record<string, unknown>>((done) => {
          waiting = { test, done }
        }),
        new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`timed out; stderr:\n${stderr}`)), 30_000).unref()),
      ])
    }
    const decision = (rule: string) => (l: Record<string, unknown>) =>
      l.type === 'tool/decision' && (l.data as { ruleId: string }).ruleId === rule
    try {
      // The run at start decides with v1.
      await expect(decision('v1'))
      await expect((l) => l.type === 'run/end')
      assert.match(stderr, /watching \d+ plugin folder\(s\) of preset\.yml/)
      assert.match(stderr, /dev-policy +support:dev-policy/)

      writeFileSync(join(plugin, 'label.ts'), "export const Label = 'v2'\n")
      const reloaded = await expect((l) => l.type === 'plugin/reloaded')
      assert.equal(reloaded.ok, true, String(reloaded.message))
      assert.equal(reloaded.name, 'dev-policy')
      // The run after the reload decides with v2.
      await expect(decision('v2'))

      writeFileSync(join(plugin, 'label.ts'), 'export const Label = \n')
      const failed = await expect((l) => l.type === 'plugin/reloaded' && l.ok === false)
      assert.equal(failed.code, 'plugin_start_failed')
    } finally {
      child.kill('SIGTERM')
    }
    assert.equal(await exited, 0, stderr)
    assert.match(stderr, /stopped/)
    // No process left behind: the child is gone and nothing else runs from this folder.
    assert.throws(() => process.kill(child.pid!, 0), { code: 'ESRCH' })
  })

  it('follows a plugin file across saves by write-then-rename: an atomic save and the two after it each reload, and a folder that goes away is reported', async () => {
    const dir = tempDir('cordage-dev-cli-')
    const plugin = pluginCopy(dir)
    const preset = deskPreset({ script: [twoLookups[0], { final: refundAnswer }], policyPlugin: { path: './dev-policy' } }, 'outbox.jsonl')
    writeFileSync(join(dir, 'preset.yml'), stringify(preset))
    const dev = devProcess(dir, ['--task', 'refund window?'])
    const decision = (rule: string) => (l: Record<string, unknown>) =>
      l.type === 'tool/decision' && (l.data as { ruleId: string }).ruleId === rule
    try {
      await dev.expect(decision('v1'))
      await dev.expect((l) => l.type === 'run/end')
      for (const label of ['v2', 'v3', 'v4']) {
        const mark = dev.lines.length
        saves.atomic(join(plugin, 'label.ts'), `export const Label = '${label}'\n`)
        const reloaded = await dev.expect((l) => l.type === 'plugin/reloaded', mark)
        assert.equal(reloaded.ok, true, String(reloaded.message))
        // The run that follows the reload decides with this save's label, and ends before the next save.
        await dev.expect(decision(label), mark)
        await dev.expect((l) => l.type === 'run/end', mark)
      }

      // The folder renamed away can no longer be followed: that is said, not left silent.
      const mark = dev.lines.length
      renameSync(plugin, join(dir, 'dev-policy-moved'))
      const lost = await dev.expect((l) => l.type === 'plugin/reloaded', mark)
      assert.equal(lost.ok, false)
      assert.equal(lost.code, 'watch_failed')
      assert.equal(lost.name, 'dev-policy')
      assert.match(String(lost.message), /dev-policy was removed or renamed, so it is no longer watched: hot reload of dev-policy stopped/)
    } finally {
      assert.equal((await dev.stop()).code, 0, dev.stderr())
    }
  })
})
