/**
 * A tool call that waits on a condition outside its run (issue 28: the pause of issue 17's child wait,
 * made generic). The kernel pauses and resumes; what the condition is, it asks the condition's owner
 * through the `waits` service. Here the owner is a plugin (test/fixtures/plugins/latch-desk: latches are
 * files the test opens), not the host's child runs: nothing here is a subagent.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { replay, type RunEvent, type WaitsService } from 'cordage'
import { Cordage } from 'cordage/host'
import { tempDir } from './temp.ts'
import { sourceBin } from './bin.ts'

const latchDesk = { path: resolve(import.meta.dirname, 'fixtures/plugins/latch-desk') }
const apps: Cordage[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.stop()
})

async function setUp(script: unknown[], dir = tempDir('cordage-outside-waits-'), name = 'preset.yml') {
  const file = join(dir, name)
  const agent = {
    budgets: { maxSteps: 10 },
    model: { plugin: 'model-scripted', config: { script } },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      { plugin: 'policy-rules', config: { default: 'deny', rules: [{ id: 'all', verdict: 'allow', match: {} }] } },
      { ...latchDesk, config: { dir: 'latches' } },
    ],
  }
  writeFileSync(file, stringify({ cordage: 1, agents: { desk: agent } }))
  const app = await Cordage.fromPreset(file, {
    onError: (error) => {
      throw error
    },
  })
  apps.push(app)
  const latch = (name: string) => join(dir, 'latches', `${name}.json`)
  const open = (name: string) =>
    writeFileSync(latch(name), JSON.stringify({ ...JSON.parse(readFileSync(latch(name), 'utf8')), state: 'open' }))
  return { dir, file, app, desk: app.agent('desk'), latch, open }
}

const waitThenAnswer = [{ tool: 'wait_latch', args: { name: 'L' } }, { final: 'The latch opened.' }]

async function events(app: Cordage, runId: string): Promise<RunEvent[]> {
  return app.agent('desk').store().load(runId)
}

describe('a call that waits on an outside condition', () => {
  it('pauses in the status the condition gives, is refused a resume until the owner says it ended, then runs the call again', async () => {
    const { app, desk, open } = await setUp(waitThenAnswer)
    const run = await desk.run('wait for L')
    assert.equal(run.status, 'SUSPENDED', run.reason)
    assert.deepEqual(run.waiting?.on, { kind: 'latch', name: 'L' })
    assert.equal(run.waiting?.child, undefined, 'a latch is not a child run')
    assert.equal(run.waiting?.actionId, 's1.a1')
    assert.equal(run.actions['s1.a1'].status, 'running', 'the call has no outcome yet')
    assert.match(run.waiting?.reason ?? '', /action s1\.a1 \(wait_latch\) waits on latch L to open/)
    const paused = (await events(app, run.runId)).find((e): e is RunEvent<'run/paused'> => e.type === 'run/paused')!
    assert.deepEqual(paused.data.waitsOn, { kind: 'latch', name: 'L' })
    assert.equal(paused.data.child, undefined)

    await assert.rejects(desk.resume(run.runId), {
      code: 'child_waiting',
      message: /run \S+ cannot go on: it waits on latch L, which is closed/,
    })
    assert.equal((await desk.load(run.runId)).lastSeq, run.lastSeq, 'the refused resume recorded nothing')

    open('L')
    const done = await (await desk.resume(run.runId)).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    const ends = (await events(app, run.runId)).filter((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')
    assert.deepEqual(
      ends.map((e) => [e.actionId, e.data.output]),
      [['s1.a1', 'latch L is open']],
      'the same call ran again, and only its second run has an outcome',
    )
  })

  it('is the tool failing, never a pause, when the owner does not confirm the condition as the call its own and going', async () => {
    const claim = (on: unknown) => ({ tool: 'claim_wait', args: { on } })
    // Run 1 sets latch `mine` and waits on it.
    const { dir, desk, latch } = await setUp([{ tool: 'wait_latch', args: { name: 'mine' } }, { final: 'unused' }])
    const first = await desk.run('set the latch')
    assert.equal(first.status, 'SUSPENDED', first.reason)

    // Run 2, on the same latches, claims conditions that are not its call's own, or that nobody owns.
    const { app: second, desk: other } = await setUp(
      [
        {
          calls: [
            claim({ kind: 'nobody', name: 'x' }),
            claim({ kind: 'latch', name: 'mine' }),
            claim({ kind: 'rogue-throws' }),
            claim({ kind: 'rogue-nonsense' }),
            claim({ kind: 'Latch!', name: 'x' }),
            claim({ kind: 'latch', name: { nested: true } }),
            { tool: 'wait_once', args: { name: 'once' } },
          ],
        },
        { final: 'Went on.' },
      ],
      dir,
      'claims.yml',
    )
    const run = await other.run('claim things')
    assert.equal(run.status, 'COMPLETED', `${run.reason} ${JSON.stringify(run.waiting)}`)
    const errors = (await events(second, run.runId)).filter((e): e is RunEvent<'tool/error'> => e.type === 'tool/error')
    assert.deepEqual(
      errors.map((e) => e.data.code),
      Array(7).fill('tool_failed'),
    )
    const said = errors.map((e) => e.data.message)
    assert.match(said[0], /returned an invalid waitsFor: nothing owns waits of kind "nobody" in agent "desk"/)
    assert.match(said[1], /latch mine was not set by call s1\.a2 of run/)
    assert.match(said[2], /its owner could not be asked: the latch board is on fire/)
    assert.match(said[3], /its owner answered nonsense: says must be a non-empty string/)
    assert.match(said[4], /its kind must match/)
    assert.match(said[5], /its field name must be a string/)
    assert.match(said[6], /only an idempotent tool may wait/)
    assert.ok(!(await events(second, run.runId)).some((e) => e.type === 'run/paused'), 'never paused')
    assert.equal(JSON.parse(readFileSync(latch('mine'), 'utf8')).state, 'closed', "run 1's latch is left as it was")
    assert.equal((await desk.load(first.runId)).status, 'SUSPENDED')
  })

  it('cancelling the run cancels what it waits on, through the owner', async () => {
    const { desk, latch } = await setUp(waitThenAnswer)
    const run = await desk.run('wait for L')
    assert.equal(run.status, 'SUSPENDED', run.reason)
    const cancelled = await desk.cancel(run.runId, { by: 'bob' })
    assert.equal(cancelled.status, 'CANCELLED')
    assert.equal(JSON.parse(readFileSync(latch('L'), 'utf8')).state, 'cancelled')
  })

  it("is woken by a worker's sweep once the condition ended: nothing waits forever unseen", async () => {
    const { file, desk, open } = await setUp(waitThenAnswer)
    const run = await desk.run('wait for L')
    assert.equal(run.status, 'SUSPENDED', run.reason)
    const worker = () =>
      spawnSync(process.execPath, [sourceBin, 'worker', '--once', '--preset', file], { encoding: 'utf8', timeout: 60_000 })
    // `cordage runs` says what the run waits on.
    const listed = spawnSync(process.execPath, [sourceBin, 'runs', '--preset', file, '--status', 'SUSPENDED'], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.equal(listed.status, 0, listed.stderr)
    assert.match(listed.stdout, /waits outside the run: action s1\.a1 \(wait_latch\) waits on latch L to open \(latch, name L\)/)
    const early = worker()
    assert.equal(early.status, 0, early.stderr)
    assert.equal((await desk.load(run.runId)).lastSeq, run.lastSeq, 'a closed latch is left alone')

    open('L')
    const swept = worker()
    assert.equal(swept.status, 0, swept.stderr)
    const done = await desk.load(run.runId)
    assert.equal(done.status, 'COMPLETED', done.reason)
    const resumed = (await desk.store().load(run.runId)).find((e): e is RunEvent<'run/resumed'> => e.type === 'run/resumed')
    assert.equal(resumed?.data.by, 'worker')
  })

  it("gives a kind one owner: a plugin may not take over the host's child runs, nor name a kind badly", async () => {
    const { desk } = await setUp(waitThenAnswer)
    const waits = (desk.ctx as unknown as { waits: WaitsService }).waits
    const owner = { look: async () => ({ state: 'going' as const, says: 'mine' }), cancel: async () => {} }
    assert.throws(() => waits.own('child', owner), { code: 'invalid_input', message: /have an owner already/ })
    assert.throws(() => waits.own('latch', owner), { code: 'invalid_input', message: /have an owner already/ })
    assert.throws(() => waits.own('Child!', owner), { code: 'invalid_input' })
    // An owner that throws at once when told a run ended stops neither the others nor the run.
    const off = waits.own('sudden', {
      ...owner,
      runEnded: () => {
        throw new Error('sudden')
      },
    })
    await waits.runEnded((await desk.run('wait for L')) as never)
    off()
    assert.equal(waits.owner('sudden'), undefined, 'given up')
  })

  it('replays a log of issue 17, whose run/paused names a child, as a wait on a condition of kind child', () => {
    const base = { runId: 'r', time: 1, schema: 1, producer: 'kernel@0.1.0' }
    const log = [
      { ...base, seq: 1, type: 'run/start', data: { agent: 'lead', task: 't', plugins: {}, services: {}, budgets: { maxSteps: 5 } } },
      {
        ...base,
        seq: 2,
        type: 'run/paused',
        data: {
          status: 'WAITING_APPROVAL',
          reason: 'r',
          actionId: 's1.a1',
          child: { runId: 'r.s1.a1', agent: 'researcher', actionId: 's1.a1' },
        },
      },
    ] as unknown as RunEvent[]
    const state = replay('r', log)
    assert.deepEqual(state.waiting?.on, { kind: 'child', runId: 'r.s1.a1', agent: 'researcher', actionId: 's1.a1' })
    assert.deepEqual(state.waiting?.child, { runId: 'r.s1.a1', agent: 'researcher', actionId: 's1.a1' })
  })
})
