import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import { CordageError, emptyState, type RunState, type VerifyResult } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { deskPreset, refundAnswer, supportDesk as makeDesk, tempDir as makeTempDir, type DeskOptions } from '../../../test/helpers.ts'
import { buildCheck } from '../build.ts'
import { SealedFeedback } from '../check.ts'
import { parseCheckTree } from '../config.ts'
import manifest from '../manifest.ts'
import { SuiteVerifier } from '../suite-verifier.ts'

/** Folders this file made, removed when it is done. */
const made: string[] = []
function tempDir(): string {
  const dir = makeTempDir('cordage-verifier-suite-')
  made.push(dir)
  return dir
}
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** The support desk of test/helpers.ts, its folder removed with the others. */
async function supportDesk(options: DeskOptions) {
  const desk = await makeDesk(options)
  made.push(desk.dir)
  return desk
}

/** A verifier from a config tree, running commands in `dir` (standing in for the run's workspace). */
function suite(config: unknown, dir = tempDir()): SuiteVerifier {
  return new SuiteVerifier(buildCheck(parseCheckTree(config), { workspaceDir: async () => dir, resolveCwd: (cwd) => resolve(dir, cwd) }))
}

function stateWith(observations: { text: string; ok?: boolean; seq: number }[] = [], finalSeq = 99): RunState {
  const state = emptyState('run_test_1')
  for (const o of observations)
    state.transcript.push({ kind: 'observation', actionId: `s1.a${o.seq}`, tool: 't', ok: o.ok ?? true, text: o.text, seq: o.seq })
  state.transcript.push({ kind: 'assistant', decision: { kind: 'final', text: '' }, actionIds: [], seq: finalSeq })
  return state
}

const signal = new AbortController().signal
const verify = (v: SuiteVerifier, answer: string, state = stateWith(), s = signal) => v.verify({ state, answer, signal: s })
const failed = (r: VerifyResult) => {
  assert.ok(!r.ok, 'expected a failure')
  return r
}

/** Running: it exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms
  while (!condition()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A shell that starts a long sleep and writes both pids to `pids` in its folder. */
const LongCommand = 'sleep 30 & echo $$ $! > pids; wait'

