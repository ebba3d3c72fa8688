/**
 * Budget reservations (issue 12): a call sets aside what it may cost before it starts, so calls side by
 * side cannot overshoot the budget together; a reservation that does not fit suspends the run before
 * any call of its wave starts, and a resume with a larger budget goes on.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import { CordageError, replay, type RunEvent } from 'cordage'
import { available } from '../plugins/budgets/available.ts'
import { supportDesk, type Harness } from './helpers.ts'
import { cordageBin } from './bin.ts'
import { open as openApp, presetFile, removeDirs, stopApps } from './sqlite-preset.ts'
import { budgetDeskLog } from './fixtures/plugins/budget-desk/index.ts'

const desk = { path: resolve(import.meta.dirname, 'fixtures/plugins/budget-desk') }
const rules = [{ id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } }]
const four = ['a', 'b', 'c', 'd'].map((q) => ({ tool: 'paid_search', args: { q } }))

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
  budgetDeskLog.length = 0
})

function open(budgets: Record<string, number>, model: Record<string, unknown> = {}) {
  return supportDesk({
    script: [{ calls: four }, { final: 'Done.' }],
    rules,
    verifier: { minCount: 0 },
    plugins: [desk],
    budgets,
    model,
  })
}

const of = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type)

describe('reservations: a wave reserves at once', () => {
  it('suspends before any call of a wave whose reservations exceed the budget, and goes on when resumed with more', async () => {
    harness = await open({ maxTokens: 1000 })
    const paused = await harness.agent.run('search')
    assert.equal(paused.status, 'SUSPENDED', paused.reason)
    assert.equal(paused.waiting?.code, 'reservation_refused')
    // The reason names the call that did not fit and the figures.
    assert.match(paused.waiting!.reason, /call s1\.a4 \(paid_search\) must reserve 300 tokens/)
    assert.match(paused.waiting!.reason, /1200 tokens needed, 1000 tokens available/)
    const events = await harness.events(paused.runId)
    const types = events.map((e) => e.type)
    assert.equal(types.indexOf('tool/start'), -1, 'no call of the wave started')
    assert.equal(types.indexOf('budget/reserved'), -1, 'nothing was reserved')
    assert.deepEqual(budgetDeskLog, [])
    const tail = types.slice(types.indexOf('step/model-response'))
    assert.deepEqual(tail, [
      'step/model-response',
      ...Array(4).fill('tool/proposed'),
      ...Array(4).fill('tool/decision'),
      'run/checkpoint',
      'run/paused',
    ])

    const done = await (await harness.agent.resume(paused.runId, { budgets: { maxTokens: 5000 } })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.deepEqual(budgetDeskLog, ['search a', 'search b', 'search c', 'search d'])
    const after = await harness.events(paused.runId)
    const resumed = of(after, 'run/resumed')
    assert.deepEqual(resumed[0].data.budgets, { maxTokens: 5000 })
    assert.equal(done.budgets.maxTokens, 5000)
    // Each call, one by one now, reserves before it starts and settles after it ends.
    const a1 = after.filter((e) => e.actionId === 's1.a1' && e.seq > resumed[0].seq).map((e) => e.type)
    assert.deepEqual(a1, ['budget/reserved', 'tool/start', 'tool/end', 'budget/settled'])
    assert.deepEqual(done.reservations, [])
  })

  it('refuses budgets a resume may not set', async () => {
    harness = await open({ maxTokens: 1000 })
    const paused = await harness.agent.run('search')
    for (const budgets of [{ maxTokens: -1 }, { maxTokens: 1.5 }, { maxCostUsd: 0 }, { maxSteps: 50 }] as never[])
      await assert.rejects(harness.agent.resume(paused.runId, { budgets }), (e: unknown) => CordageError.is(e, 'invalid_input'))
    assert.equal((await harness.agent.load(paused.runId)).status, 'SUSPENDED')
  })

  it('reserves a wave that fits in one event, settles each call, and the pool grows back', async () => {
    harness = await open({ maxTokens: 2000 })
    const state = await harness.agent.run('search')
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await harness.events(state.runId)
    const reserved = of(events, 'budget/reserved')
    assert.equal(reserved.length, 1)
    assert.deepEqual(
      reserved[0].data.reservations.map((r) => [r.actionId, r.kind, r.tokens]),
      ['s1.a1', 's1.a2', 's1.a3', 's1.a4'].map((id) => [id, 'tool', 300]),
    )
    assert.deepEqual(reserved[0].data.available, { tokens: 2000 })
    const firstStart = events.findIndex((e) => e.type === 'tool/start')
    assert.ok(events.indexOf(reserved[0]) < firstStart, 'reserved before any call starts')
    const settled = of(events, 'budget/settled')
    assert.deepEqual(
      settled.map((e) => [e.actionId, e.data.reservation.tokens, e.data.actual.tokens]),
      ['s1.a1', 's1.a2', 's1.a3', 's1.a4'].map((id) => [id, 300, 60]),
    )
    // Replayed up to any point, what is available is the budget minus usage minus what is still open.
    const upTo = (seq: number) => replay(state.runId, events.slice(0, seq))
    assert.equal(available(upTo(reserved[0].seq)).tokens, 2000 - 1200)
    assert.equal(available(upTo(settled[0].seq)).tokens, 2000 - 60 - 900)
    assert.equal(available(upTo(settled[3].seq)).tokens, 2000 - 240)
    assert.deepEqual(state.reservations, [])
  })

  it('keeps open reservations in state rebuilt from the log after a crash', async () => {
    harness = await open({ maxTokens: 2000 })
    const state = await harness.agent.run('search')
    const events = await harness.events(state.runId)
    // The log as a process that died mid-wave left it: the reservation and the starts, no outcome.
    const cut = events.findIndex((e) => e.type === 'tool/end')
    const crashed = replay(state.runId, events.slice(0, cut))
    assert.deepEqual(
      crashed.reservations?.map((r) => r.actionId),
      ['s1.a1', 's1.a2', 's1.a3', 's1.a4'],
    )
    assert.equal(available(crashed).tokens, 800)
  })
})

describe('reservations: model calls', () => {
  it('refuses a model call whose context plus output cap does not fit, before the model is asked', async () => {
    harness = await open({ maxTokens: 1000 }, { maxOutputTokens: 5000, script: [{ final: 'Done.' }] })
    const paused = await harness.agent.run('search')
    assert.equal(paused.status, 'SUSPENDED', paused.reason)
    assert.equal(paused.waiting?.code, 'reservation_refused')
    assert.match(paused.waiting!.reason, /the model call of step 1 must reserve \d+ tokens/)
    assert.equal(harness.model().requests.length, 0, 'the model was not called')
    const types = await harness.types(paused.runId)
    assert.deepEqual(types.slice(types.indexOf('step/start')), ['step/start', 'step/context', 'run/checkpoint', 'run/paused'])

    const done = await (await harness.agent.resume(paused.runId, { budgets: { maxTokens: 100_000 } })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.equal(harness.model().requests.length, 1)
    const events = await harness.events(paused.runId)
    const model = events.filter((e) => e.type.startsWith('budget/') || e.type.startsWith('step/model'))
    assert.deepEqual(
      model.map((e) => e.type),
      ['budget/reserved', 'step/model-request', 'step/model-response', 'budget/settled'],
    )
    const reserved = of(events, 'budget/reserved')[0]
    const context = of(events, 'step/context').at(-1)!
    assert.deepEqual(reserved.data.reservations, [{ kind: 'model', tokens: context.data.tokens + 5000, costUsd: 0 }])
  })

  it('estimates the cost of a model call from declared prices', async () => {
    harness = await open(
      { maxCostUsd: 1 },
      { maxOutputTokens: 1000, prices: { inputPerMTok: 0, outputPerMTok: 2000 }, script: [{ final: 'Done.' }] },
    )
    const paused = await harness.agent.run('search')
    // 1000 output tokens at $2000 per million: $2 reserved, more than the $1 budget.
    assert.equal(paused.waiting?.code, 'reservation_refused', paused.reason)
    assert.match(paused.waiting!.reason, /\$2 needed, \$1 available/)
  })

  it('reserves nothing for a run without a token or cost budget', async () => {
    harness = await open({}, { maxOutputTokens: 5000 })
    const state = await harness.agent.run('search')
    assert.equal(state.status, 'COMPLETED', state.reason)
    const types = await harness.types(state.runId)
    assert.ok(!types.some((t) => t.startsWith('budget/')))
  })
})

describe('reservations: subagents reserve from the parent pool', () => {
  after(removeDirs)
  afterEach(stopApps)
  const spawn = (task: string) => ({ tool: 'spawn_agent', args: { agent: 'researcher', task } })
  const file = (tasks: string[]) =>
    presetFile({
      lead: {
        script: [{ calls: tasks.map(spawn) }, { final: 'Both answered.' }],
        budgets: { maxTokens: 1000 },
        subagents: { agents: ['researcher'], childMaxTokens: 400 },
      },
      researcher: { script: [{ final: 'Found it.' }], budgets: { maxTokens: 5000 } },
    })

  it('two spawns side by side reserve at once, and each child is capped at its reservation', async () => {
    const app = await openApp(file(['first question', 'second question']))
    const state = await app.agent('lead').run('ask two')
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await app.agent('lead').store().load(state.runId)
    const reserved = of(events, 'budget/reserved')
    assert.equal(reserved.length, 1, 'one reservation event for the wave')
    assert.deepEqual(
      reserved[0].data.reservations.map((r) => [r.actionId, r.tokens]),
      [
        ['s1.a1', 400],
        ['s1.a2', 400],
      ],
    )
    // Side by side: both children started before either ended.
    const starts = events.filter((e) => e.type === 'tool/start').map((e) => e.seq)
    const ends = events.filter((e) => e.type === 'tool/end').map((e) => e.seq)
    assert.ok(Math.max(...starts) < Math.min(...ends))
    for (const end of of(events, 'tool/end')) {
      const child = await app.agent('researcher').load((end.data.output as { runId: string }).runId)
      assert.equal(child.budgets.maxTokens, 400, 'the child gets no more than its reservation (its own budget is 5000)')
    }
    assert.equal(of(events, 'budget/settled').length, 2)
    assert.equal((await app.agent('researcher').store().list()).length, 3, 'the parent and its two children')
  })

  it('three spawns that together exceed the parent budget start no child at all', async () => {
    const app = await openApp(file(['one', 'two', 'three']))
    const state = await app.agent('lead').run('ask three')
    assert.equal(state.status, 'SUSPENDED', state.reason)
    assert.equal(state.waiting?.code, 'reservation_refused')
    const events = await app.agent('lead').store().load(state.runId)
    assert.equal(of(events, 'tool/start').length, 0)
    const runs = await app.agent('researcher').store().list()
    assert.deepEqual(
      runs.map((r) => r.runId),
      [state.runId],
      'no child run was started (the store holds only the parent)',
    )
  })
})

describe('reservations: cordage resume --max-tokens (a real CLI process)', () => {
  after(removeDirs)
  const bin = cordageBin
  const cordage = (args: string[]) => {
    const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  const lines = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent)

  it('suspends a run whose wave does not fit, refuses a bad figure, and resumes it with a larger budget', () => {
    const file = presetFile({
      support: { script: [{ calls: four }, { final: 'Done.' }], budgets: { maxTokens: 1000 }, plugins: [desk] },
    })
    const run = cordage(['run', '--preset', file, '--task', 'search', '--json'])
    const events = lines(run.stdout)
    const paused = events.at(-1)!
    assert.ok(paused.type === 'run/paused' && paused.data.code === 'reservation_refused', run.stderr)
    assert.ok(!events.some((e) => e.type === 'tool/start'))

    const bad = cordage(['resume', paused.runId, '--preset', file, '--max-tokens', 'lots'])
    assert.notEqual(bad.code, 0)
    assert.match(bad.stderr, /--max-tokens takes a number, got "lots"/)
    const negative = cordage(['resume', paused.runId, '--preset', file, '--max-tokens=-5'])
    assert.notEqual(negative.code, 0)
    assert.match(negative.stderr, /maxTokens must be a positive integer/)

    const resumed = cordage(['resume', paused.runId, '--preset', file, '--max-tokens', '5000', '--json'])
    assert.equal(resumed.code, 0, resumed.stderr)
    const after = lines(resumed.stdout)
    const first = after.find((e) => e.type === 'run/resumed')
    assert.ok(first?.type === 'run/resumed')
    assert.deepEqual(first.data.budgets, { maxTokens: 5000 })
    assert.equal(after.filter((e) => e.type === 'tool/start').length, 4)
    const end = after.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED')
  })
})

describe('usage a tool reports', () => {
  it('fails the run when it is in a shape the budgets cannot count, rather than count it as 0', async () => {
    harness = await supportDesk({
      script: [{ tool: 'odd_usage', args: {} }, { final: 'Done.' }],
      rules,
      verifier: { minCount: 0 },
      plugins: [desk],
      budgets: { maxTokens: 10_000 },
    })
    const state = await harness.agent.run()
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'internal_error')
    assert.match(state.reason ?? '', /odd_usage.*unknown key "tokens".*inputTokens, outputTokens, costUsd/)
  })
})
