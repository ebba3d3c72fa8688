/**
 * `cordage eval` end to end: the project's own suite and what its ablations show, a suite that is not
 * valid, the scratch isolation (nothing written to the project or the working directory), baselines
 * and the exit codes, and plugin versions side by side.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { main } from '../core/cli/main.ts'
import type { SuiteResult } from '../core/eval/result.ts'
import { tempDir } from './temp.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

const run = (result: SuiteResult, variant: string, name: string) => {
  const found = result.runs.find((r) => r.variant === variant && r.case === name)
  assert.ok(found, `${name} ran under ${variant}`)
  return found
}

describe('cordage eval on the project suite (evals/support) with verifier and policy ablated', () => {
  let result: SuiteResult
  let code: number

  it('runs, and every case holds on the full harness (exit 0 although ablated variants fail)', async () => {
    const r = await cli(['eval', join(root, 'evals/support'), '--ablate', 'verifier,policy', '--json'])
    code = r.code
    result = JSON.parse(r.out)
    const failed = result.runs
      .filter((x) => x.variant === 'full' && !x.ok)
      .map((x) => `${x.case}: ${JSON.stringify(x.checks.filter((k) => !k.ok))} ${x.error?.message ?? ''}`)
    assert.deepEqual(failed, [])
    assert.equal(code, 0)
    assert.deepEqual(
      result.variants.map((v) => v.id),
      ['full', '-verifier', '-policy'],
    )
  })

  it('without the verifier, a wrong answer is accepted: the run completes with it', () => {
    const full = run(result, 'full', 'wrong-answer-no-citation')
    const ablated = run(result, '-verifier', 'wrong-answer-no-citation')
    assert.equal(full.status, 'FAILED_VERIFICATION')
    assert.equal(ablated.status, 'COMPLETED')
    assert.match(ablated.answer ?? '', /60 days/)
    assert.equal(ablated.ok, false)
    assert.ok(
      result.summaries
        .find((s) => s.variant === '-verifier')!
        .changed.some((c) => c.startsWith('wrong-answer-no-citation: FAILED_VERIFICATION')),
    )
  })

  it('without the policy, a write nobody approved happens: counted in the tool’s own outbox', () => {
    const full = run(result, 'full', 'followup-unapproved')
    const ablated = run(result, '-policy', 'followup-unapproved')
    assert.equal(full.status, 'WAITING_APPROVAL')
    assert.equal(full.sideEffects.followups, 0)
    assert.equal(ablated.status, 'COMPLETED')
    assert.equal(ablated.sideEffects.followups, 1)
    assert.ok(!ablated.events.includes('tool/approval-requested[record_followup]'))
    assert.ok(result.summaries.find((s) => s.variant === '-policy')!.changed.some((c) => c.includes('followups 0 → 1')))
  })

  it('the summary per variant adds up from the runs', () => {
    for (const s of result.summaries) {
      const mine = result.runs.filter((r) => r.variant === s.variant)
      assert.equal(s.cases, mine.length)
      assert.equal(s.passed, mine.filter((r) => r.ok).length)
      // Every run that did not complete with its expectations met is in the mix, a wrong completion included.
      const notVerified = mine.filter((r) => !(r.status === 'COMPLETED' && r.ok)).length
      assert.equal(
        Object.values(s.failureMix).reduce((a, b) => a + b, 0),
        notVerified,
      )
      assert.equal(s.verifiedSuccessRate, mine.filter((r) => r.status === 'COMPLETED' && r.ok).length / mine.length)
    }
  })
})

describe('cordage eval refuses what is not valid, before anything runs', () => {
  it('every problem of a case file, with its line', async () => {
    const dir = tempDir()
    writeFileSync(
      join(dir, 'bad.yml'),
      [
        'eval: 1',
        'preset: ../nowhere.yml',
        'colour: blue',
        'faults:',
        '  - { tool: lookup_policy, kind: slow }',
        'expect:',
        '  status: DONE',
        '  sideEffects: { mails: 1 }',
        '  events:',
        '    includes: [tool/strat]',
      ].join('\n'),
    )
    const r = await cli(['eval', dir])
    assert.equal(r.code, 2)
    assert.match(r.err, /bad\.yml:3 colour: unknown key "colour"/)
    assert.match(r.err, /bad\.yml:5 faults\[0\]\.kind: expected one of "timeout", "transient", "lost-response", "fail"/)
    assert.match(r.err, /bad\.yml:7 expect\.status: expected one of .*"COMPLETED"/)
  })

  it('an expectation on an event type that does not exist, or a record the case does not name', async () => {
    const dir = tempDir()
    const base = ['eval: 1', 'preset: ../p.yml']
    writeFileSync(join(dir, 'c.yml'), [...base, 'expect:', '  answer: { includes: [x] }'].join('\n'))
    writeFileSync(join(dir, 'a.yml'), [...base, 'expect:', '  status: COMPLETED', '  events:', '    includes: [tool/strat]'].join('\n'))
    writeFileSync(join(dir, 'b.yml'), [...base, 'expect:', '  status: COMPLETED', '  sideEffects: { mails: 1 }'].join('\n'))
    const r = await cli(['eval', dir])
    assert.equal(r.code, 2)
    assert.match(r.err, /a\.yml:\d+ expect\.events\.includes\[0\]: .*tool\/strat/)
    assert.match(r.err, /b\.yml:\d+ expect: "mails" is not a record of this case/)
    assert.match(r.err, /c\.yml:\d+ expect\.status: required, and missing/)
  })

  for (const [args, message] of [
    [['--ablate', 'Verifier'], /--ablate Verifier: not a mechanism/],
    [['--vary', 'maxStep=1,2'], /did you mean maxSteps/],
    [['--vary', 'maxSteps=1,,2'], /an empty value/],
    [['--vary', 'tools=-3'], /whole number ≥ 0/],
    [['--plugin', 'policy-rules@^1.0.0'], /give two or more/],
    [['--regressions-only'], /add --baseline/],
    [['--jobs', '0'], /--jobs must be/],
  ] as const) {
    it(`${args.join(' ')} is refused`, async () => {
      const r = await cli(['eval', join(root, 'evals/support/answer-cites-source.yml'), ...args])
      assert.equal(r.code, 2, r.err)
      assert.match(r.err, message)
    })
  }

  it('a baseline that is not an eval result', async () => {
    const file = join(tempDir(), 'b.json')
    writeFileSync(file, JSON.stringify({ runs: [] }))
    const r = await cli(['eval', join(root, 'evals/support/answer-cites-source.yml'), '--baseline', file])
    assert.equal(r.code, 2)
    assert.match(r.err, /not a cordage eval result of format 1/)
  })
})

describe('cordage eval isolation', () => {
  it('writes nothing to the preset folder or the working directory; the report goes where asked and to .cordage/eval/latest.html', () => {
    const work = tempDir()
    cpSync(join(root, 'presets'), join(work, 'presets'), { recursive: true })
    cpSync(join(root, 'evals/support'), join(work, 'evals/support'), { recursive: true })
    const before = readdirSync(join(work, 'presets')).sort()
    const p = spawnSync(process.execPath, [bin, 'eval', 'evals', '--report', 'out/report.html'], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    })
    assert.equal(p.status, 0, p.stdout + p.stderr)
    assert.deepEqual(readdirSync(join(work, 'presets')).sort(), before)
    // The default preset's store is .cordage/cordage.db of the working directory, its follow-up outbox
    // ../.cordage/support-outbox.jsonl: neither exists, every case ran on its own copy.
    assert.ok(!existsSync(join(work, '.cordage/cordage.db')))
    assert.ok(!existsSync(join(work, '.cordage/support-outbox.jsonl')))
    const report = readFileSync(join(work, 'out/report.html'), 'utf8')
    assert.equal(readFileSync(join(work, '.cordage/eval/latest.html'), 'utf8'), report)
    assert.match(report, /answer-cites-source/)
  })
})

describe('cordage eval against a baseline', () => {
  it('--regressions-only passes while nothing that passed fails, and fails on a regression', async () => {
    const dir = tempDir()
    for (const name of ['answer-cites-source.yml', 'followup-unapproved.yml']) cpSync(join(root, 'evals/support', name), join(dir, name))
    for (const name of readdirSync(dir)) {
      const file = join(dir, name)
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace('preset: ../../presets/default.yml', `preset: ${join(root, 'presets/default.yml')}`),
      )
    }
    // Outside the suite folder (the eval reads every file in it), in a temp dir of its own.
    const baseline = join(tempDir('cordage-baseline-'), 'baseline.json')
    const first = await cli(['eval', dir, '--out', baseline])
    assert.equal(first.code, 0, first.out + first.err)

    // The same suite again: nothing regressed.
    const same = await cli(['eval', dir, '--baseline', baseline, '--regressions-only'])
    assert.equal(same.code, 0, same.out)
    assert.match(same.out, /0 regression\(s\)/)

    // Now one case expects what the harness does not do: a regression, exit 1 with --regressions-only.
    const file = join(dir, 'followup-unapproved.yml')
    writeFileSync(file, readFileSync(file, 'utf8').replace('status: WAITING_APPROVAL', 'status: COMPLETED'))
    const worse = await cli(['eval', dir, '--baseline', baseline, '--regressions-only'])
    assert.equal(worse.code, 1)
    assert.match(worse.out, /regression followup-unapproved \(full\): pass \(WAITING_APPROVAL\) → fail \(WAITING_APPROVAL\)/)
  })
})

describe('cordage eval --plugin: two versions of a plugin side by side', () => {
  it('policy-rules 1.x and 2.x on the support agent: 2.x refuses an ask nobody may answer', async () => {
    const dir = tempDir()
    writeFileSync(
      join(dir, 'followup.yml'),
      [
        'eval: 1',
        `preset: ${join(root, 'presets/default.yml')}`,
        'agent: support',
        'sandbox: [record_followup]',
        'model:',
        '  script:',
        '    - tool: record_followup',
        '      args: { ticketId: T-1, note: refund approved }',
        '    - final: "Recorded [source: T-1]."',
        'expect:',
        '  status: WAITING_APPROVAL',
      ].join('\n'),
    )
    const r = await cli(['eval', dir, '--plugin', 'policy-rules@^1.0.0', '--plugin', 'policy-rules@^2.0.0', '--json'])
    const result: SuiteResult = JSON.parse(r.out)
    const v1 = run(result, 'policy-rules@^1.0.0', 'followup')
    const v2 = run(result, 'policy-rules@^2.0.0', 'followup')
    assert.equal(v1.status, 'WAITING_APPROVAL')
    assert.notEqual(v2.status, 'WAITING_APPROVAL')
    assert.ok(v2.events.some((e) => e.startsWith('tool/decision')))
    assert.equal(v1.ok, true)
    assert.equal(r.code, 1, 'every --plugin side is gated: 2.x does not hold the case')
  })
})

/** A case file in its own folder, on the project's default preset unless it says otherwise. */
function caseFile(lines: string[], name = 'case.yml'): string {
  const dir = tempDir()
  const text = lines.join('\n').replace('PRESET', join(root, 'presets/default.yml'))
  writeFileSync(join(dir, name), text)
  return dir
}

