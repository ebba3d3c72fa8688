/**
 * presets/coding.yml end to end. The agent reads, lists and searches its workspace (a throwaway copy of
 * presets/coding-workspace/), waits for a person before its edit, runs the tests, and completes only
 * when the sealed `node --test` check passes. Driven through the agent API in this process, and through
 * the real `cordage` binary across processes (run in one, approve or reject in another).
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import { readService, type RunEvent } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import type { ScriptedModel } from '../plugins/model-scripted/index.ts'
import type { ScriptEntry } from '../plugins/model-scripted/manifest.ts'
import { SealedFeedback } from '../plugins/verifier-suite/check.ts'
import { tempDir } from './temp.ts'
import { cordageBin as bin } from './bin.ts'

const root = resolve(import.meta.dirname, '..')
const preset = join(root, 'presets/coding.yml')
const template = join(root, 'presets/coding-workspace')
const buggy = readFileSync(join(template, 'src/cart.js'), 'utf8')
const fixed = buggy.replace('subtotal * discountPercent', 'subtotal * discountPercent / 100')

/** Folders this file made, removed when it is done: nothing is left in the OS temporary folder. */
const made: string[] = []
function scratch(): string {
  const dir = tempDir('cordage-coding-')
  made.push(dir)
  return dir
}
after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/**
 * The cordage binary, run in `cwd`, with `cwd` as its temporary folder too: the preset's temporary
 * workspaces land in `<cwd>/cordage-workspaces-<uid>/`, which this test can look into and removes.
 */
function cordage(args: string[], cwd: string) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', TMPDIR: cwd } })
  const events = result.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RunEvent)
  return { code: result.status, events, stderr: result.stderr }
}

/** Where the cordage binary, run by {@link cordage} in `cwd`, puts the workspace of `runId`. */
const cliWorkspace = (cwd: string, runId: string) => join(cwd, `cordage-workspaces-${process.getuid!()}`, runId)

/** A hash of every file under `dir` (paths and contents), to prove a folder did not change. */
function treeHash(dir: string): string {
  const hash = createHash('sha256')
  const visit = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name)
      if (statSync(path).isDirectory()) visit(path)
      else hash.update(relative(dir, path)).update('\0').update(readFileSync(path)).update('\0')
    }
  }
  visit(dir)
  return hash.digest('hex')
}

function only<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type)
}

/** Event types in order, those of an action tagged with its tool (named by `tool/proposed` in `all`): a trace to compare against. */
function trace(events: RunEvent[], types: string[], all = events): string[] {
  const tools = new Map(only(all, 'tool/proposed').map((e) => [e.actionId, e.data.tool]))
  return events
    .filter((e) => types.includes(e.type))
    .map((e) => {
      const tool = e.actionId && ((e.data as { tool?: string }).tool ?? tools.get(e.actionId))
      return tool ? `${e.type} ${tool}` : e.type
    })
}

const wrongEdit: ScriptEntry = {
  tool: 'edit_file',
  args: { path: 'src/cart.js', find: 'subtotal - subtotal * discountPercent', replace: 'subtotal - discountPercent' },
}
/** The repair of {@link wrongEdit}: the right formula, written over the wrong one. */
const repairEdit: ScriptEntry = {
  tool: 'edit_file',
  args: { path: 'src/cart.js', find: 'subtotal - discountPercent', replace: 'subtotal - subtotal * discountPercent / 100' },
}

/**
 * presets/coding.yml with another script after its first three steps, or an unsealed test check,
 * written to `dir`. The template is named by absolute path; `inProcess` also puts the store in memory
 * and the workspaces in `dir/workspaces`, kept whatever the outcome, so a test can look at them.
 */
function variant(dir: string, options: { script?: ScriptEntry[]; sealed?: boolean; inProcess?: boolean; verifier?: unknown }): string {
  const doc = parse(readFileSync(preset, 'utf8'))
  const agent = doc.agents.coder
  if (options.script) {
    const script = agent.model.config.script as ScriptEntry[]
    agent.model.config.script = [...script.slice(0, 3), ...options.script]
  }
  const entry = (name: string) => agent.plugins.find((p: { plugin?: string }) => p.plugin === name)
  entry('workspace-local').config.template = template
  if (options.inProcess) {
    Object.assign(entry('workspace-local').config, { temporary: false, root: join(dir, 'workspaces'), keep: 'always' })
    agent.plugins = agent.plugins.map((p: unknown) => (typeof p === 'string' && p.startsWith('store-sqlite') ? 'store-memory' : p))
  }
  if (options.sealed !== undefined) entry('verifier-suite').config.all[1].command.sealed = options.sealed
  if (options.verifier) agent.plugins = agent.plugins.map((p: unknown) => (p === entry('verifier-suite') ? options.verifier : p))
  const file = join(dir, 'coding-variant.yml')
  writeFileSync(file, stringify(doc))
  return file
}

