/**
 * The `cordage` binary, run as a real child process: what it prints and the exit code for each outcome.
 */
import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { chmodSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { main } from '../core/cli/main.ts'
import { Commands, GlobalFlags } from '../core/cli/args.ts'
import { deskPreset, refundAnswer, tempDir, type DeskOptions } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')

function cordage(args: string[], cwd = root) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

function presetFile(options: DeskOptions): string {
  const dir = tempDir()
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(deskPreset({ retry: { attempts: 2, backoffMs: 1 }, ...options }, 'outbox.jsonl')))
  return file
}

function jsonEvents(stdout: string): RunEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
}

describe('cordage CLI', () => {
  it('runs the default preset, printing events live, and exits 0 on COMPLETED', () => {
    const { code, stdout, stderr } = cordage(['run', '--preset', 'presets/default.yml'])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^ {3}1 run\/start/m)
    assert.match(stdout, /tool\/decision +s1\.a1 +allow rule=read-only/)
    assert.match(stdout, /run\/end +t1 +COMPLETED steps=2/)
    assert.match(stderr, /^run run_\S+ COMPLETED$/m)
  })

  it('prints one JSON object per line with --json, the last being run/end with status and failure code', () => {
    const { code, stdout } = cordage(['run', '--preset', 'presets/default.yml', '--json'])
    assert.equal(code, 0)
    const events = jsonEvents(stdout)
    events.forEach((e, i) => assert.equal(e.seq, i + 1))
    const last = events.at(-1)!
    assert.ok(last.type === 'run/end')
    assert.equal(last.data.status, 'COMPLETED')
    assert.ok('failureCode' in last.data || last.data.failureCode === undefined)
  })

  const outcomes: [string, DeskOptions, number, string, string | undefined][] = [
    ['FAILED (tool_timeout)', { script: [{ tool: 'slow_lookup', args: { query: 'q' } }] }, 1, 'FAILED', 'tool_timeout'],
    ['FAILED_VERIFICATION', { script: [{ final: 'no sources' }] }, 3, 'FAILED_VERIFICATION', 'missing_evidence'],
    [
      'STOPPED',
      { script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }], model: { onExhausted: 'repeat-last' }, budgets: { maxSteps: 2 } },
      4,
      'STOPPED',
      'max_steps',
    ],
  ]
  for (const [what, options, exit, status, failureCode] of outcomes) {
    it(`exits ${exit} for ${what}`, () => {
      const { code, stdout } = cordage(['run', '--preset', presetFile(options), '--json'])
      assert.equal(code, exit)
      const last = jsonEvents(stdout).at(-1)!
      assert.ok(last.type === 'run/end')
      assert.deepEqual([last.data.status, last.data.failureCode], [status, failureCode])
    })
  }

  it('exits 5 when the run waits for approval, and says how to approve it', () => {
    const file = presetFile({ script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'n' } }] })
    const { code, stdout, stderr } = cordage(['run', '--preset', file])
    assert.equal(code, 5)
    assert.match(stdout, /run\/paused +s1 +WAITING_APPROVAL/)
    const runId = /^run (run_\S+) WAITING_APPROVAL$/m.exec(stderr)?.[1]
    assert.ok(runId, stderr)
    assert.match(stderr, new RegExp(`approve: cordage approve ${runId} s1\\.a1 --preset ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    assert.match(stderr, /note: this agent uses store-memory, which keeps the run only while this process lives/)
  })

  it('takes the task from --task and the agent from --agent', () => {
    const { code, stdout } = cordage([
      'run',
      '--preset',
      'presets/minimal.yml',
      '--agent',
      'echo',
      '--task',
      'Say something nice',
      '--json',
    ])
    assert.equal(code, 0)
    const start = jsonEvents(stdout)[0]
    assert.ok(start.type === 'run/start' && start.data.task === 'Say something nice' && start.data.agent === 'echo')
  })

  const usage: [string, string[], RegExp][] = [
    ['an unknown command', ['fly'], /error \[invalid_input\]: unknown command "fly"; commands: run, submit, approve/],
    [
      'an unknown flag',
      ['run', '--presets', 'x'],
      /Unknown option '--presets' \(did you mean --preset\?\); "run" takes: --preset, --agent, --task, --json/,
    ],
    ['a missing positional', ['approve', 'run_1'], /"approve" takes RUN ACTION, got "run_1"/],
    ['a preset that does not exist', ['run', '--preset', 'nope.yml'], /error \[preset_not_found\]: preset file nope\.yml does not exist/],
    [
      'an unknown agent',
      ['run', '--preset', 'presets/default.yml', '--agent', 'sales'],
      /error \[agent_not_found\]: preset presets\/default\.yml has no agent "sales"; agents: support/,
    ],
    [
      'a run the store does not have',
      ['approve', 'run_nope', 's1.a1', '--preset', 'presets/default.yml'],
      /error \[run_not_found\]: no run run_nope in .*\.cordage\/cordage\.db/,
    ],
    [
      'a negative --after',
      ['events', 'run_1', '--after=-3', '--preset', 'presets/default.yml'],
      /--after must be a whole number ≥ 0, got "-3"/,
    ],
    [
      'an unknown status',
      ['runs', '--status', 'DONE', '--preset', 'presets/default.yml'],
      /--status must be one of CREATED, RUNNING, .*got "DONE"/,
    ],
    [
      'a bad preset',
      ['check', '--preset', 'test/fixtures/presets/unknown-key.yml'],
      /unknown-key\.yml:5:7 agents\.support\.budgets\.maxStep: unknown key/,
    ],
    ['an unknown approval scope', ['approve', 'run_1', 's1.a1', '--scope', 'forever'], /--scope must be once, run or grant, got "forever"/],
    [
      '--args that are not JSON',
      ['approve', 'run_1', 's1.a1', '--scope', 'grant', '--args', '{amount: 5'],
      /--args is not JSON \(.*\); write it like '\{"amount":\{"lte":100\}\}'/,
    ],
    [
      '--args that are not an object',
      ['approve', 'run_1', 's1.a1', '--scope', 'grant', '--args', '[1]'],
      /--args must be a JSON object: argument path → test/,
    ],
    [
      '--args with --any-args',
      ['approve', 'run_1', 's1.a1', '--scope', 'run', '--args', '{}', '--any-args'],
      /give --args or --any-args, not both/,
    ],
    [
      '--expires without a wide scope',
      ['approve', 'run_1', 's1.a1', '--expires', '7d'],
      /--args, --any-args and --expires go with --scope run or --scope grant/,
    ],
    [
      'a bad --expires',
      ['approve', 'run_1', 's1.a1', '--scope', 'grant', '--expires', '7 days'],
      /--expires must be a duration like 30m, 12h or 7d, got "7 days"/,
    ],
  ]
  for (const [what, args, message] of usage) {
    it(`exits 2 with a clear message for ${what}`, () => {
      const { code, stderr, stdout } = cordage(args)
      assert.equal(code, 2, stderr + stdout)
      assert.match(stderr, message)
      assert.equal(stdout, '', 'errors go to stderr only')
    })
  }

  it('prints help for the whole tool and for each command', async () => {
    const lines: string[] = []
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) }
    assert.equal(await main(['--help'], io), 0)
    assert.match(
      lines.join('\n'),
      /exit codes: 0 completed · 1 failed · 2 usage or config error · 3 failed verification · 4 stopped \(budget\) · 5 waiting · 6 cancelled/,
    )
    const toolHelp = lines.join('\n')
    for (const command of Commands) {
      lines.length = 0
      assert.equal(await main([command.name, '--help'], io), 0)
      const help = lines.join('\n')
      assert.ok(help.includes(`usage: ${command.usage}`))
      for (const flag of Object.keys(command.flags)) {
        // A global flag (--log-level) is named once in the tool's help, not in each usage line.
        if ((GlobalFlags as readonly string[]).includes(flag))
          assert.match(toolHelp, new RegExp(`--${flag} `), `the tool's help names --${flag}`)
        else assert.ok(command.usage.includes(`--${flag}`), `the usage of ${command.name} names --${flag}`)
        assert.match(help, new RegExp(`^  --${flag} `, 'm'))
      }
    }
  })

  it('lists what each agent would load with check --json', async () => {
    const file = presetFile({ script: [{ final: refundAnswer }] })
    const out: string[] = []
    assert.equal(await main(['check', '--preset', file, '--json'], { out: (l) => out.push(l), err: () => {} }), 0)
    assert.deepEqual(JSON.parse(out[0]), {
      agent: 'support',
      plugins: {
        'model-scripted': '1.2.0',
        'store-memory': '2.3.0',
        'tools-registry': '1.0.0',
        'context-basic': '1.1.0',
        'verifier-basic': '1.0.0',
        'policy-rules': '2.1.0',
        'support-desk': '1.1.0',
        previews: '1.0.0',
        threads: '1.0.0',
      },
    })
  })
})