describe('verifier-suite config', () => {
  const cases: [string, unknown, RegExp][] = [
    ['an empty config', {}, /config: expected exactly one of all, any, evidence, output, command, found none/],
    ['two kinds in one node', { evidence: {}, output: { format: 'text' } }, /found evidence, output/],
    ['an unknown key', { all: [{ evidence: {}, sealed: true }] }, /all\[0\]: unknown key sealed/],
    [
      'a command string without shell',
      { all: [{ evidence: {} }, { command: { run: 'node --test' } }] },
      /all\[1\]\.command\.run: give run as an argument list/,
    ],
    [
      'an unknown command option',
      { command: { run: ['true'], timeout: 5 } },
      /command\.timeout: unknown key "timeout"; a command check has run, shell, cwd, timeoutMs, /,
    ],
    [
      'unknown evidence options',
      { any: [{ evidence: {} }, { evidence: { patern: 'x', min: 1 } }] },
      /any\[1\]\.evidence\.patern: unknown keys "patern", "min"; an evidence check has pattern, flags, minCount, mustBeObserved, kind, sealed, feedback, repairable$/,
    ],
    [
      'an option of the wrong type',
      { all: [{ evidence: { minCount: 'two' } }] },
      /all\[0\]\.evidence\.minCount: Invalid input: expected number, received string/,
    ],
    [
      'a lookahead in an evidence pattern',
      { all: [{ evidence: { pattern: '\\[source: (?!draft)([^\\]]+)\\]' } }] },
      /all\[0\]\.evidence\.pattern: .* is not a valid regular expression: .*\(lookahead, lookbehind and backreferences are not supported: patterns run on a linear-time engine/,
    ],
    [
      'a backreference in an output pattern',
      { output: { format: 'text', pattern: '^(\\w+) \\1$' } },
      /output\.pattern: .*lookahead, lookbehind and backreferences are not supported/,
    ],
    [
      'a pattern that does not compile',
      { evidence: { pattern: 'REF-(\\d+' } },
      /evidence\.pattern: \/REF-\(\\d\+\/ is not a valid regular expression: missing closing \)/,
    ],
    ['an empty composite', { any: [] }, /any: expected a non-empty list of checks/],
    ['a schema for text output', { output: { format: 'text', schema: { type: 'object' } } }, /output\.schema: schema is for format: json/],
  ]
  for (const [what, config, message] of cases) {
    it(`refuses ${what}, naming the path`, () => {
      assert.throws(
        () => parseCheckTree(config),
        (error: CordageError) => {
          assert.equal(error.code, 'plugin_config_invalid')
          assert.match(error.message, message)
          return true
        },
      )
    })
  }

  it("refuses the same problems in the manifest's schema, naming the key path, so the host reports its line", async () => {
    for (const [config, message] of [
      [
        { all: [{ evidence: {} }, { output: { format: 'text', pattern: '(?<=a)b' } }] },
        /^\$\.all\[1\]\.output\.pattern \/\(\?<=a\)b\/ is not a valid regular expression: .*lookahead, lookbehind and backreferences are not supported/,
      ],
      [{ evidence: { pattern: 'x', bogus: true } }, /^\$\.evidence\.bogus unknown key "bogus"; an evidence check has pattern, /],
      [{ any: [{ evidnce: {} }] }, /^\$\.any\[0\] unknown key evidnce; a check has name and one of all, any, evidence, output, command$/],
    ] as [Record<string, unknown>, RegExp][]) {
      assert.throws(
        () => manifest.config(config as Parameters<typeof manifest.config>[0]),
        (error: Error) => message.test(error.message),
      )
    }
    const refused = async (config: unknown, message: RegExp) => {
      const file = join(tempDir(), 'preset.yml')
      writeFileSync(file, stringify(deskPreset({ script: [], verifierPlugin: { plugin: 'verifier-suite', config } }, 'outbox.jsonl')))
      await assert.rejects(Cordage.fromPreset(file), (error: CordageError) => {
        assert.equal(error.code, 'plugin_config_invalid')
        assert.match(error.message, message)
        return true
      })
    }
    const evidence = { pattern: '\\[source: ([^\\]]+)\\]', flags: 'i', kind: 'citation' }
    await refused(
      { all: [{ evidence: { ...evidence, bogus: 1 } }, { output: { format: 'text' } }] },
      /preset\.yml:\d+:\d+ agents\.support\.plugins\[3\]\.config\.all\[0\]\.evidence\.bogus: plugin verifier-suite@1\.0\.0: unknown key "bogus"; an evidence check has pattern, flags, minCount, /,
    )
    await refused(
      { all: [{ evidence }, { output: { format: 'text', pattern: '(a)\\1' } }] },
      /preset\.yml:\d+:\d+ agents\.support\.plugins\[3\]\.config\.all\[1\]\.output\.pattern: plugin verifier-suite@1\.0\.0: \/\(a\)\\1\/ is not a valid regular expression: .*backreferences are not supported/,
    )
  })

  it('refuses, at start, a command check that needs a workspace when no plugin provides one', async () => {
    const file = join(tempDir(), 'preset.yml')
    writeFileSync(
      file,
      stringify(
        deskPreset({ script: [], verifierPlugin: { plugin: 'verifier-suite', config: { command: { run: ['true'] } } } }, 'outbox.jsonl'),
      ),
    )
    await assert.rejects(Cordage.fromPreset(file), (error: CordageError) => {
      assert.equal(error.code, 'plugin_config_invalid')
      assert.match(
        error.message,
        /a command check without cwd runs in the run's workspace, and this agent has no plugin that provides "workspace"/,
      )
      return true
    })
  })
})

describe('docs/concepts/verifiers.md', () => {
  const text = readFileSync(resolve(import.meta.dirname, '../../../docs/concepts/verifiers.md'), 'utf8')
  const examples = [...text.matchAll(/```yaml\n(# verifier-suite example[\s\S]*?)```/g)].map((m) => m[1])

  it('has examples, and each is a check tree the plugin accepts', () => {
    assert.ok(examples.length >= 4)
    for (const example of examples) {
      const entry = (parse(example).plugins as { plugin?: string; config?: unknown }[]).find((p) => p.plugin === 'verifier-suite')!
      assert.doesNotThrow(() => manifest.config(entry.config as Parameters<typeof manifest.config>[0]), example)
      const tree = parseCheckTree(entry.config)
      assert.doesNotThrow(() => buildCheck(tree, { workspaceDir: async () => '.', resolveCwd: (cwd) => cwd }), example)
    }
  })

  it('documents every option of every check, with its default', () => {
    for (const [kind, config] of [
      ['evidence', {}],
      ['output', { format: 'json' }],
      ['command', { run: ['true'] }],
    ] as const) {
      const spec = parseCheckTree({ [kind]: config }) as { options: Record<string, unknown> }
      for (const option of Object.keys(spec.options)) assert.match(text, new RegExp(`^\\| \`${option}\`( |,)`, 'm'), `${kind}.${option}`)
    }
  })
})

describe('verifier-suite checks', () => {
  it('evidence: passes citations a tool returned, with the seq they came from', async () => {
    const state = stateWith([{ text: 'text [source: policy/refunds#2]', seq: 10 }])
    assert.deepEqual(await verify(suite({ evidence: {} }), 'See [source: policy/refunds#2].', state), {
      ok: true,
      evidence: [{ kind: 'citation', ref: 'policy/refunds#2', seq: 10 }],
    })
    const none = failed(await verify(suite({ evidence: { minCount: 2 } }), 'See [source: policy/refunds#2].', state))
    assert.equal(none.code, 'missing_evidence')
    assert.match(none.reason, /^evidence check: the answer cites 1 reference\(s\) matching .*, 2 required\. Cite each fact/)
    const unseen = failed(await verify(suite({ evidence: {} }), 'See [source: policy/other].', state))
    assert.match(unseen.reason, /"policy\/other", which no successful tool result of this run contains/)
  })

  it('output json: accepts the answer (or its last fenced block) when it fits the JSON Schema, and lists what does not', async () => {
    const v = suite({
      name: 'status',
      output: { format: 'json', schema: { type: 'object', required: ['status'], properties: { status: { enum: ['done'] } } } },
    })
    assert.deepEqual(await verify(v, '{"status":"done"}'), {
      ok: true,
      evidence: [{ kind: 'output', ref: 'json matches the output schema', seq: 99 }],
    })
    assert.equal((await verify(v, 'Here it is:\n```json\n{"status": "done"}\n```')).ok, true)
    const wrong = failed(await verify(v, '{"status":"almost"}'))
    assert.equal(wrong.code, 'verification_failed')
    assert.match(
      wrong.reason,
      /^check "status": the JSON answer does not match the output contract: status: Invalid input: expected "done"\. Change the answer/,
    )
    assert.match(failed(await verify(v, 'done!')).reason, /the answer is not JSON/)
  })

  it('runs evidence and output patterns in time linear in the answer, however they are written', { timeout: 20_000 }, async () => {
    // On a backtracking engine each of these takes longer than the universe has left.
    const evidence = suite({ evidence: { pattern: '^(a+)+$', mustBeObserved: false } })
    assert.equal(failed(await verify(evidence, 'a'.repeat(50_000) + 'b')).code, 'missing_evidence')
    assert.equal((await verify(evidence, 'a'.repeat(50_000))).ok, true)
    const output = suite({ output: { format: 'text', pattern: '(x+x+)+y' } })
    assert.equal(failed(await verify(output, 'x'.repeat(50_000))).code, 'verification_failed')
    assert.equal((await verify(output, 'x'.repeat(50_000) + 'y')).ok, true)
  })

  it('output text: pattern and length', async () => {
    const v = suite({ output: { format: 'text', pattern: '^Fixed', maxLength: 20 } })
    assert.equal((await verify(v, 'Fixed the bug.')).ok, true)
    assert.match(failed(await verify(v, 'I fixed it.')).reason, /does not match \/\^Fixed\//)
    assert.match(failed(await verify(v, 'Fixed '.repeat(10))).reason, /at most 20 allowed/)
  })

  it('command: exit 0 and the end of the output become evidence', async () => {
    const v = suite({ command: { run: ['node', '-e', 'console.log("all 3 tests pass")'] } })
    assert.deepEqual(await verify(v, 'done'), { ok: true, evidence: [{ kind: 'command', ref: 'exit 0: all 3 tests pass' }] })
  })

  it('command: a failure says what exited how, with the end of its output, and what to fix', async () => {
    const v = suite({ command: { run: ['node', '-e', 'console.error("expected 18, got -180"); process.exit(1)'], tailChars: 100 } })
    const result = failed(await verify(v, 'done'))
    assert.equal(result.code, 'verification_failed')
    assert.equal(result.repairable, true)
    assert.equal(result.feedback, undefined, 'not sealed: the model sees the reason')
    assert.match(
      result.reason,
      /^command check: `node -e .*` exited 1 after \d+ ms, expected 0\. Output \(end\):\nexpected 18, got -180\n\. Fix what the output points at/,
    )
    assert.deepEqual(result.evidence, [{ kind: 'command', ref: 'exit 1: expected 18, got -180' }])
  })

  it('command, sealed: the model is told only that a check failed; the reason keeps the diagnostics', async () => {
    const run = ['node', '-e', 'console.log("HIDDEN-TEST-NAME failed"); process.exit(1)']
    const result = failed(await verify(suite({ command: { run, sealed: true } }), 'done'))
    assert.equal(result.feedback, SealedFeedback)
    assert.doesNotMatch(result.feedback!, /HIDDEN|exited|node/)
    assert.match(result.reason, /HIDDEN-TEST-NAME failed/)
    const own = failed(await verify(suite({ command: { run, sealed: true, feedback: 'Hidden tests failed.', repairable: false } }), 'done'))
    assert.deepEqual([own.feedback, own.repairable], ['Hidden tests failed.', false])
  })

  it('command: runs in the workspace, through a shell only when configured, with a small environment', async () => {
    const dir = tempDir()
    process.env.CORDAGE_TEST_SECRET = 'sk-should-not-leak'
    try {
      const argv = failed(
        await verify(
          suite(
            { command: { run: ['sh', '-c', 'pwd; echo "[$CORDAGE_TEST_SECRET]"; echo $EXTRA; exit 3'], env: { EXTRA: 'given' } } },
            dir,
          ),
          'x',
        ),
      )
      assert.match(argv.reason, new RegExp(`${dir}\\n\\[\\]\\ngiven`))
      const shell = await verify(
        suite({ command: { run: 'test "$CORDAGE_TEST_SECRET" = sk-should-not-leak', shell: true, inheritEnv: true } }, dir),
        'x',
      )
      assert.equal(shell.ok, true, 'inheritEnv passes the whole environment')
    } finally {
      delete process.env.CORDAGE_TEST_SECRET
    }
  })

  it('command: past its time limit the whole process group is killed and the check fails', async () => {
    const dir = tempDir()
    const t0 = Date.now()
    const result = failed(await verify(suite({ command: { run: LongCommand, shell: true, timeoutMs: 300 } }, dir), 'x'))
    assert.ok(Date.now() - t0 < 5000)
    assert.match(result.reason, /did not finish within 300 ms and was stopped \(its whole process group was killed\)/)
    const pids = readFileSync(join(dir, 'pids'), 'utf8').trim().split(/\s+/).map(Number)
    await until(() => !pids.some(alive))
  })

  it('command: cancellation kills the process group and gives no verdict', async () => {
    const dir = tempDir()
    const controller = new AbortController()
    const pending = verify(suite({ command: { run: LongCommand, shell: true } }, dir), 'x', stateWith(), controller.signal)
    await until(() => existsSync(join(dir, 'pids')) && readFileSync(join(dir, 'pids'), 'utf8').includes(' '))
    const pids = readFileSync(join(dir, 'pids'), 'utf8').trim().split(/\s+/).map(Number)
    assert.ok(pids.every(alive))
    controller.abort(new CordageError('cancelled', 'cancelled by test'))
    await assert.rejects(pending, { code: 'cancelled' })
    await until(() => !pids.some(alive))
  })
})

describe('verifier-suite composites', () => {
  const pass = { command: { run: ['true'] } }
  const fail = (text: string, extra = {}) => ({ command: { run: ['sh', '-c', `echo ${text}; exit 1`], ...extra } })

  it('all: stops at the first failure, so a later (expensive) check does not run, and keeps the evidence so far', async () => {
    const dir = tempDir()
    const v = suite({ all: [pass, { output: { format: 'text', pattern: '^ok' } }, { command: { run: ['touch', 'ran'] } }] }, dir)
    const result = failed(await verify(v, 'not ok'))
    assert.match(result.reason, /^check all\[1\] \(output\): the answer does not match/)
    assert.deepEqual(
      result.evidence!.map((e) => e.kind),
      ['command'],
    )
    assert.equal(existsSync(join(dir, 'ran')), false)
    assert.equal((await verify(v, 'ok')).ok, true)
    assert.equal(existsSync(join(dir, 'ran')), true)
  })

  it('any: the first passing alternative decides; when none passes, each reason is listed', async () => {
    assert.deepEqual(await verify(suite({ any: [fail('A'), pass] }), 'x'), { ok: true, evidence: [{ kind: 'command', ref: 'exit 0' }] })
    const result = failed(await verify(suite({ name: 'either', any: [fail('first-diagnostic'), fail('second-diagnostic')] }), 'x'))
    assert.match(
      result.reason,
      /^check "either": none of the 2 alternatives passed: \(1\) check any\[0\] \(command\): .*first-diagnostic.* \(2\) check any\[1\] \(command\): .*second-diagnostic/s,
    )
    assert.equal(result.feedback, undefined)
  })

  it("a sealed check inside a composite stays sealed: the feedback has the others' reasons and the sealed message", async () => {
    const result = failed(
      await verify(suite({ any: [fail('open-diagnostic'), fail('sealed-diagnostic', { sealed: true, repairable: false })] }), 'x'),
    )
    assert.match(result.reason, /sealed-diagnostic/)
    assert.match(result.feedback!, /open-diagnostic/)
    assert.ok(result.feedback!.includes(SealedFeedback))
    assert.doesNotMatch(result.feedback!, /sealed-diagnostic/)
    assert.equal(result.repairable, true, 'any: fixing the open alternative is enough')
    const nested = failed(await verify(suite({ all: [pass, { any: [fail('inner', { sealed: true })] }] }), 'x'))
    assert.doesNotMatch(nested.feedback!, /inner/)
  })
})

describe('verifier-suite in a run', () => {
  it('swaps in for verifier-basic: the same preset completes with either, with the same evidence', async () => {
    const script = [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }]
    const evidence = []
    for (const verifierPlugin of [undefined, { plugin: 'verifier-suite', config: { evidence: {} } }]) {
      const desk = await supportDesk({ script, verifierPlugin })
      try {
        const state = await desk.agent.run()
        assert.equal(state.status, 'COMPLETED')
        const end = (await desk.events(state.runId)).find((e) => e.type === 'verify/end')!
        assert.equal(end.producer, verifierPlugin ? 'verifier-suite@1.0.0' : 'verifier-basic@1.0.0')
        evidence.push(end.type === 'verify/end' && end.data.evidence)
      } finally {
        await desk.stop()
      }
    }
    assert.deepEqual(evidence[0], evidence[1])
  })

  it('feeds a sealed failure back as its feedback only: the model never sees the diagnostics, the record keeps them', async () => {
    const desk = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }, { final: refundAnswer }],
      budgets: { maxRepairs: 1 },
      verifierPlugin: {
        plugin: 'verifier-suite',
        config: {
          all: [
            { evidence: {} },
            { name: 'hidden', command: { run: ['sh', '-c', 'echo SECRET-DIAGNOSTIC; exit 1'], cwd: '.', sealed: true } },
          ],
        },
      },
    })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'FAILED_VERIFICATION')
      const ends = (await desk.events(state.runId)).filter((e) => e.type === 'verify/end')
      assert.deepEqual(
        ends.map((e) => e.type === 'verify/end' && [e.data.repair, e.data.feedback]),
        [
          [true, SealedFeedback],
          [false, SealedFeedback],
        ],
      )
      for (const end of ends) assert.ok(end.type === 'verify/end' && end.data.reason!.includes('SECRET-DIAGNOSTIC'))
      const seen = desk
        .model()
        .requests.at(-1)!
        .messages.map((m) => m.text)
        .join('\n')
      assert.ok(seen.includes(SealedFeedback), 'the model was told a check failed')
      assert.doesNotMatch(seen, /SECRET-DIAGNOSTIC|hidden/)
    } finally {
      await desk.stop()
    }
  })

  it("cancelling a run while a command check runs kills the command's process group; the run ends CANCELLED", async () => {
    const dir = tempDir()
    const preset = {
      cordage: 1,
      agents: {
        coder: {
          task: 'finish',
          budgets: { maxSteps: 2 },
          model: { plugin: 'model-scripted', config: { script: [{ final: 'done' }] } },
          plugins: [
            'store-memory',
            'tools-registry',
            'context-basic',
            { plugin: 'policy-rules', config: { default: 'deny' } },
            { plugin: 'verifier-suite', config: { command: { run: LongCommand, shell: true, cwd: '.' } } },
          ],
        },
      },
    }
    writeFileSync(join(dir, 'preset.yml'), stringify(preset))
    const app = await Cordage.fromPreset(join(dir, 'preset.yml'))
    try {
      const agent = app.agent('coder')
      const handle = agent.start()
      await until(() => existsSync(join(dir, 'pids')) && readFileSync(join(dir, 'pids'), 'utf8').includes(' '))
      const pids = readFileSync(join(dir, 'pids'), 'utf8').trim().split(/\s+/).map(Number)
      assert.ok(pids.every(alive), 'the shell and its sleep are running')
      const state = await agent.cancel(handle.runId, { by: 'ops' })
      assert.equal(state.status, 'CANCELLED')
      assert.equal(state.failureCode, 'cancelled')
      await until(() => !pids.some(alive))
    } finally {
      await app.stop()
    }
  })
})
