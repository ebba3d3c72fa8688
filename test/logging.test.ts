/**
 * Plugin logs (host/logging.ts, docs/guides/logging.md): cordis's `ctx.logger(name)`, shown at the app's level
 * on stderr, one line each with the agent and plugin, the agent's secrets scrubbed; the level from
 * --log-level, $CORDAGE_LOG_LEVEL or the preset's `logLevel`; and scoped to each app, so neither cordis's
 * own logs nor another app's level leak across roots in one process.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { Context, Logger } from 'cordis'
import { Cordage } from '../core/host/app.ts'
import { loadPreset } from '../core/host/preset.ts'
import type { CordageError } from '../core/contracts/errors.ts'
import { tempDir } from './temp.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')
const chatty = resolve(root, 'test/fixtures/plugins/chatty')
const Secret = 'sk-live-9f8e7d6c5b4a39281706'

function preset(top: string[] = [], chattyConfig = '{}'): string {
  const file = join(tempDir(), 'preset.yml')
  writeFileSync(
    file,
    [
      ...top,
      'agents:',
      '  a:',
      '    task: Say hello.',
      '    model: { plugin: model-scripted, config: { script: [ { final: Hello. } ] } }',
      '    plugins:',
      '      - store-memory',
      '      - tools-registry',
      '      - context-basic',
      '      - { plugin: policy-rules, config: { default: deny } }',
      '      - { plugin: verifier-basic, config: { minCount: 0 } }',
      `      - { path: ${JSON.stringify(chatty)}, config: ${chattyConfig} }`,
      '',
    ].join('\n'),
  )
  return file
}

function cordage(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const base: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
    delete base.CORDAGE_LOG_LEVEL
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...base, ...env } },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
      },
    )
  })
}

/** The levels of chatty's lines on stderr, in order. */
function shown(stderr: string): string[] {
  return [...stderr.matchAll(/^(\w+) \[a\/chatty\] chatty-(\w+) line/gm)].map((m) => {
    assert.equal(m[1], m[2])
    return m[1]
  })
}

