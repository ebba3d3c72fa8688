/**
 * What a red-team review of `cordage eval` found, held: hostile suite files are problems of that file,
 * listed with the others (never a hang or an internal error), and a baseline is compared honestly under
 * `--regressions-only` (another suite or preset refused; a case gone, or new and failing, is a regression).
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { main } from '../core/cli/main.ts'
import { type Baseline, compareBaseline, readBaseline } from '../core/eval/baseline.ts'
import { loadCase, loadSuite, MaxCaseBytes, MaxSuiteEntries, MaxSuiteFiles } from '../core/eval/load.ts'
import type { CaseRun, SuiteResult } from '../core/eval/result.ts'
import { tempDir } from './temp.ts'

const root = resolve(import.meta.dirname, '..')

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

/** The suite's problems, as loadSuite reports them (it must throw, with every problem listed). */
function problemsOf(path: string): string {
  try {
    loadSuite(path)
  } catch (error) {
    assert.equal((error as { code?: string }).code, 'invalid_input', String(error))
    return (error as Error).message
  }
  assert.fail(`${path} loaded`)
}

const valid = ['eval: 1', 'preset: ../p.yml', 'expect:', '  status: COMPLETED'].join('\n')

describe('cordage eval: hostile suite files are problems of that file, listed with the others', () => {
  it('an alias bomb, a self-containing alias, binary, non-UTF-8, huge, a pipe, a dangling link and a link loop', async () => {
    const dir = tempDir()
    // Billion laughs: nine copies at each of six levels is 9^6 values from a few hundred bytes.
    const levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for (const [from, to] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'e'],
      ['e', 'f'],
    ])
      levels.push(`${to}: &${to} [${Array(9).fill(`*${from}`).join(', ')}]`)
    writeFileSync(
      join(dir, 'bomb.yml'),
      ['eval: 1', 'overlay:', ...levels.map((l) => `  ${l}`), 'expect: { status: COMPLETED }'].join('\n'),
    )
    writeFileSync(join(dir, 'self.yml'), ['eval: 1', 'overlay: &x { again: *x }', 'expect: { status: COMPLETED }'].join('\n'))
    writeFileSync(join(dir, 'binary.yml'), Buffer.from([0x65, 0x76, 0x61, 0x6c, 0x3a, 0x20, 0x31, 0x0a, 0x00, 0xff]))
    writeFileSync(join(dir, 'latin1.yml'), Buffer.from('eval: 1\ndescription: caf\xe9\n', 'latin1'))
    writeFileSync(join(dir, 'huge.yml'), `${valid}\n#${'x'.repeat(MaxCaseBytes)}\n`)
    writeFileSync(join(dir, 'bad.yml'), `${valid}\ncolour: blue\n`)
    symlinkSync(join(dir, 'nowhere.yml'), join(dir, 'dangling.yml'))
    mkdirSync(join(dir, 'sub'))
    writeFileSync(join(dir, 'sub', 'fine.yml'), valid)
    symlinkSync('..', join(dir, 'sub', 'back'))
    // Reading a pipe waits for a writer that never comes: it must be refused before it is read.
    const fifo = spawnSync('mkfifo', [join(dir, 'pipe.yml')])
    assert.equal(fifo.status, 0, String(fifo.stderr))

    const r = await cli(['eval', dir])
    assert.equal(r.code, 2, r.err)
    assert.doesNotMatch(r.err, /internal error|\n\s+at /)
    assert.match(r.err, /has 9 problem\(s\)/)
    assert.match(r.err, /bomb\.yml:\d+ YAML aliases expand too far \(more than 100 copies/)
    assert.match(r.err, /self\.yml:2 alias \*x is inside the value it names/)
    assert.match(r.err, /binary\.yml: is not a text file \(a NUL byte at offset 8\)/)
    assert.match(r.err, /latin1\.yml: is not a text file \(not UTF-8\)/)
    assert.match(r.err, /huge\.yml: is 1\.0 MB; a case file is at most 1 MB/)
    assert.match(r.err, /pipe\.yml: is not a regular file/)
    assert.match(r.err, /dangling\.yml: cannot be opened \(no such file\)/)
    assert.match(r.err, /sub\/back: leads to \S+, a folder already read \(a link loop/)
    assert.match(r.err, /bad\.yml:5 colour: unknown key "colour"/)
    // The case under the loop was read once, not once per turn of the loop.
    assert.doesNotMatch(r.err, /fine/)
  })

  it('an alias that names no anchor', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'orphan.yml'), `${valid}\noverlay: { rules: *shared }\n`)
    assert.match(problemsOf(dir), /orphan\.yml:5 alias \*shared names no anchor/)
  })

  it('a few aliases sharing a value still load', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'shared.yml'), `${valid}\noverlay:\n  a: &rules [1, 2]\n  b: *rules\n  c: *rules\n`)
    const [loaded] = loadSuite(dir)
    assert.deepEqual(loaded.overlay, { a: [1, 2], b: [1, 2], c: [1, 2] })
  })

  it('a case file that is a folder', () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'odd.yml'))
    const problems = loadCase(join(dir, 'odd.yml'))
    assert.ok(Array.isArray(problems))
    assert.match(problems[0], /odd\.yml: is a folder, not a case file/)
  })

  it('a case file or folder this user cannot read', (t) => {
    // As root, the loader runs as an unprivileged user, who must be able to reach the project (a clone
    // in a private temporary folder is out of its reach: nothing to test there).
    const asRoot = process.getuid?.() === 0
    const reachable = (dir: string): boolean => (statSync(dir).mode & 0o001) !== 0 && (dirname(dir) === dir || reachable(dirname(dir)))
    if (asRoot && !reachable(root)) return t.skip(`${root} is not reachable by other users`)
    const dir = tempDir()
    chmodSync(dir, 0o755)
    writeFileSync(join(dir, 'locked.yml'), valid)
    chmodSync(join(dir, 'locked.yml'), 0)
    mkdirSync(join(dir, 'closed'))
    chmodSync(join(dir, 'closed'), 0)
    // Root reads every file: then the suite is loaded by a process of an unprivileged user.
    const load = 'import("./core/eval/load.ts").then((m) => { try { m.loadSuite(process.argv[1]) } catch (e) { console.log(e.message) } })'
    const p = spawnSync(process.execPath, ['--import', 'tsx', '-e', load, dir], {
      cwd: root,
      encoding: 'utf8',
      // Coverage (c8) would have the child write where that user may not.
      env: { ...process.env, NODE_V8_COVERAGE: '' },
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    })
    assert.equal(p.status, 0, p.stderr)
    assert.match(p.stdout, /has 2 problem\(s\)/)
    assert.match(p.stdout, /locked\.yml: cannot be read \(permission denied\)/)
    assert.match(p.stdout, /closed: the folder cannot be read \(permission denied\)/)
  })

  it(`a folder of more than ${MaxSuiteFiles} case files`, () => {
    const dir = tempDir()
    for (let i = 0; i <= MaxSuiteFiles; i++) writeFileSync(join(dir, `c${i}.yml`), '')
    assert.match(problemsOf(dir), new RegExp(`holds more than ${MaxSuiteFiles} case files`))
  })

  it(`a folder of more than ${MaxSuiteEntries} files of any kind`, () => {
    const dir = tempDir()
    for (let i = 0; i <= MaxSuiteEntries; i++) writeFileSync(join(dir, `f${i}.txt`), '')
    assert.match(problemsOf(dir), new RegExp(`has more than ${MaxSuiteEntries} files and folders`))
  })
})