/**
 * Issue 10: every input path answers bad input with `error [code]: ...` naming where and how to fix it,
 * and exit 2 — never a stack trace, a hang, or a silent exit. Each case runs the real binary.
 */
describe('cordage CLI on bad input (issue 10)', { concurrency: 6 }, () => {
  const fixtures = resolve(root, 'test/fixtures/plugins')
  const run = (args: string[], env: Record<string, string> = {}, cwd = root) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [bin, ...args],
        { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1', ...env } },
        (error, stdout, stderr) => {
          done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
        },
      )
    })
  /** A small valid agent on store-memory, with `extra` plugin entries (YAML list items). */
  const agentYaml = (extra: string[] = [], store = 'store-memory') =>
    [
      'agents:',
      '  a:',
      '    task: Say hello.',
      '    model: { plugin: model-scripted, config: { script: [ { final: Hello. } ] } }',
      '    plugins:',
      `      - ${store}`,
      '      - tools-registry',
      '      - context-basic',
      '      - { plugin: policy-rules, config: { default: deny } }',
      '      - { plugin: verifier-basic, config: { minCount: 0 } }',
      ...extra.map((e) => `      - ${e}`),
      '',
    ].join('\n')
  const write = (name: string, text: string | Buffer) => {
    const file = join(tempDir(), name)
    writeFileSync(file, text)
    return file
  }
  /** Exit 2, `error [code]:` on stderr naming `where`, nothing on stdout, no stack trace. */
  const refuses = (result: { code: number | null; stdout: string; stderr: string }, code: string, ...where: (string | RegExp)[]) => {
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, new RegExp(`^error \\[${code}\\]: `, 'm'))
    for (const w of where) assert.match(result.stderr, typeof w === 'string' ? new RegExp(w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : w)
    assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace')
    assert.equal(result.stdout, '')
  }

  // 9a: YAML aliases
  it('refuses an alias that names no anchor, with its line', async () => {
    const file = write('undefined-alias.yml', 'agents:\n  a:\n    model: *nope\n')
    refuses(await run(['check', '--preset', file]), 'preset_invalid', 'undefined-alias.yml:3:12', 'alias *nope names no anchor')
  })
  it('refuses an alias inside the value it names', async () => {
    const file = write('self-alias.yml', 'agents: &x\n  a: *x\n')
    refuses(await run(['check', '--preset', file]), 'preset_invalid', 'self-alias.yml:2:6', 'alias *x is inside the value it names')
  })
  it('refuses an alias bomb without expanding it', async () => {
    const levels = ['x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    for (let i = 1; i < 9; i++)
      levels.push(
        `x${i}: &a${i} [${Array(9)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      )
    const file = write('alias-bomb.yml', `${levels.join('\n')}\nagents: *a8\n`)
    refuses(await run(['check', '--preset', file]), 'preset_invalid', /alias-bomb\.yml:2:\d+ uses YAML aliases that expand too far/)
  })
  it('takes aliases that stay small: two agents sharing one plugin list', async () => {
    const text =
      agentYaml().replace('    plugins:\n', '    plugins: &common\n') +
      '  b:\n    model: { plugin: model-scripted, config: { script: [ { final: Bye. } ] } }\n    plugins: *common\n'
    const result = await run(['check', '--preset', write('shared.yml', text)])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /^agent b: /m)
  })
  it('refuses an alias in a --set value', async () => {
    const file = write('p.yml', agentYaml())
    refuses(
      await run(['check', '--preset', file, '--set', 'agents.a.task=&t [*t]']),
      'preset_invalid',
      '--set agents.a.task=&t [*t]',
      'cannot use aliases',
    )
  })

  // 9b: names from the command line never reach Object.prototype
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    it(`answers --agent ${name} with agent_not_found and the agents that exist`, async () => {
      const file = write('p.yml', agentYaml())
      refuses(await run(['run', '--preset', file, '--agent', name]), 'agent_not_found', `has no agent "${name}"; agents: a`)
    })
  }
  it('answers runs --agent and --status with names the preset does not have, instead of listing nothing', async () => {
    const file = write('p.yml', agentYaml())
    refuses(await run(['runs', '--preset', file, '--agent', 'constructor']), 'agent_not_found', 'agents: a')
    refuses(await run(['runs', '--preset', file, '--status', '__proto__']), 'invalid_input', '--status must be one of')
  })

  it('refuses toString and valueOf as plugin config keys instead of taking them for known keys', async () => {
    for (const key of ['toString', 'valueOf']) {
      const file = write('p.yml', agentYaml().replace('config: { minCount: 0 }', `config: { minCount: 0, ${key}: 1 }`))
      refuses(await run(['check', '--preset', file]), 'plugin_config_invalid', 'agents.a.plugins[4].config', `"${key}"`)
    }
  })

  // 9c: --preset that is not a preset file
  const notPresets: [string, () => string, string, string | RegExp][] = [
    ['a folder', () => tempDir(), 'preset_not_found', 'is a folder, not a preset file'],
    ['an empty file', () => write('empty.yml', ''), 'preset_invalid', /empty\.yml is empty; a preset is a map/],
    ['a file of comments only', () => write('comments.yml', '# nothing here\n'), 'preset_invalid', /comments\.yml is empty/],
    [
      'a YAML list',
      () => write('list.yml', '- a\n- b\n'),
      'preset_invalid',
      /list\.yml:1:1 \(top level\): expected a map of keys .* found a list/,
    ],
    [
      'a YAML scalar',
      () => write('scalar.yml', 'hello\n'),
      'preset_invalid',
      /scalar\.yml:1:1 \(top level\): expected a map of keys .* found a single value \("hello"\)/,
    ],
    [
      'a binary file',
      () => write('binary.yml', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff])),
      'preset_invalid',
      /binary\.yml is not a text file \(it has a NUL byte/,
    ],
    [
      'a file that is not UTF-8',
      () => write('latin1.yml', Buffer.from('agents:\n  caf\xe9: {}\n', 'latin1')),
      'preset_invalid',
      /latin1\.yml is not a text file \(it is not UTF-8\)/,
    ],
    [
      'two YAML documents',
      () => write('two-docs.yml', 'agents: {}\n---\nagents: {}\n'),
      'preset_invalid',
      /two-docs\.yml:\d+:\d+ .*multiple documents/i,
    ],
  ]
  for (const [what, make, code, where] of notPresets) {
    it(`answers --preset naming ${what} with ${code}`, async () => {
      refuses(await run(['check', '--preset', make()]), code, where)
    })
  }
  it('answers a preset that cannot be read with preset_invalid (not as root, who reads everything)', {
    skip: process.getuid?.() === 0 ? 'running as root' : false,
  }, async () => {
    const file = write('secret.yml', agentYaml())
    chmodSync(file, 0o000)
    refuses(await run(['check', '--preset', file]), 'preset_invalid', 'cannot be read (permission denied')
  })

  // 9d: a broken package.json in a plugin folder
  const packages: [string, RegExp][] = [
    ['package-json-invalid', /package-json-invalid\/package\.json is not valid JSON/],
    ['package-json-not-object', /package-json-not-object\/package\.json holds a list, not an object/],
    ['package-json-type-wrong', /package-json-type-wrong\/package\.json says "type": 5, not "module"/],
  ]
  for (const [folder, message] of packages) {
    it(`answers a plugin folder whose package.json is broken (${folder}) with manifest_invalid naming the file`, async () => {
      const file = write('p.yml', agentYaml([`{ path: ${join(fixtures, folder)} }`]))
      refuses(await run(['check', '--preset', file]), 'manifest_invalid', /p\.yml:\d+:\d+ agents\.a\.plugins\[5\]/, message)
    })
  }

  // 9e: plugin modules that never finish loading
  for (const [folder, what] of [
    ['manifest-never-settles', 'manifest'],
    ['entry-never-settles', 'entry module'],
  ]) {
    it(`answers a plugin whose ${what} never settles with plugin_load_timeout naming the folder`, async () => {
      const file = write('p.yml', agentYaml([`{ path: ${join(fixtures, folder)} }`]))
      refuses(
        // Long enough that a busy machine loads the fixture's manifest in time: only the module that never settles may time out.
        await run(['check', '--preset', file], { CORDAGE_PLUGIN_LOAD_TIMEOUT_MS: '8000' }),
        'plugin_load_timeout',
        `plugin folder ${join(fixtures, folder)}: its ${what}`,
        'did not finish loading within 8000 ms',
      )
    })
  }
  it('answers a plugin whose start (an async apply) never settles with plugin_load_timeout naming it', async () => {
    const file = write('p.yml', agentYaml([`{ path: ${join(fixtures, 'start-never-settles')} }`]))
    refuses(
      await run(['check', '--preset', file], { CORDAGE_PLUGIN_START_TIMEOUT_MS: '2500' }),
      'plugin_load_timeout',
      'plugin start-never-settles@1.0.0',
      'did not finish starting within 2500 ms',
    )
  })
  it('refuses a CORDAGE_PLUGIN_LOAD_TIMEOUT_MS that is not a number of milliseconds', async () => {
    refuses(
      await run(['check', '--preset', write('p.yml', agentYaml())], { CORDAGE_PLUGIN_LOAD_TIMEOUT_MS: 'soon' }),
      'invalid_input',
      'CORDAGE_PLUGIN_LOAD_TIMEOUT_MS must be a whole number of milliseconds',
    )
  })

  // 9f: a store-sqlite database that is not Cordage's, or is damaged
  const databases: [string, (file: string) => void, string][] = [
    [
      'a file that is not a database',
      (file) => writeFileSync(file, 'these are notes, not a database\n'.repeat(200)),
      'is not a SQLite database',
    ],
    [
      'a truncated database',
      (file) => {
        const db = new Database(file)
        db.exec('CREATE TABLE filler (x TEXT)')
        const insert = db.prepare('INSERT INTO filler VALUES (?)')
        for (let i = 0; i < 200; i++) insert.run('x'.repeat(500))
        db.close()
        truncateSync(file, Math.floor(statSync(file).size / 2))
      },
      'is damaged (SQLite says: database disk image is malformed)',
    ],
    [
      'a database of another application',
      (file) => {
        const db = new Database(file)
        db.exec('CREATE TABLE runs (x INTEGER)')
        db.close()
      },
      "is a SQLite database, but not Cordage's: it has the table(s) runs and no Cordage schema version",
    ],
    [
      'a Cordage database whose tables were changed',
      (file) => {
        const db = new Database(file)
        db.exec(
          "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '2'); CREATE TABLE runs (run_id TEXT)",
        )
        db.close()
      },
      'table runs lacks the column(s) agent, task',
    ],
  ]
  for (const [what, make, message] of databases) {
    it(`answers store-sqlite on ${what} with a message naming the file`, async () => {
      const db = join(tempDir(), 'runs.db')
      make(db)
      const file = write('p.yml', agentYaml([], `{ plugin: store-sqlite, config: { path: ${db} } }`))
      refuses(await run(['run', '--preset', file]), 'plugin_start_failed', `${db} `, message)
    })
  }
  it('answers store-postgres on a schema of another application with a message naming the schema', {
    skip: process.env.CORDAGE_PG_URL ? false : 'no PostgreSQL: set CORDAGE_PG_URL',
  }, async () => {
    const schema = `foreign_${process.pid}`
    const { default: pg } = await import('pg')
    const client = new pg.Client(process.env.CORDAGE_PG_URL)
    await client.connect()
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.runs (x INTEGER)`)
      const file = write('p.yml', agentYaml([], `{ plugin: store-postgres, config: { schema: ${schema} } }`))
      refuses(
        await run(['run', '--preset', file]),
        'plugin_start_failed',
        `PostgreSQL schema ${schema} is not Cordage's: it has the table(s) runs`,
      )
      assert.deepEqual(
        (await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema])).rows.map(
          (r) => r.table_name,
        ),
        ['runs'],
        'nothing was written into it',
      )
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await client.end()
    }
  })

  // 9g: no command
  it('exits 2 with the usage on stderr when no command is given', async () => {
    const result = await run([])
    assert.equal(result.code, 2)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /usage: cordage <command> \[options\]/)
    assert.match(result.stderr, /^error \[invalid_input\]: no command given/m)
  })
  it('suggests the command a misspelt one is near to, and says a flag is not a command', async () => {
    refuses(await run(['chekc']), 'invalid_input', 'unknown command "chekc" (did you mean "check"?)')
    refuses(await run(['--preset', 'x.yml']), 'invalid_input', 'unknown command "--preset" (a command comes first')
  })

  it('refuses an empty --agent or --preset instead of taking it for the default', async () => {
    const file = write('p.yml', agentYaml())
    refuses(await run(['worker', '--preset', file, '--agent', '']), 'invalid_input', '--agent is empty')
    refuses(await run(['check', '--preset', '']), 'invalid_input', '--preset is empty')
  })

  // 11: --json keeps the status line on stderr
  it('prints the final status line on stderr with run --json, stdout holding only JSON', async () => {
    const result = await run(['run', '--preset', write('p.yml', agentYaml()), '--json'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /^run run_\S+ COMPLETED$/m)
    for (const line of result.stdout.trim().split('\n')) JSON.parse(line)
  })

  // 12: --set picks a path entry by its folder name
  it('lets --set pick a path entry by the name of its folder', async () => {
    const file = write('p.yml', agentYaml([`{ path: ${join(fixtures, 'greeter')}, config: { greeting: Hi } }`]))
    const ok = await run(['check', '--preset', file, '--json', '--set', 'agents.a.plugins.greeter.config.greeting=Howdy'])
    assert.equal(ok.code, 0, ok.stderr)
    refuses(
      await run(['check', '--preset', file, '--set', 'agents.a.plugins.greeter.config.greting=Howdy']),
      'plugin_config_invalid',
      '--set agents.a.plugins.greeter.config.greting=Howdy',
      'agents.a.plugins[5].config.greting',
    )
  })
  it('refuses --set naming a path entry that is absent, or a name two entries answer to, saying which exist', async () => {
    const file = write(
      'p.yml',
      agentYaml([`{ path: ${join(fixtures, 'greeter')} }`, `{ path: ${join(fixtures, 'greeter')}, version: '*' }`]),
    )
    refuses(
      await run(['check', '--preset', file, '--set', 'agents.a.plugins.greeter.config.greeting=x']),
      'preset_invalid',
      'agents.a.plugins has 2 entries named "greeter": [5] greeter (path ',
      'pick one by index, such as agents.a.plugins[6]',
    )
    refuses(
      await run(['check', '--preset', file, '--set', 'agents.a.plugins.gretter.config.greeting=x']),
      'preset_invalid',
      'has no entry "gretter"',
      'greeter (path ',
      'did you mean "greeter"?',
    )
  })

  // Lock files (JSON) that are not a Cordage lock
  it('refuses a lock file of the wrong shape, naming each wrong key', async () => {
    const file = write('desk.yml', agentYaml())
    writeFileSync(
      file.replace(/\.yml$/, '.lock.json'),
      JSON.stringify({ cordage: 1, agents: { a: { 'policy-rules': { version: 2, hash: null } } } }),
    )
    refuses(
      await run(['check', '--preset', file]),
      'preset_invalid',
      'desk.lock.json is not a Cordage lock',
      'agents.a.policy-rules.version: expected a version such as 1.0.0, found 2',
      'agents.a.policy-rules.hash',
      'pass --no-lock',
    )
  })
})