describe('plugin logs in a real cordage run (child process)', { concurrency: 4 }, () => {
  it('by default: only warn and error, on stderr, one line each naming agent and plugin; stdout untouched', async () => {
    const r = await cordage(['run', '--preset', preset(), '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(shown(r.stderr), ['error', 'warn'])
    assert.match(r.stderr, /^error \[a\/chatty\] chatty-error line$/m)
    for (const line of r.stdout.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line)
    assert.doesNotMatch(r.stdout, /chatty-/)
  })

  it('--log-level debug shows every level; stdout stays JSON only', async () => {
    const r = await cordage(['run', '--preset', preset(), '--json', '--log-level', 'debug'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(shown(r.stderr), ['error', 'warn', 'info', 'debug'])
    assert.match(r.stderr, /^debug \[a\/chatty\] chatty-debug line \{ detail: 1 \}$/m)
    for (const line of r.stdout.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line)
  })

  it("the preset's logLevel: debug shows debug; $CORDAGE_LOG_LEVEL beats it; the flag beats both", async () => {
    const file = preset(['logLevel: debug'])
    const fromPreset = await cordage(['run', '--preset', file])
    assert.equal(fromPreset.code, 0, fromPreset.stderr)
    assert.deepEqual(shown(fromPreset.stderr), ['error', 'warn', 'info', 'debug'])
    const fromEnv = await cordage(['run', '--preset', file], { CORDAGE_LOG_LEVEL: 'info' })
    assert.deepEqual(shown(fromEnv.stderr), ['error', 'warn', 'info'])
    const fromFlag = await cordage(['run', '--preset', file, '--log-level', 'error'], { CORDAGE_LOG_LEVEL: 'info' })
    assert.deepEqual(shown(fromFlag.stderr), ['error'])
  })

  it('an unknown level is a config error naming the levels, exit 2: in the preset, the flag and the variable', async () => {
    const inPreset = await cordage(['run', '--preset', preset(['logLevel: verbose'])])
    assert.equal(inPreset.code, 2)
    assert.match(inPreset.stderr, /^error \[preset_invalid\]: preset .* has 1 problem/m)
    assert.match(inPreset.stderr, /preset\.yml:1:\d+ logLevel: expected a log level: one of error, warn, info, debug, found "verbose"/)
    const flag = await cordage(['run', '--preset', preset(), '--log-level', 'loud'])
    assert.equal(flag.code, 2)
    assert.match(flag.stderr, /^error \[invalid_input\]: --log-level must be one of error, warn, info, debug, got "loud"$/m)
    const env = await cordage(['check', '--preset', preset()], { CORDAGE_LOG_LEVEL: 'trace' })
    assert.equal(env.code, 2)
    assert.match(env.stderr, /^error \[invalid_input\]: CORDAGE_LOG_LEVEL must be one of error, warn, info, debug, got "trace"$/m)
    for (const r of [inPreset, flag, env]) assert.doesNotMatch(r.stderr, /chatty-|\n\s+at /)
  })

  it('docs/guides/logging.md shows the example plugin as it is, and the lines it prints at --log-level debug', async () => {
    const doc = readFileSync(join(root, 'docs/guides/logging.md'), 'utf8')
    const code = /```ts\n\/\/ file: (\S+)\n([\s\S]*?)```/.exec(doc)!
    assert.equal(code[2], readFileSync(join(root, code[1]), 'utf8'))
    const shownLines = /```text\n([\s\S]*?)```/.exec(doc)![1].trim().split('\n')
    const r = await cordage(['run', '--preset', preset([], '{ tokenEnv: CHATTY_TOKEN }'), '--log-level', 'debug'], { CHATTY_TOKEN: Secret })
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(
      r.stderr.split('\n').filter((l) => l.includes('[a/chatty]')),
      shownLines,
    )
  })

  it('a secret in a log line is scrubbed', async () => {
    const r = await cordage(['run', '--preset', preset([], '{ tokenEnv: CHATTY_TOKEN }')], { CHATTY_TOKEN: Secret })
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stderr, /^warn \[a\/chatty\] connecting with key \[redacted:CHATTY_TOKEN\]$/m)
    assert.ok(!r.stderr.includes(Secret) && !r.stdout.includes(Secret))
  })
})

describe('plugin logs are scoped to each app (one process)', () => {
  it('logLevel is a preset key like any other: --set changes it, and checks it', () => {
    assert.equal(loadPreset(preset(['logLevel: error']), { sets: ['logLevel=debug'] }).logLevel, 'debug')
    assert.throws(
      () => loadPreset(preset(), { sets: ['logLevel=loud'] }),
      (error: CordageError) => {
        assert.equal(error.code, 'preset_invalid')
        assert.match(error.message, /--set logLevel=loud logLevel: expected a log level: one of error, warn, info, debug, found "loud"/)
        return true
      },
    )
  })

  it("two apps at different levels each get their own lines; another cordis root's logs are neither taken nor silenced", async () => {
    // A target of someone else's (another cordis application in the process), there before any app.
    const foreign: Logger.Record[] = []
    Logger.targets.push({
      levels: { base: Logger.DEBUG },
      record: (r) => {
        foreign.push(r)
      },
    })
    const loud: string[] = []
    const quiet: string[] = []
    const a = await Cordage.fromPreset(preset([], '{ tokenEnv: CHATTY_TOKEN_A }'), { logLevel: 'debug', log: (line) => loud.push(line) })
    const b = await Cordage.fromPreset(preset(), { logLevel: 'warn', log: (line) => quiet.push(line) })
    try {
      assert.deepEqual(
        loud.filter((l) => l.includes('chatty-')).map((l) => l.split(' ')[0]),
        ['error', 'warn', 'info', 'debug'],
      )
      assert.deepEqual(
        quiet.filter((l) => l.includes('chatty-')).map((l) => l.split(' ')[0]),
        ['error', 'warn'],
      )
      assert.ok(!foreign.some((r) => r.content.includes('chatty-')), "a Cordage app's lines do not reach other targets")

      // cordis's own "app" logger is not silenced process-wide (as it was): for another root it still prints.
      assert.equal(Logger.levels.app, undefined)
      const other = new Context()
      other.plugin({
        name: 'breaks',
        apply() {
          throw new Error('other app failed')
        },
      })
      other.logger('other').debug('other debug')
      await new Promise((done) => setTimeout(done, 20))
      assert.ok(foreign.some((r) => r.name === 'app' && r.content.includes('other app failed')))
      assert.ok(foreign.some((r) => r.name === 'other' && r.content === 'other debug'))
      assert.ok(![...loud, ...quiet].some((l) => l.includes('other')))

      // The same failure under a Cordage app is reported by the host; cordis's line shows at debug only.
      a.root.emit(a.root, 'internal/warning', new Error('cordis says'))
      b.root.emit(b.root, 'internal/warning', new Error('cordis says'))
      assert.ok(loud.some((l) => l.startsWith('debug [cordis] Error: cordis says\\n')))
      assert.ok(!quiet.some((l) => l.includes('cordis says')))
      assert.ok(!foreign.some((r) => r.content.includes('cordis says')))
    } finally {
      await a.stop()
      await b.stop()
    }
  })

  it("a secret of the app's agents is scrubbed from its lines, whatever the plugin passes", async () => {
    process.env.CHATTY_TOKEN_B = Secret
    const lines: string[] = []
    const app = await Cordage.fromPreset(preset(['secrets: [CHATTY_TOKEN_B]']), { log: (line) => lines.push(line) })
    try {
      app.root.logger('probe').warn('as %s, in base64 %s', Secret, Buffer.from(Secret).toString('base64'))
      const probe = lines.filter((l) => l.includes('probe'))
      assert.equal(probe.length, 1)
      assert.match(probe[0], /^warn \[probe\] as \[redacted:CHATTY_TOKEN_B\], in base64 \[redacted:CHATTY_TOKEN_B\]/)
      assert.ok(!probe[0].includes(Secret) && !probe[0].includes(Buffer.from(Secret).toString('base64').slice(0, 20)))
    } finally {
      delete process.env.CHATTY_TOKEN_B
      await app.stop()
    }
  })
})
