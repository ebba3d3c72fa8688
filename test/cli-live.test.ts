/**
 * Issue 13 item 6: the CLI while work is in flight and when it fails. The status line (unit, and the
 * real binary in a pseudo-terminal), --stream (scripted model, and model-openai streaming from a
 * provider server on loopback), --json errors over several commands, FORCE_COLOR / NO_COLOR, did you
 * mean, and the help's columns.
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { stringify } from 'yaml'
import { emptyState, type RunEvent } from 'cordage'
import type { ModelDeltaEvent } from '../core/contracts/events.ts'
import { Commands, helpText } from '../core/cli/args.ts'
import { colorChoice } from '../core/cli/color.ts'
import { finish, live } from '../core/cli/live.ts'
import { main, type Output } from '../core/cli/main.ts'
import { selfCommand } from '../core/cli/self.ts'
import { StatusLine } from '../core/cli/status-line.ts'
import { StreamPrinter } from '../core/cli/stream.ts'
import { deskPreset, refundAnswer, tempDir, type DeskOptions } from './helpers.ts'
import { ProviderServer } from './servers/provider-server.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')
const ClearLine = '\r\u001b[2K'
const run = promisify(execFile)

/** The binary with stdout and stderr to pipes; the environment's colour variables are only those given. */
function cordage(args: string[], env: Record<string, string> = {}) {
  const clean = { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, ...env }
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', env: clean })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

function presetFile(options: DeskOptions): string {
  const file = join(tempDir(), 'preset.yml')
  writeFileSync(file, stringify(deskPreset({ retry: { attempts: 2, backoffMs: 1 }, ...options }, 'outbox.jsonl')))
  return file
}

/** Everything an Output receives, in order: `out:` and `err:` lines, `raw:` and `errRaw:` writes. */
function recorder(tty: boolean) {
  const log: string[] = []
  const io: Output = {
    out: (l) => log.push(`out:${l}`),
    err: (l) => log.push(`err:${l}`),
    write: (t) => log.push(`raw:${t}`),
    errWrite: (t) => log.push(`errRaw:${t}`),
    errIsTTY: tty,
    outIsTTY: tty,
    color: false,
  }
  return { io, log }
}

let seq = 0
function event(type: string, data: Record<string, unknown>, ids: Record<string, string> = {}): RunEvent {
  return { type, data, runId: 'run_1', seq: ++seq, ts: 0, producer: 'kernel', v: 1, ...ids } as unknown as RunEvent
}

describe('the status line', () => {
  it('shows the model call or tool in progress with its elapsed time, and clears when it ends', () => {
    const writes: string[] = []
    let now = 1000
    const line = new StatusLine(
      (t) => writes.push(t),
      () => now,
      60_000,
    )
    line.event(event('step/model-request', { model: 'm', attempt: 1 }, { stepId: 's1' }))
    now += 2300
    assert.match(line.text(), /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] model call 2\.3s$/)
    line.event(event('step/model-response', {}, { stepId: 's1' }))
    assert.equal(line.text(), '')
    assert.equal(writes.at(-1), ClearLine)
    line.event(event('tool/start', { tool: 'lookup_order', attempt: 2 }, { stepId: 's1', actionId: 's1.a1' }))
    now += 1100
    assert.match(line.text(), / tool lookup_order \(attempt 2\) 1\.1s$/)
    line.event(event('step/model-request', { model: 'm', attempt: 3 }, { stepId: 's2' }))
    assert.match(line.text(), / model call \(attempt 3\) 0\.0s \(\+1 more\)$/)
    line.event(event('run/end', { status: 'COMPLETED' }))
    assert.equal(line.text(), '', 'the run ending clears what it was waiting on')
    line.close()
  })

  it('is cleared before every line printed and drawn again after, and cleared at the end', () => {
    const { io, log } = recorder(true)
    const view = live(io, {})
    view.event(event('step/model-request', { model: 'm', attempt: 1 }, { stepId: 's1' }))
    const drawn = log.findIndex((l) => l.startsWith('errRaw:') && l.includes('model call'))
    assert.ok(drawn >= 0, log.join('\n'))
    view.io.err('a log line')
    const printed = log.indexOf('err:a log line')
    assert.equal(log[printed - 1], `errRaw:${ClearLine}`, 'cleared right before the line')
    assert.match(log[printed + 1], /^errRaw:\r\u001b\[2K. model call \d+\.\ds$/, 'drawn again right after')
    view.close()
    assert.equal(log.at(-1), `errRaw:${ClearLine}`)
    // Every line of output was printed on a cleared line: no draw is directly followed by a line.
    for (let i = 1; i < log.length; i++)
      if (/^(out|err):/.test(log[i])) assert.equal(log[i - 1], `errRaw:${ClearLine}`, `${log[i]} after ${log[i - 1]}`)
  })

  for (const [what, tty, flags] of [
    ['stderr is not a terminal', false, {}],
    ['--json', true, { json: true }],
    ['--quiet', true, { quiet: true }],
  ] as const) {
    it(`is never drawn when ${what}`, () => {
      const { io, log } = recorder(tty)
      const view = live(io, flags)
      view.event(event('step/model-request', { model: 'm', attempt: 1 }, { stepId: 's1' }))
      view.event(event('tool/start', { tool: 't', attempt: 1 }, { stepId: 's1', actionId: 's1.a1' }))
      view.close()
      assert.deepEqual(
        log.filter((l) => l.startsWith('errRaw:')),
        [],
      )
      assert.equal(log.filter((l) => l.startsWith('out:')).length, 2)
    })
  }

  const hasScript = spawnSync('script', ['--version']).status === 0
  it('is drawn by the real binary in a terminal, and never into pipes', { skip: !hasScript && 'no script(1)' }, () => {
    const file = presetFile({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    const command = [process.execPath, bin, 'run', '--preset', file].map((a) => `'${a}'`).join(' ')
    const tty = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    assert.equal(tty.status, 0, tty.stdout)
    assert.match(tty.stdout, /\r\u001b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] model call \d+\.\ds/)
    assert.match(tty.stdout, /\r\u001b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] tool lookup_policy \d+\.\ds/)
    // Each drawing is cleared before anything else is written, and the last line is the run's status.
    const draws = [...tty.stdout.matchAll(/\r\u001b\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\r\n]*?\d+\.\ds( \(\+\d+ more\))?/g)]
    assert.ok(draws.length >= 2)
    for (const draw of draws) assert.equal(tty.stdout.slice(draw.index + draw[0].length).slice(0, ClearLine.length), ClearLine, draw[0])
    assert.match(tty.stdout, /\nrun run_\S+ COMPLETED\r?\n$/)
    assert.doesNotMatch(tty.stdout, /model-response[^\n]*\n\r\u001b\[2K. model call/, 'a call that ended is not shown again')
    const piped = cordage(['run', '--preset', file], { NO_COLOR: '1' })
    assert.equal(piped.code, 0, piped.stderr)
    assert.doesNotMatch(piped.stderr + piped.stdout, /\u001b|model call/)
  })
})

describe('--stream', () => {
  it("prints a scripted model's answer whole when it arrives, once", () => {
    const { code, stdout } = cordage(['run', '--preset', 'presets/minimal.yml', '--stream'])
    assert.equal(code, 0)
    const lines = stdout.split('\n')
    assert.equal(lines.filter((l) => l === 'Hello.').length, 1, stdout)
    assert.match(lines[lines.indexOf('Hello.') + 1], /step\/model-response +s1 +final "Hello\."/)
    assert.doesNotMatch(cordage(['run', '--preset', 'presets/minimal.yml']).stdout, /^Hello\.$/m, 'only with --stream')
  })

  it("shows the control characters of a model's answer as text: no escape sequence reaches the terminal", () => {
    const answer = 'Done.\u001b]52;c;ZWNobw==\u0007\u001b[2J\rforged\u009b1m\u007f end'
    const file = join(tempDir(), 'escape.yml')
    writeFileSync(
      file,
      stringify({
        cordage: 1,
        agents: {
          echo: {
            task: 'Say hello.',
            budgets: { maxSteps: 2 },
            model: { plugin: 'model-scripted', config: { script: [{ final: answer }] } },
            plugins: [
              'store-memory',
              'tools-registry',
              'context-basic',
              { plugin: 'policy-rules', config: { default: 'deny' } },
              { plugin: 'verifier-basic', config: { minCount: 0 } },
            ],
          },
        },
      }),
    )
    const { code, stdout, stderr } = cordage(['run', '--preset', file, '--stream'])
    assert.equal(code, 0, stderr)
    const shown = stdout.split('\n').find((l) => l.startsWith('Done.'))
    assert.equal(shown, 'Done.\\x1b]52;c;ZWNobw==\\x07\\x1b[2J\\x0dforged\\x9b1m\\x7f end', stdout)
    // Not in the answer line, nor anywhere else on stdout (the event lines quote it as JSON).
    assert.doesNotMatch(stdout, /[\u001b\u0007\u009b\u007f]|\r/)
  })

  it('keeps a CRLF split across two pieces, and shows a bare CR', () => {
    const { io, log } = recorder(true)
    const printer = new StreamPrinter(io.out, io.write, false)
    printer.delta({ runId: 'r', stepId: 's1', text: 'one\r' } as ModelDeltaEvent)
    printer.delta({ runId: 'r', stepId: 's1', text: '\ntwo\r' } as ModelDeltaEvent)
    printer.endLine()
    assert.equal(log.map((l) => l.replace(/^raw:/, '')).join(''), 'one\r\ntwo\\x0d\n')
  })

  it("prints model-openai's text as it streams in, in pieces with --json, once as text without", async () => {
    const key = 'sk-test-stream-0123456789'
    const server = await ProviderServer.start({
      protocol: 'openai',
      apiKey: key,
      loop: true,
      replies: [{ toolCalls: [{ name: 'lookup_policy', args: { topic: 'refunds' } }] }, { text: refundAnswer, chunkChars: 8 }],
    })
    try {
      const modelPlugin = {
        plugin: 'model-openai',
        config: { model: 'test-model', baseUrl: server.baseUrl, apiKeyEnv: 'CORDAGE_TEST_STREAM_KEY' },
      }
      const file = presetFile({ script: [], modelPlugin, verifier: { minCount: 0 } })
      const env = { ...process.env, NO_COLOR: '1', CORDAGE_TEST_STREAM_KEY: key }
      const json = await run(process.execPath, [bin, 'run', '--preset', file, '--stream', '--json'], { cwd: root, env })
      const objects = json.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      const deltas = objects.filter((o) => o.type === 'model/delta' && o.text !== undefined)
      assert.ok(deltas.length >= Math.ceil(refundAnswer.length / 8), `${deltas.length} pieces`)
      assert.equal(deltas.map((d) => d.text ?? '').join(''), refundAnswer)
      assert.ok(deltas.every((d) => d.seq === undefined && d.runId && d.stepId === 's2'))
      // The pieces come before the response they make up.
      const response = objects.findIndex((o) => o.type === 'step/model-response' && o.stepId === 's2')
      assert.ok(objects.indexOf(deltas.at(-1)) < response)

      const text = await run(process.execPath, [bin, 'run', '--preset', file, '--stream'], { cwd: root, env })
      const lines = text.stdout.split('\n')
      assert.equal(lines.filter((l) => l === refundAnswer).length, 1, text.stdout)
      assert.match(lines[lines.indexOf(refundAnswer) + 1], /step\/model-response/)
    } finally {
      await server.close()
    }
  })
})

describe('--json errors', () => {
  const cases: [string, string[], number, string, Record<string, unknown>][] = [
    ['an unknown command', ['chekc', '--json'], 2, 'invalid_input', { command: null }],
    ['an unknown flag', ['run', '--presets', 'x', '--json'], 2, 'invalid_input', { command: 'run', flag: '--presets' }],
    ['a missing preset', ['run', '--preset', 'nope.yml', '--json'], 2, 'preset_not_found', { command: 'run', preset: 'nope.yml' }],
    ['a bad --after', ['events', 'run_1', '--after', '-1', '--json'], 2, 'invalid_input', { command: 'events', flag: '--after' }],
    [
      'a bad --scope',
      ['approve', 'run_1', 's1.a1', '--scope', 'all', '--json'],
      2,
      'invalid_input',
      { command: 'approve', flag: '--scope' },
    ],
    ['a bad --poll', ['worker', '--poll', '1', '--json'], 2, 'invalid_input', { command: 'worker', flag: '--poll' }],
    [
      'a run not in the store',
      ['verify', 'run_nope', '--preset', 'presets/minimal.yml', '--json'],
      2,
      'run_not_found',
      { command: 'verify' },
    ],
  ]
  for (const [what, args, exit, code, where] of cases) {
    it(`answers ${what} with one JSON line on stderr`, () => {
      const result = cordage(args)
      assert.equal(result.code, exit, result.stderr)
      assert.equal(result.stdout, '')
      const lines = result.stderr.trim().split('\n')
      assert.equal(lines.length, 1, result.stderr)
      const { error } = JSON.parse(lines[0])
      assert.equal(error.code, code)
      assert.equal(typeof error.message, 'string')
      assert.ok(error.message.length > 10)
      for (const [key, value] of Object.entries(where)) assert.deepEqual(error.where[key], value, JSON.stringify(error.where))
      // The same error without --json is the readable line.
      const plain = cordage(args.filter((a) => a !== '--json'))
      assert.match(plain.stderr, new RegExp(`^error \\[${code}\\]: `, 'm'))
    })
  }

  it('gives a config error its problems one by one', () => {
    const file = join(tempDir(), 'bad.yml')
    writeFileSync(
      file,
      'cordage: 1\nagents:\n  a:\n    budgets: { maxSteps: -1 }\n    model: { plugin: model-scripted }\n    plugins: [nope-plugin]\n',
    )
    const result = cordage(['check', '--preset', file, '--json'])
    assert.equal(result.code, 2)
    const { error } = JSON.parse(result.stderr.trim())
    assert.match(error.code, /^(preset_invalid|plugin_not_found)$/)
    assert.equal(error.where.preset, file)
    assert.ok(Array.isArray(error.details) && error.details.length >= 1, JSON.stringify(error))
  })

  it('reports an internal error as code internal_error, its stack only when debugging', async () => {
    const internal = async (args: string[], env: Record<string, string | undefined> = {}) => {
      const err: string[] = []
      const io: Output = {
        out: () => {
          throw new TypeError('the sink broke')
        },
        err: (l) => err.push(l),
        color: false,
      }
      const saved = { CORDAGE_DEBUG: process.env.CORDAGE_DEBUG, CORDAGE_LOG_LEVEL: process.env.CORDAGE_LOG_LEVEL }
      Object.assign(process.env, { CORDAGE_DEBUG: '', CORDAGE_LOG_LEVEL: '' }, env)
      try {
        assert.equal(await main(['check', '--preset', 'presets/minimal.yml', '--json', ...args], io), 1)
      } finally {
        for (const [key, value] of Object.entries(saved))
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
      }
      assert.equal(err.length, 1)
      return JSON.parse(err[0]).error
    }
    const error = await internal([])
    assert.deepEqual([error.code, error.message, error.where.command], ['internal_error', 'the sink broke', 'check'])
    // The stack names this machine's absolute paths: not in what a program may log or pass on.
    assert.equal(error.stack, undefined)
    assert.doesNotMatch(JSON.stringify(error), new RegExp(root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    for (const [args, env] of [
      [[], { CORDAGE_DEBUG: '1' }],
      [['--log-level', 'debug'], {}],
      [[], { CORDAGE_LOG_LEVEL: 'debug' }],
    ] as const)
      assert.match((await internal([...args], env)).stack, /TypeError: the sink broke\n\s+at /, JSON.stringify({ args, env }))
  })
})

describe('colour', () => {
  const coloured = /\u001b\[3\dm/
  for (const [env, on] of [
    [{}, false],
    [{ FORCE_COLOR: '1' }, true],
    [{ FORCE_COLOR: '' }, true],
    [{ FORCE_COLOR: '3' }, true],
    [{ FORCE_COLOR: '0' }, false],
    [{ FORCE_COLOR: 'false' }, false],
    [{ FORCE_COLOR: '1', NO_COLOR: '1' }, false],
  ] as [Record<string, string>, boolean][]) {
    it(`is ${on ? 'on' : 'off'} into a pipe with ${JSON.stringify(env)}`, () => {
      const { code, stdout, stderr } = cordage(['run', '--preset', 'presets/minimal.yml'], env)
      assert.equal(code, 0, stderr)
      assert.equal(coloured.test(stdout), on, stdout)
      assert.doesNotMatch(stderr, /warning/)
    })
  }

  it('says a FORCE_COLOR that means nothing is ignored', () => {
    const { stdout, stderr } = cordage(['run', '--preset', 'presets/minimal.yml'], { FORCE_COLOR: 'always' })
    assert.match(stderr, /^warning: FORCE_COLOR="always" is ignored: use 0 or false/m)
    assert.doesNotMatch(stdout, coloured)
  })

  it('follows the terminal when nothing is set', () => {
    assert.equal(colorChoice(true, {}).color, true)
    assert.equal(colorChoice(true, { TERM: 'dumb' }).color, false)
    assert.equal(colorChoice(true, { NO_COLOR: '1' }).color, false)
    assert.equal(colorChoice(true, { NO_COLOR: '' }).color, true, 'an empty NO_COLOR is not set')
  })
})

describe('did you mean, and the help', () => {
  for (const [typed, meant] of [
    ['rnu', 'run'],
    ['resme', 'resume'],
    ['grnats', 'grants'],
  ]) {
    it(`suggests ${meant} for ${typed}`, () => {
      const { code, stderr } = cordage([typed])
      assert.equal(code, 2)
      assert.match(stderr, new RegExp(`unknown command "${typed}" \\(did you mean "${meant}"\\?\\)`))
    })
  }
  it('suggests the flag a mistyped one is near to', () => {
    assert.match(cordage(['approve', 'r', 'a', '--scpoe', 'run']).stderr, /Unknown option '--scpoe' \(did you mean --scope\?\)/)
    assert.match(cordage(['run', '--stram']).stderr, /\(did you mean --stream\?\)/)
  })

  /** Rows of a two-column list: [name, column where its description starts] and continuation lines. */
  function checkColumns(lines: string[], names: string[], what: string) {
    const rows = lines.filter((l) => /^ {2}\S/.test(l) && names.includes(l.trim().split(/\s+/)[0]))
    assert.equal(rows.length, names.length, `${what}: one row per name`)
    const longest = Math.max(...names.map((n) => n.length))
    const columns = new Set<number>()
    for (const row of rows) {
      const name = row.trim().split(/\s+/)[0]
      const column = row.slice(2 + name.length).search(/\S/) + 2 + name.length
      assert.ok(column - (2 + name.length) >= 2, `${what}: "${row}" — the name touches its description`)
      columns.add(column)
    }
    assert.equal(columns.size, 1, `${what}: descriptions start at ${[...columns].join(', ')}`)
    const [column] = columns
    assert.equal(column, 2 + longest + 2)
    // A wrapped description goes on at the same column.
    const first = lines.indexOf(rows[0])
    const last = lines.indexOf(rows.at(-1)!)
    for (const line of lines.slice(first, last + 1)) {
      if (rows.includes(line)) continue
      assert.equal(line.search(/\S/), column, `${what}: continuation "${line}"`)
    }
  }

  for (const width of [undefined, 60, 200]) {
    it(`aligns the commands and each command's flags in one column${width ? ` at width ${width}` : ''}`, () => {
      const tool = helpText(undefined, width).split('\n')
      checkColumns(
        tool,
        Commands.map((c) => c.name),
        'cordage --help',
      )
      if (width) assert.ok(tool.filter((l) => /^ {2}\S/.test(l)).every((l) => l.length <= Math.max(width, 45)))
      for (const command of Commands) {
        const flags = Object.keys(command.flags).map((f) => `--${f}`)
        if (flags.length) checkColumns(helpText(command, width).split('\n'), flags, `cordage ${command.name} --help`)
      }
    })
  }

  it('prints the same aligned list from the binary', () => {
    const { code, stdout } = cordage(['--help'])
    assert.equal(code, 0)
    checkColumns(
      stdout.split('\n'),
      Commands.map((c) => c.name),
      'cordage --help',
    )
    assert.doesNotMatch(stdout, /reconcileSettle|playgroundServe/)
  })
})

describe('the hints after a pause', () => {
  it('say npx cordage when this cordage is installed in node_modules, cordage from a checkout', () => {
    assert.equal(selfCommand(join('/home/me/app', 'node_modules', 'cordage', 'core', 'cli')), 'npx cordage')
    assert.equal(selfCommand(join('/usr/lib', 'node_modules', 'cordage', 'dist', 'core', 'cli')), 'npx cordage')
    assert.equal(selfCommand(join('/home/me/node-modules-notes', 'cordage', 'core', 'cli')), 'cordage')
    // This checkout is not an install: the hints stay `cordage` (test/cli.test.ts runs the binary)…
    assert.equal(selfCommand(undefined, {}), 'cordage')
    // …unless it was started through npx (as the README does in a checkout), where `cordage` is not on PATH.
    assert.equal(selfCommand(join('/home/me/cordage', 'core', 'cli'), { npm_command: 'exec' }), 'npx cordage')
    assert.equal(selfCommand(join('/home/me/cordage', 'core', 'cli'), { npm_command: 'test' }), 'cordage')
    const state = {
      ...emptyState('run_1'),
      status: 'WAITING_APPROVAL',
      waiting: { actionId: 's1.a1' },
      actions: { 's1.a1': { status: 'pending', decision: { approvers: ['me'] } } },
    } as unknown as Parameters<typeof finish>[0]
    const { io, log } = recorder(false)
    assert.equal(finish(state, io, { preset: 'p.yml' }, false, 'npx cordage'), 5)
    const preset = resolve('p.yml')
    assert.ok(log.includes(`err:  approve: npx cordage approve run_1 s1.a1 --preset ${preset} --by me`), log.join('\n'))
    assert.ok(log.includes(`err:  reject:  npx cordage reject run_1 s1.a1 --preset ${preset} --by me`), log.join('\n'))
  })
})

describe('cordage help CMD', () => {
  it("prints CMD's help, as CMD --help does; an unknown CMD is a usage error", () => {
    const help = cordage(['help', 'run'])
    assert.equal(help.code, 0, help.stderr)
    assert.equal(help.stdout, cordage(['run', '--help']).stdout)
    assert.match(help.stdout, /^usage: cordage run /m)
    assert.doesNotMatch(help.stdout, /^usage: cordage <command>/m)
    assert.match(cordage(['help']).stdout, /^usage: cordage <command>/m)
    const unknown = cordage(['help', 'rnu'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /"help" takes one command, got "rnu"/)
  })
})