describe('cordage eval does not let a case pass on what it did not check', () => {
  it('a fault that never fires is a failed check, not a silent pass', async () => {
    const dir = caseFile([
      'eval: 1',
      'preset: PRESET',
      'agent: support',
      'faults:',
      '  - { tool: record_followup, kind: fail, times: always }',
      'expect:',
      '  status: COMPLETED',
    ])
    const r = await cli(['eval', dir, '--json'])
    const result: SuiteResult = JSON.parse(r.out)
    const check = result.runs[0].checks.find((k) => k.name === 'faults[0]')
    assert.equal(check?.ok, false)
    assert.match(check!.actual, /never: the run made no call to record_followup/)
    assert.equal(r.code, 1)
  })

  it('excluding a misspelt tool fails; a tool the model made up may be excluded', async () => {
    const dir = caseFile([
      'eval: 1',
      'preset: PRESET',
      'agent: support',
      'expect:',
      '  status: COMPLETED',
      '  events:',
      "    excludes: ['tool/start[record_folowup]']",
    ])
    const result: SuiteResult = JSON.parse((await cli(['eval', dir, '--json'])).out)
    const check = result.runs[0].checks.find((k) => k.name === 'events.excludes[record_folowup]')
    assert.equal(check?.ok, false)
    const madeUp: SuiteResult = JSON.parse((await cli(['eval', join(root, 'evals/lab/unknown-tool.yml'), '--json'])).out)
    assert.ok(madeUp.runs[0].ok, JSON.stringify(madeUp.runs[0].checks.filter((k) => !k.ok)))
  })

  it('a record file no plugin writes, or one outside the case folder, is refused', async () => {
    for (const [file, message] of [
      ['eval-outbox/followup.jsonl', /not a file any plugin of the preset writes/],
      ['../../../../etc/passwd', /outside the case's folder/],
    ] as const) {
      const dir = caseFile([
        'eval: 1',
        'preset: PRESET',
        'agent: followup',
        'overlay:',
        '  plugins:',
        '    - { plugin: support-desk, config: { outbox: eval-outbox/followups.jsonl } }',
        'answers: [{ approve: true }]',
        'records:',
        `  followups: { file: "${file}" }`,
        'expect:',
        '  status: COMPLETED',
        '  sideEffects: { followups: 0 }',
      ])
      const r = await cli(['eval', dir, '--json'])
      const result: SuiteResult = JSON.parse(r.out)
      assert.match(result.runs[0].error?.message ?? '', message)
      assert.equal(r.code, 1)
    }
  })

  it('a case that runs past its time limit is cancelled and fails; the suite goes on', async () => {
    const dir = caseFile([
      'eval: 1',
      'preset: PRESET',
      'agent: followup',
      'sandbox: [record_followup]',
      'timeoutMs: 300',
      'overlay:',
      '  model: { plugin: model-scripted, config: { delayMs: 60000 } }',
      'expect:',
      '  status: COMPLETED',
    ])
    writeFileSync(
      join(dir, 'quick.yml'),
      ['eval: 1', `preset: ${join(root, 'presets/default.yml')}`, 'agent: support', 'expect:', '  status: COMPLETED'].join('\n'),
    )
    const r = await cli(['eval', dir, '--json'])
    const result: SuiteResult = JSON.parse(r.out)
    const slow = result.runs.find((x) => x.case === 'case')!
    assert.equal(slow.error?.code, 'deadline_exceeded')
    assert.ok(result.runs.find((x) => x.case === 'quick')!.ok)
    assert.equal(r.code, 1)
  })

  it('a name no plugin has is refused before anything runs: --ablate, --plugin, --vary PLUGIN.key', async () => {
    const one = join(root, 'evals/support/answer-cites-source.yml')
    for (const [args, message] of [
      [['--ablate', 'polcy'], /no plugin installed or named by the suite's presets is called "polcy" \(did you mean policy\?\)/],
      [['--vary', 'policy-rules.defualt=allow,deny'], /policy-rules has no config key "defualt" \(did you mean default\?\)/],
      [
        ['--plugin', 'policy-rulez@1', '--plugin', 'policy-rulez@2'],
        /no plugin installed or named by the suite's presets is called "policy-rulez"/,
      ],
    ] as const) {
      const r = await cli(['eval', one, ...args])
      assert.equal(r.code, 2, r.err)
      assert.match(r.err, message)
    }
  })

  it('a --plugin side that cannot run fails the command, and the model can be compared by version', async () => {
    const one = join(root, 'evals/support/answer-cites-source.yml')
    const broken = await cli(['eval', one, '--plugin', 'policy-rules@^1', '--plugin', 'policy-rules@^9', '--json'])
    assert.equal(broken.code, 1)
    assert.equal(JSON.parse(broken.out).runs[1].error.code, 'plugin_version_unsatisfiable')
    const model = await cli(['eval', one, '--plugin', 'model-scripted@^1.1.0', '--plugin', 'model-scripted@^1.2.0', '--json'])
    assert.equal(model.code, 0, model.out)
  })

  it('a preset folder with a symbolic link is refused: a tool could write through it out of the copy', async () => {
    const work = tempDir()
    cpSync(join(root, 'presets/default.yml'), join(work, 'preset.yml'))
    symlinkSync(tempDir(), join(work, 'out'))
    const dir = caseFile(['eval: 1', `preset: ${join(work, 'preset.yml')}`, 'agent: support', 'expect:', '  status: COMPLETED'])
    const result: SuiteResult = JSON.parse((await cli(['eval', dir, '--json'])).out)
    assert.match(result.runs[0].error?.message ?? '', /holds a symbolic link/)
  })

  it("a preset's path: plugin works in every case (each case has its own catalogue)", async () => {
    const work = tempDir()
    cpSync(join(root, 'test/fixtures/plugins/eval-desk'), join(work, 'desk'), { recursive: true })
    const preset = readFileSync(join(root, 'presets/default.yml'), 'utf8').replace(
      '      - plugin: support-desk\n',
      '      - { path: ./desk, config: { records: desk.jsonl } }\n      - plugin: support-desk\n',
    )
    writeFileSync(join(work, 'preset.yml'), preset)
    writeFileSync(join(work, 'package.json'), '{"type": "module"}')
    const dir = tempDir()
    for (const name of ['one', 'two'])
      writeFileSync(
        join(dir, `${name}.yml`),
        ['eval: 1', `preset: ${join(work, 'preset.yml')}`, 'agent: support', 'expect:', '  status: COMPLETED'].join('\n'),
      )
    const r = await cli(['eval', dir, '--jobs', '1', '--json'])
    const result: SuiteResult = JSON.parse(r.out)
    assert.deepEqual(
      result.runs.map((x) => [x.case, x.ok, x.error?.message]),
      [
        ['one', true, undefined],
        ['two', true, undefined],
      ],
    )
  })
})

describe('cordage eval for a project of its own (what a new user ran into)', () => {
  it('a case whose preset does not exist is a usage error before anything runs, naming where it looked', async () => {
    const dir = caseFile(['eval: 1', 'preset: ./nope.yml', 'expect:', '  status: COMPLETED'])
    const r = await cli(['eval', dir])
    assert.equal(r.code, 2)
    assert.match(r.err, /preset .*nope\.yml does not exist \(a case's preset is relative to the case file\)/)
  })

  it("records an earlier run left in the preset's folder are not counted, and the case says so", async () => {
    const work = tempDir()
    cpSync(join(root, 'presets/default.yml'), join(work, 'preset.yml'))
    mkdirSync(join(work, 'eval-outbox'))
    writeFileSync(join(work, 'eval-outbox/followups.jsonl'), '{"ticketId":"T-1001","note":"old"}\n{"ticketId":"T-1002","note":"old"}\n')
    const dir = caseFile([
      'eval: 1',
      `preset: ${join(work, 'preset.yml')}`,
      'agent: followup',
      'sandbox: [record_followup]',
      'overlay:',
      '  plugins:',
      '    - { plugin: support-desk, config: { outbox: eval-outbox/followups.jsonl } }',
      'answers: [{ approve: true }]',
      'records:',
      '  followups: { file: eval-outbox/followups.jsonl, key: ticketId }',
      'expect:',
      '  status: COMPLETED',
      '  sideEffects: { followups: 1 }',
    ])
    const result: SuiteResult = JSON.parse((await cli(['eval', dir, '--json'])).out)
    assert.ok(result.runs[0].ok, JSON.stringify(result.runs[0]))
    assert.ok(result.runs[0].notes?.some((n) => /already held 2 record\(s\) from earlier runs/.test(n)))
    assert.equal(
      readFileSync(join(work, 'eval-outbox/followups.jsonl'), 'utf8').split('\n').filter(Boolean).length,
      2,
      'the project file is untouched',
    )
  })

  it("an overlay configures the preset's own path: plugin, and --ablate knows it by name", async () => {
    const work = tempDir()
    cpSync(join(root, 'test/fixtures/plugins/eval-desk'), join(work, 'desk'), { recursive: true })
    writeFileSync(join(work, 'package.json'), '{"type": "module"}')
    writeFileSync(
      join(work, 'preset.yml'),
      readFileSync(join(root, 'presets/default.yml'), 'utf8').replace(
        '      - plugin: support-desk\n',
        '      - { path: ./desk, config: { records: desk.jsonl } }\n      - plugin: support-desk\n',
      ),
    )
    const dir = caseFile([
      'eval: 1',
      `preset: ${join(work, 'preset.yml')}`,
      'agent: support',
      'overlay:',
      '  plugins:',
      `    - { path: ${join(work, 'desk')}, config: { records: other.jsonl } }`,
      'records:',
      '  notes: { file: other.jsonl }',
      'expect:',
      '  status: COMPLETED',
      '  sideEffects: { notes: 0 }',
    ])
    const r = await cli(['eval', dir, '--ablate', 'eval-desk', '--json'])
    assert.equal(r.code, 0, r.err + r.out)
    const result: SuiteResult = JSON.parse(r.out)
    assert.deepEqual(
      result.runs.map((x) => [x.variant, x.ok]),
      [
        ['full', true],
        ['-eval-desk', true],
      ],
    )
  })

  it('an approval the case meant to give, never asked for because policy denied the action, is explained', async () => {
    const dir = caseFile([
      'eval: 1',
      'preset: PRESET',
      'agent: followup',
      'overlay:',
      '  plugins:',
      '    - { plugin: policy-rules, config: { approvers: [] } }',
      'sandbox: [record_followup]',
      'answers: [{ approve: true }]',
      'expect:',
      '  status: COMPLETED',
    ])
    const result: SuiteResult = JSON.parse((await cli(['eval', dir, '--json'])).out)
    const notes = result.runs[0].notes ?? []
    assert.ok(
      notes.some((n) => /s1\.a1 record_followup was denied by policy/.test(n)),
      notes.join('\n'),
    )
  })
})

describe('cordage eval: a miss of an ablated variant is measured, not a failure', () => {
  it('marks it "miss" (not FAIL), exits 0, and the report shows nothing red', async () => {
    const report = join(tempDir(), 'report.html')
    const r = await cli(['eval', join(root, 'evals/support/wrong-answer-no-citation.yml'), '--ablate', 'verifier', '--report', report])
    assert.equal(r.code, 0, r.err)
    assert.match(r.out, /^pass {2}full +wrong-answer-no-citation /m)
    assert.match(r.out, /^miss {2}-verifier +wrong-answer-no-citation /m)
    assert.doesNotMatch(r.out, /^FAIL/m)
    const html = readFileSync(report, 'utf8')
    assert.doesNotMatch(html, /class="(badge|cell) bad"/)
    assert.match(html, /every expectation of the gated variants held/)
  })
})