/** The coding agent of a variant, in this process. */
async function inProcess(options: { script?: ScriptEntry[]; sealed?: boolean; verifier?: unknown } = {}) {
  const dir = scratch()
  const app = await Cordage.fromPreset(variant(dir, { ...options, inProcess: true }))
  const agent = app.agent('coder')
  return {
    app,
    agent,
    workspace: (runId: string) => join(dir, 'workspaces', runId),
    events: (runId: string) => agent.store().load(runId),
    model: () => readService<ScriptedModel>(agent.ctx, 'model')!.value,
    /** What the model was told after a failed answer, over the whole run. */
    feedback: () =>
      readService<ScriptedModel>(agent.ctx, 'model')!
        .value.requests.at(-1)!
        .messages.filter((m) => m.text.includes('The answer was not accepted'))
        .map((m) => m.text),
  }
}

describe('presets/coding.yml through the agent API', () => {
  it('reads, searches, waits for approval of the edit with nothing edited, then applies it, runs the tests and completes', async () => {
    const coder = await inProcess()
    try {
      const paused = await coder.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const workspace = coder.workspace(paused.runId)
      assert.equal(treeHash(workspace), treeHash(template), 'zero edits before approval: the workspace is the template as it was')
      const before = await coder.events(paused.runId)
      assert.deepEqual(trace(before, ['tool/end', 'tool/decision', 'run/checkpoint', 'tool/approval-requested', 'run/paused']), [
        'tool/decision list_files',
        'tool/end list_files',
        'tool/decision read_file',
        'tool/end read_file',
        'tool/decision search',
        'tool/end search',
        'tool/decision edit_file',
        'run/checkpoint',
        'tool/approval-requested edit_file',
        'run/paused',
      ])
      assert.match(only(before, 'tool/end')[1].data.observation, /^\[file: src\/cart\.js\] 6 lines\n/)
      assert.match(only(before, 'tool/end')[2].data.observation, /src\/cart\.js:5: return subtotal - subtotal \* discountPercent/)
      const ask = only(before, 'tool/decision').at(-1)!
      assert.deepEqual([ask.data.verdict, ask.data.ruleId], ['ask', 'edits-need-approval'])
      assert.match(ask.data.policyVersion, /^policy-rules@2\.1\.0\+/)

      // What the files are when the verifier runs: the approved edit, in the run's workspace.
      let verified: string | undefined
      coder.agent.ctx.on('verify/start', (event) => {
        if (event.runId === paused.runId) verified = readFileSync(join(workspace, 'src/cart.js'), 'utf8')
      })
      const done = await (await coder.agent.approve(paused.runId, 's4.a1', { by: 'reviewer' })).done
      assert.equal(done.status, 'COMPLETED', done.reason)
      assert.equal(verified, fixed)
      const events = await coder.events(paused.runId)
      const after = events.slice(before.length)
      assert.deepEqual(
        trace(after, ['tool/approval-decided', 'run/resumed', 'tool/start', 'tool/end', 'verify/start', 'verify/end', 'run/end'], events),
        [
          'tool/approval-decided edit_file',
          'run/resumed',
          'tool/start edit_file',
          'tool/end edit_file',
          'tool/start run_tests',
          'tool/end run_tests',
          'verify/start',
          'verify/end',
          'run/end',
        ],
      )
      const [decided] = only(after, 'tool/approval-decided')
      assert.deepEqual([decided.data.approved, decided.data.by], [true, 'reviewer'])
      assert.equal(only(after, 'tool/end')[0].data.observation, 'replaced one snippet in src/cart.js.')
      assert.match(only(after, 'tool/end')[1].data.observation, /^tests passed: `node --test` exited 0/)
      const [end] = only(after, 'verify/end')
      assert.equal(end.data.ok, true)
      assert.equal(end.producer, 'verifier-suite@1.0.0')
      const [citation, command] = end.data.evidence
      assert.deepEqual([citation.kind, citation.ref], ['citation', 'src/cart.js'])
      assert.equal(citation.seq, only(before, 'tool/end')[0].seq, 'first seen in the list_files result')
      assert.equal(command.kind, 'command')
      assert.match(command.ref, /^exit 0: .*# pass 3 # fail 0/)
      assert.deepEqual(coder.feedback(), [])
      assert.equal(readFileSync(join(template, 'src/cart.js'), 'utf8'), buggy, 'the template in the repository is never changed')
    } finally {
      await coder.app.stop()
    }
  })

  it('feeds the test failure back within the repair budget; the model repairs its edit, it is approved, and the run completes', async () => {
    const coder = await inProcess({
      sealed: false,
      script: [
        wrongEdit,
        { final: 'Fixed [file: src/cart.js].' },
        repairEdit,
        { tool: 'run_tests' },
        { final: 'Fixed now; the tests pass [file: src/cart.js].' },
      ],
    })
    try {
      const first = await coder.agent.run()
      const second = await (await coder.agent.approve(first.runId, 's4.a1', { by: 'reviewer' })).done
      assert.equal(second.status, 'WAITING_APPROVAL', 'the repair is an edit too: it asks again')
      assert.equal(second.waiting?.actionId, 's6.a1')
      const feedback = coder.feedback()
      assert.equal(feedback.length, 1)
      assert.match(
        feedback[0],
        /The answer was not accepted \(verification_failed\): check "workspace-tests": `node --test` exited 1 [\s\S]*takes a discount given in percent[\s\S]*# fail 1/,
      )
      // The model got the feedback in the step after the failed answer, the one that proposed the repair.
      const requests = coder.model().requests
      assert.ok(!requests[4].messages.some((m) => m.text.includes('The answer was not accepted')))
      assert.match(requests[5].messages.at(-1)!.text, /The answer was not accepted/)

      const done = await (await coder.agent.approve(first.runId, 's6.a1', { by: 'reviewer' })).done
      assert.equal(done.status, 'COMPLETED', done.reason)
      const ends = only(await coder.events(first.runId), 'verify/end')
      assert.deepEqual(
        ends.map((e) => [e.data.ok, e.data.code, e.data.repair]),
        [
          [false, 'verification_failed', true],
          [true, undefined, undefined],
        ],
      )
      assert.equal(readFileSync(join(coder.workspace(first.runId), 'src/cart.js'), 'utf8'), fixed)
    } finally {
      await coder.app.stop()
    }
  })

  for (const sealed of [true, false]) {
    it(`fails verification when the repair budget is spent; the model is told ${sealed ? 'only that the sealed check failed' : 'the test output, as the check is not sealed'}`, async () => {
      const coder = await inProcess({
        sealed,
        script: [wrongEdit, { final: 'Fixed [file: src/cart.js].' }, { final: 'Fixed [file: src/cart.js].' }],
      })
      try {
        const paused = await coder.agent.run()
        assert.equal(paused.status, 'WAITING_APPROVAL')
        const done = await (await coder.agent.approve(paused.runId, 's4.a1', { by: 'reviewer' })).done
        assert.deepEqual([done.status, done.failureCode], ['FAILED_VERIFICATION', 'verification_failed'])
        const ends = only(await coder.events(paused.runId), 'verify/end')
        assert.deepEqual(
          ends.map((e) => [e.data.ok, e.data.repair]),
          [
            [false, true],
            [false, false],
          ],
          'maxRepairs: 1',
        )
        for (const end of ends) {
          assert.match(
            end.data.reason!,
            /^check "workspace-tests": `node --test` exited 1 after \d+ ms, expected 0\. Output \(end\):\n[\s\S]*# fail 1/,
            'the record keeps the diagnostics',
          )
          assert.ok(end.data.evidence.some((e) => e.kind === 'command' && e.ref.startsWith('exit 1:')))
        }
        const feedback = coder.feedback()
        assert.equal(feedback.length, 1, 'one repair, one feedback')
        if (sealed) {
          assert.ok(feedback[0].endsWith(`The answer was not accepted (verification_failed): ${SealedFeedback}`), feedback[0])
          for (const end of ends) assert.equal(end.data.feedback, SealedFeedback)
          const seen = coder
            .model()
            .requests.flatMap((r) => r.messages.map((m) => m.text))
            .join('\n')
          assert.doesNotMatch(seen, /# fail|not ok|exited 1|workspace-tests/, 'no request ever carried the sealed diagnostics')
        } else {
          assert.match(feedback[0], /`node --test` exited 1 [\s\S]*# fail 1/)
          for (const end of ends) assert.equal(end.data.feedback, undefined)
        }
        assert.ok(existsSync(join(coder.workspace(paused.runId), 'src', 'cart.js')))
      } finally {
        await coder.app.stop()
      }
    })
  }
})

describe('presets/coding.yml with another verifier', () => {
  it('runs unchanged with verifier-basic in place of verifier-suite, which checks the citation only, not the tests', async () => {
    const verifier = { plugin: 'verifier-basic', config: { pattern: '\\[file: ([^\\]]+)\\]' } }
    for (const script of [undefined, [wrongEdit, { tool: 'run_tests' }, { final: 'Fixed [file: src/cart.js].' }]]) {
      const coder = await inProcess({ verifier, script })
      try {
        const paused = await coder.agent.run()
        assert.equal(paused.status, 'WAITING_APPROVAL')
        const done = await (await coder.agent.approve(paused.runId, 's4.a1', { by: 'reviewer' })).done
        // Even the wrong edit completes: the citation is all verifier-basic asks for.
        assert.equal(done.status, 'COMPLETED', done.reason)
        const [end] = only(await coder.events(paused.runId), 'verify/end')
        assert.equal(end.producer, 'verifier-basic@1.0.0')
        assert.deepEqual(
          end.data.evidence.map((e) => [e.kind, e.ref]),
          [['citation', 'src/cart.js']],
        )
        const tests = only(await coder.events(paused.runId), 'tool/end').find((e) => e.data.tool === 'run_tests')!
        assert.match(tests.data.observation, script ? /^tests failed/ : /^tests passed/)
      } finally {
        await coder.app.stop()
      }
    }
  })
})

describe('presets/coding.yml through the cordage binary', () => {
  it("waits for approval in one process, completes when approved from another, removes the completed run's copy; a new run starts fresh", () => {
    const cwd = scratch()
    const before = treeHash(template)

    const run = cordage(['run', '--preset', preset, '--json'], cwd)
    assert.equal(run.code, 5, run.stderr)
    const runId = run.events[0].runId
    const paused = run.events.at(-1)!
    assert.ok(paused.type === 'run/paused')
    assert.deepEqual([paused.data.status, paused.data.actionId], ['WAITING_APPROVAL', 's4.a1'])
    assert.deepEqual(
      only(run.events, 'tool/end').map((e) => e.data.tool),
      ['list_files', 'read_file', 'search'],
    )
    assert.deepEqual(
      only(run.events, 'tool/approval-requested').map((e) => e.data.tool),
      ['edit_file'],
    )
    const workspace = cliWorkspace(cwd, runId)
    assert.equal(treeHash(workspace), before, 'zero edits before approval: the workspace is the template as it was')
    assert.equal(existsSync(join(cwd, '.cordage', 'workspaces')), false, 'nothing in the working directory but the store')

    const approve = cordage(['approve', runId, 's4.a1', '--preset', preset, '--by', 'reviewer', '--json'], cwd)
    assert.equal(approve.code, 0, approve.stderr)
    assert.equal(
      only(approve.events, 'tool/end').find((e) => e.data.tool === 'edit_file')!.data.observation,
      'replaced one snippet in src/cart.js.',
    )
    assert.match(
      only(approve.events, 'tool/end').find((e) => e.data.tool === 'run_tests')!.data.observation,
      /^tests passed: `node --test` exited 0/,
    )
    const [verified] = only(approve.events, 'verify/end')
    assert.equal(verified.data.ok, true)
    assert.match(verified.data.evidence[1].ref, /^exit 0: .*# pass 3 # fail 0/)
    const end = approve.events.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED')
    assert.equal(existsSync(workspace), false, "keep: failed removes a completed run's copy")

    const again = cordage(['run', '--preset', preset, '--json'], cwd)
    assert.equal(again.code, 5, again.stderr)
    const second = cliWorkspace(cwd, again.events[0].runId)
    assert.notEqual(second, workspace)
    assert.equal(readFileSync(join(second, 'src/cart.js'), 'utf8'), buggy, 'a new run starts from the template')
    assert.equal(treeHash(template), before, 'the template in the repository is never changed')
  })

  it('leaves the workspace as it was when the edit is rejected; the run fails verification and keeps its copy', () => {
    const cwd = scratch()
    const run = cordage(['run', '--preset', preset, '--json'], cwd)
    assert.equal(run.code, 5, run.stderr)
    const runId = run.events[0].runId
    const reject = cordage(['reject', runId, 's4.a1', '--preset', preset, '--json'], cwd)
    assert.equal(reject.code, 3, reject.stderr)
    const [rejected] = only(reject.events, 'tool/error')
    assert.deepEqual([rejected.data.tool, rejected.data.code], ['edit_file', 'approval_rejected'])
    assert.equal(treeHash(cliWorkspace(cwd, runId)), treeHash(template), 'no edit, no journal')
    assert.match(
      only(reject.events, 'tool/end').find((e) => e.data.tool === 'run_tests')!.data.observation,
      /^tests failed: `node --test` exited 1/,
    )
    const ends = only(reject.events, 'verify/end')
    assert.deepEqual(
      ends.map((e) => [e.data.ok, e.data.repair, e.data.feedback]),
      [
        [false, true, SealedFeedback],
        [false, false, SealedFeedback],
      ],
    )
    const end = reject.events.at(-1)!
    assert.ok(end.type === 'run/end')
    assert.deepEqual([end.data.status, end.data.failureCode], ['FAILED_VERIFICATION', 'verification_failed'])
  })
})
