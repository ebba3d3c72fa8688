/**
 * The command lines the CLI suggests work when copied: each hint printed by the real `cordage` binary
 * (after a pause, in `cordage runs`, after an approval without resuming, in an error the kernel wrote)
 * is run as it is, by a POSIX shell, from another folder whose presets/default.yml is another preset,
 * and does what it says. The preset sits in a folder with a space in its name, and the run was started
 * with a `--set` whose value has a space and a quote, so the quoting is tried too. `cordage` is on PATH
 * as a small script that runs this checkout's core/cli/bin.js, as a link onto PATH would.
 *
 * And `cordage runs --agent X` lists X's runs only, when agents share one store.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { hint, presetFlags, shellQuote, withPresetFlags } from '../core/cli/hints.ts'
import { deskPreset, refundAnswer, tempDir } from './helpers.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')

/** A folder with `cordage` in it: a script that runs this checkout's binary. */
function shim(): string {
  const dir = tempDir('cordage-shim-')
  const file = join(dir, 'cordage')
  writeFileSync(file, `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(bin)} "$@"\n`)
  chmodSync(file, 0o755)
  return dir
}

/**
 * Three agents sharing one SQLite store in `my agents/desk.yml`: `support` answers from the policy,
 * `followup` records a follow-up after approval, `asker` asks the user a question first.
 */
function project() {
  const base = tempDir('cordage-hints-')
  const dir = join(base, 'my agents')
  mkdirSync(dir)
  const store = { plugin: 'store-sqlite', config: { path: 'runs.db' } }
  const support = deskPreset(
    { script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }], storePlugin: store },
    'outbox.jsonl',
  ).agents.support
  const followup = deskPreset(
    {
      script: [
        { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved.' } },
        { final: 'The follow-up is recorded [source: T-1001].' },
      ],
      storePlugin: store,
    },
    'outbox.jsonl',
  ).agents.support
  const asker = deskPreset(
    { script: [{ ask: 'Which ticket?' }, { final: 'Noted.' }], storePlugin: store, verifier: { minCount: 0 } },
    'outbox.jsonl',
  ).agents.support
  writeFileSync(join(dir, 'desk.yml'), stringify({ cordage: 1, agents: { support, followup, asker } }))
  // Elsewhere: a folder whose default preset is another one (no followup agent, another store).
  const elsewhere = join(base, 'elsewhere')
  mkdirSync(join(elsewhere, 'presets'), { recursive: true })
  copyFileSync(join(root, 'presets/minimal.yml'), join(elsewhere, 'presets/default.yml'))
  return { base, preset: 'my agents/desk.yml', elsewhere, path: `${shim()}:${process.env.PATH}` }
}

type Project = ReturnType<typeof project>