/** Two cases of the project suite (one completes, one waits for an approval), with the preset named absolutely. */
function suiteDir(names = ['answer-cites-source.yml', 'followup-unapproved.yml']): string {
  const dir = tempDir()
  for (const name of names) copyCase(name, dir)
  return dir
}

function copyCase(name: string, dir: string, as = name, edit = (text: string) => text): void {
  const text = readFileSync(join(root, 'evals/support', name), 'utf8')
  writeFileSync(join(dir, as), edit(text.replace('preset: ../../presets/default.yml', `preset: ${join(root, 'presets/default.yml')}`)))
}

describe('cordage eval --baseline --regressions-only', () => {
  it('a new passing case is not a regression; a new failing case and a removed case are', async () => {
    const dir = suiteDir()
    const baseline = join(tempDir(), 'baseline.json')
    const first = await cli(['eval', dir, '--out', baseline])
    assert.equal(first.code, 0, first.out + first.err)

    copyCase('followup-approved.yml', dir)
    const added = await cli(['eval', dir, '--baseline', baseline, '--regressions-only'])
    assert.equal(added.code, 0, added.out + added.err)
    assert.match(added.out, /0 regression\(s\), 0 fixed, 1 new, 0 gone/)
    rmSync(join(dir, 'followup-approved.yml'))

    // A failing case under a name the baseline does not know (as if a failing case were renamed).
    copyCase('answer-cites-source.yml', dir, 'renamed.yml', (t) => t.replace('status: COMPLETED', 'status: FAILED'))
    const failing = await cli(['eval', dir, '--baseline', baseline, '--regressions-only'])
    assert.equal(failing.code, 1, failing.out + failing.err)
    assert.match(failing.out, /1 regression\(s\), 0 fixed, 1 new, 0 gone/)
    assert.match(failing.out, /regression renamed \(full\): new → fail \(COMPLETED\)/)
    rmSync(join(dir, 'renamed.yml'))

    rmSync(join(dir, 'followup-unapproved.yml'))
    const removed = await cli(['eval', dir, '--baseline', baseline, '--regressions-only'])
    assert.equal(removed.code, 1, removed.out + removed.err)
    assert.match(removed.out, /1 regression\(s\), 0 fixed, 0 new, 1 gone/)
    assert.match(removed.out, /regression followup-unapproved \(full\): pass \(WAITING_APPROVAL\) → not run \(removed\)/)
  })

  it('a baseline of another suite, or of another preset, is refused (exit 2) with what differs', async () => {
    const dir = suiteDir(['answer-cites-source.yml'])
    const baseline = join(tempDir(), 'baseline.json')
    assert.equal((await cli(['eval', dir, '--out', baseline])).code, 0)

    const other = suiteDir(['answer-cites-source.yml'])
    const suite = await cli(['eval', other, '--baseline', baseline, '--regressions-only'])
    assert.equal(suite.code, 2, suite.out + suite.err)
    assert.match(suite.err, /does not fit this run: it is of suite ".*", this run of ".*"/)
    assert.ok(suite.err.includes(JSON.stringify(dir)) && suite.err.includes(JSON.stringify(other)), suite.err)
    assert.match(suite.err, /write a new baseline for this run with --out FILE/)

    const preset = join(root, 'presets/default.yml')
    const onPreset = await cli(['eval', dir, '--preset', preset, '--baseline', baseline, '--regressions-only'])
    assert.equal(onPreset.code, 2, onPreset.out + onPreset.err)
    assert.ok(onPreset.err.includes(`it ran on each case's own preset, this run on --preset ${JSON.stringify(preset)}`), onPreset.err)
  })

  it('a baseline without the suite it was of is refused as not an eval result', () => {
    const file = join(tempDir(), 'old.json')
    writeFileSync(file, JSON.stringify({ format: 1, variants: [], runs: [], summaries: [] }))
    assert.throws(() => readBaseline(file), /not a cordage eval result of format 1 \(suite: /)
  })
})

describe('compareBaseline: variants in one and not the other', () => {
  const runOf = (c: string, variant: string, ok: boolean): CaseRun =>
    ({ case: c, file: `${c}.yml`, variant, ok, status: ok ? 'COMPLETED' : 'FAILED', checks: [] }) as unknown as CaseRun
  const result = (variants: string[], runs: CaseRun[]): SuiteResult =>
    ({ format: 1, suite: 'evals', variants: variants.map((id) => ({ id })), runs, summaries: [] }) as unknown as SuiteResult
  const stored = (r: SuiteResult) => r as unknown as Baseline

  it('a passing run of a variant not run now is a regression; a run of a variant the baseline lacks is listed, not gated', () => {
    const before = result(['full', '-verifier'], [runOf('a', 'full', true), runOf('a', '-verifier', true), runOf('b', '-verifier', false)])
    const now = result(['full', '-policy'], [runOf('a', 'full', true), runOf('a', '-policy', false)])
    const diff = compareBaseline('b.json', stored(before), now)
    assert.deepEqual(diff.regressions, [
      { case: 'a', variant: '-verifier', was: 'pass (COMPLETED)', now: 'not run (variant -verifier not run)' },
    ])
    assert.deepEqual(diff.added, ['variant -policy', 'a (-policy)'])
    assert.deepEqual(diff.removed, ['variant -verifier', 'a (-verifier)', 'b (-verifier)'])
  })

  it('the same suite on the same preset is compared', () => {
    const before = { ...result(['full'], [runOf('a', 'full', true)]), preset: 'p.yml' }
    const now = { ...result(['full'], [runOf('a', 'full', false)]), preset: 'p.yml' }
    const diff = compareBaseline('b.json', stored(before), now)
    assert.deepEqual(diff.regressions, [{ case: 'a', variant: 'full', was: 'pass (COMPLETED)', now: 'fail (FAILED)' }])
    assert.throws(() => compareBaseline('b.json', stored(before), { ...now, preset: undefined }), /it ran on --preset "p\.yml"/)
  })
})