/** The binary with these arguments, in `cwd`. */
function cordage(p: Project, args: string[], cwd = p.base) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** A copied command line, run by the shell in the other folder. */
function paste(p: Project, line: string, cwd = p.elsewhere) {
  const result = spawnSync('/bin/sh', ['-c', line], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', PATH: p.path } })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** The command after `label` on a line of `text`. */
function hinted(text: string, label: RegExp): string {
  const found = new RegExp(`^\\s*${label.source}\\s*(cordage .*)$`, 'm').exec(text)
  assert.ok(found, `no hint ${label} in:\n${text}`)
  return found[1]!
}

// YAML reads the value as a string with a quote and spaces in it; the shell must hand it over unchanged.
const set = `agents.followup.task="Note on T-1001: it's approved"`

describe('hints the CLI prints, copied and run from another folder', () => {
  it('after a pause: approve with --no-resume, then the continue hint, complete the run', () => {
    const p = project()
    const started = cordage(p, ['run', '--preset', p.preset, '--agent', 'followup', '--set', set])
    assert.equal(started.code, 5, started.stderr)
    const approve = hinted(started.stderr, /approve:/)
    assert.ok(approve.includes(shellQuote(resolve(p.base, p.preset))), approve)
    assert.ok(approve.includes(`--set ${shellQuote(set)}`), approve)

    const approved = paste(p, `${approve} --no-resume`)
    assert.equal(approved.code, 5, approved.stderr)
    const resume = hinted(approved.stderr, /approved; continue:/)
    const done = paste(p, resume, tempDir())
    assert.equal(done.code, 0, done.stderr)
    assert.match(done.stderr, /COMPLETED$/m)
  })

  it("cordage runs: a waiting run's approve hint completes it from elsewhere", () => {
    const p = project()
    assert.equal(cordage(p, ['run', '--preset', p.preset, '--agent', 'followup']).code, 5)
    const listed = cordage(p, ['runs', '--preset', p.preset])
    assert.equal(listed.code, 0, listed.stderr)
    const approve = hinted(listed.stdout, /approval of action s1\.a1:/)
    const done = paste(p, approve)
    assert.equal(done.code, 0, `${approve}\n${done.stderr}`)
    assert.match(done.stderr, /COMPLETED$/m)
  })

  it('a run waiting for the user: the answer hint, with the answer filled in, completes it', () => {
    const p = project()
    const asked = cordage(p, ['run', '--preset', p.preset, '--agent', 'asker'])
    assert.equal(asked.code, 5, asked.stderr)
    const answer = hinted(asked.stderr, /answer:/)
    assert.match(answer, /--input "\.\.\."$/)
    const done = paste(p, answer.replace('"..."', '"T-1001"'))
    assert.equal(done.code, 0, done.stderr)
  })

  it('an error the kernel wrote (thread_busy) gets the preset flags, and its approve command works', () => {
    const p = project()
    const first = cordage(p, ['run', '--preset', p.preset, '--agent', 'followup', '--thread', 'chat-1'])
    assert.equal(first.code, 5, first.stderr)
    const busy = cordage(p, ['run', '--preset', p.preset, '--agent', 'followup', '--thread', 'chat-1', '--task', 'again'])
    assert.equal(busy.code, 7, busy.stderr)
    const approve = /\((cordage approve [^)]*)\)/.exec(busy.stderr)?.[1]
    assert.ok(approve?.includes('--preset'), busy.stderr)
    const done = paste(p, approve!)
    assert.equal(done.code, 0, `${approve}\n${done.stderr}`)
  })

  it('a thread that does not exist: the hint starts it in the same preset', () => {
    const p = project()
    const missing = cordage(p, ['thread', 'chat-9', '--preset', p.preset, '--agent', 'support'])
    assert.equal(missing.code, 2, missing.stderr)
    const start = /start one: (cordage run .*)$/m.exec(missing.stderr)?.[1]
    assert.ok(start, missing.stderr)
    const done = paste(p, `${start.replace('"..."', '"What is the refund window?"')} --agent support`)
    assert.equal(done.code, 0, `${start}\n${done.stderr}`)
  })
})

describe('hint lines (cli/hints.ts)', () => {
  const here = resolve('p.yml')

  it('name the preset as an absolute path, the default one too, with the --set and --no-lock the command takes', () => {
    assert.equal(hint('approve', ['run_1', 's1.a1'], { preset: 'p.yml' }, '', 'cordage'), `cordage approve run_1 s1.a1 --preset ${here}`)
    assert.deepEqual(presetFlags('resume', {}), ['--preset', resolve('presets/default.yml')])
    assert.deepEqual(presetFlags('resume', { preset: 'p.yml', set: ['a.b=1', 'model.config.x=2'], 'no-lock': true, model: 'm' }), [
      '--preset',
      here,
      '--set',
      'a.b=1',
      '--no-lock',
    ])
    // events and grants take neither --set nor --no-lock
    assert.deepEqual(presetFlags('events', { preset: 'p.yml', set: ['a.b=1'], 'no-lock': true }), ['--preset', here])
  })

  it('quote what a shell would split or expand', () => {
    assert.equal(shellQuote('run_1'), 'run_1')
    assert.equal(shellQuote('/a/my agents/p.yml'), "'/a/my agents/p.yml'")
    assert.equal(shellQuote("it's $HOME"), `'it'\\''s $HOME'`)
    const result = spawnSync('/bin/sh', ['-c', `printf '%s\\n' ${shellQuote('it\'s $HOME `x` \\ "q"')}`], { encoding: 'utf8' })
    assert.equal(result.stdout, 'it\'s $HOME `x` \\ "q"\n')
  })

  it("complete the commands in the kernel's messages, and leave the rest of the message as it is", () => {
    const flags = { preset: 'p.yml', set: ['k=v'] }
    const cases: [string, string][] = [
      [
        'act on it first: cordage approve run_a_b s1.a2, and this run goes on when it ends',
        `act on it first: cordage approve run_a_b s1.a2 --preset ${here} --set k=v, and this run goes on when it ends`,
      ],
      [
        'answer it there (cordage resume run_c --input ...)',
        `answer it there (cordage resume run_c --input ... --preset ${here} --set k=v)`,
      ],
      [
        'cordage reconcile run_d s2.a1 --committed|--not-committed',
        `cordage reconcile run_d s2.a1 --committed|--not-committed --preset ${here} --set k=v`,
      ],
      [
        'resume with a larger budget (cordage resume run_e --max-tokens N)',
        `resume with a larger budget (cordage resume run_e --max-tokens N --preset ${here} --set k=v)`,
      ],
      ['cancel it instead: cordage cancel run_f', `cancel it instead: cordage cancel run_f --preset ${here}`],
      [
        'do not resume the run; cordage verify run_g shows the first bad event',
        `do not resume the run; cordage verify run_g --preset ${here} shows the first bad event`,
      ],
      ['write it again with cordage lock, or pass --no-lock', `write it again with cordage lock --preset ${here}, or pass --no-lock`],
      // Named already: left as it is.
      ['run cordage lock --preset /x/p.yml to lock', 'run cordage lock --preset /x/p.yml to lock'],
      // Not a command: left as it is.
      ['the cordage approve command', 'the cordage approve command'],
    ]
    for (const [message, expected] of cases) assert.equal(withPresetFlags(message, flags, 'cordage'), expected)
    assert.equal(
      withPresetFlags('cancel it: cordage cancel run_f', {}, 'npx cordage'),
      `cancel it: npx cordage cancel run_f --preset ${resolve('presets/default.yml')}`,
    )
  })
})

describe('cordage runs --agent', () => {
  it("lists that agent's runs only, when the agents share one store", () => {
    const p = project()
    assert.equal(cordage(p, ['run', '--preset', p.preset, '--agent', 'support']).code, 0)
    assert.equal(cordage(p, ['run', '--preset', p.preset, '--agent', 'followup']).code, 5)
    const agentsOf = (args: string[]) => {
      const listed = cordage(p, ['runs', '--preset', p.preset, '--json', ...args])
      assert.equal(listed.code, 0, listed.stderr)
      return listed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).agent)
    }
    assert.deepEqual(agentsOf([]).sort(), ['followup', 'support'])
    assert.deepEqual(agentsOf(['--agent', 'support']), ['support'])
    assert.deepEqual(agentsOf(['--agent', 'followup']), ['followup'])
    const none = cordage(p, ['runs', '--preset', p.preset, '--agent', 'asker'])
    assert.equal(none.code, 0)
    assert.equal(none.stdout, '')
  })
})
