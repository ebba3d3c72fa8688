/**
 * Token and cost budgets fail closed (issue 28): they are the meter's to enforce (plugins/budgets), so
 * an agent whose runs carry them without a plugin that provides `meter` is refused (at load, at the
 * command, or, for a run taken on under a preset that lost it, at the next boundary), never run
 * unbounded; and a meter that throws, overruns or answers nonsense refuses the reservation or ends the
 * run with a code. Misbehaving meters: test/fixtures/plugins/rogue-meter, each answering as its `mode`
 * says. Through the host API and the real `cordage` binary.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import { parse, stringify } from 'yaml'
import { CordageError, type RunEvent } from 'cordage'
import { Cordage } from 'cordage/host'
import { cordageBin } from '../bin.ts'
import { deskPreset, refundAnswer, supportDesk, tempDir, type DeskOptions, type Harness } from '../helpers.ts'
import { open as openApp, presetFile, removeDirs, stopApps } from '../sqlite-preset.ts'

const rogue = (mode: string) => ({ path: resolve(import.meta.dirname, '../fixtures/plugins/rogue-meter'), config: { mode } })
const lookup = { tool: 'lookup_policy', args: { topic: 'refunds' } }
const fix = /add `- budgets` to agents\.support\.plugins/

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})
after(removeDirs)
afterEach(stopApps)

/** The desk preset written to a temp folder, for the host or the binary to load. */
function deskFile(options: Partial<DeskOptions>): string {
  const dir = tempDir()
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(deskPreset({ script: [{ final: refundAnswer }], ...options }, 'outbox.jsonl')))
  return file
}

const cordage = (args: string[]) => {
  const r = spawnSync(process.execPath, [cordageBin, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe('token and cost budgets without a meter are refused, never unbounded', () => {
  it('at load: an agent that sets maxTokens, maxCostUsd or a thread budget, naming the plugin to add', async () => {
    for (const budgets of [{ maxTokens: 1000 }, { maxCostUsd: 0.5 }, { thread: { maxTurns: 3, maxCostUsd: 1 } }]) {
      const file = deskFile({ budgets: budgets as never, meterPlugin: null })
      await assert.rejects(Cordage.fromPreset(file), (error: unknown) => {
        assert.ok(CordageError.is(error, 'service_missing'), String(error))
        assert.match(
          error.message,
          /agents\.support\.budgets: the budgets (maxTokens|maxCostUsd|thread\.maxCostUsd) need a plugin that provides "meter", and agent "support" has none/,
        )
        assert.match(error.message, fix)
        return true
      })
    }
    // Steps, the deadline and turns are the kernel's: no meter needed for them.
    const bounded = await Cordage.fromPreset(deskFile({ budgets: { maxSteps: 3, deadlineMs: 1000, thread: { maxTurns: 2 } } as never }))
    await bounded.stop()
  })

  it('at load: an agent started or handed runs by one that sets them (its runs carry them)', async () => {
    const file = presetFile({
      lead: { script: [{ final: 'x' }], budgets: { maxTokens: 1000 }, subagents: { agents: ['helper'] } },
      helper: { script: [{ final: 'y' }] },
    })
    // presetFile gives every agent the meter when one needs it: the helper's is taken out.
    const preset = parse(readFileSync(file, 'utf8'))
    preset.agents.helper.plugins = preset.agents.helper.plugins.filter((p: unknown) => p !== 'budgets')
    writeFileSync(file, stringify(preset))
    await assert.rejects(Cordage.fromPreset(file), (error: unknown) => {
      assert.ok(CordageError.is(error, 'service_missing'), String(error))
      assert.match(
        error.message,
        /agents\.lead\.spawns: agent "lead" may pass its runs' budgets on to agent "helper".*the budgets maxTokens need a plugin/,
      )
      assert.match(error.message, /add `- budgets` to agents\.helper\.plugins/)
      return true
    })
  })

  it('at load, through the binary: exit 2 with the one error', () => {
    const run = cordage(['run', '--preset', deskFile({ budgets: { maxTokens: 1000 }, meterPlugin: null })])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /service_missing/)
    assert.match(run.stderr, fix)
  })

  it('at the command: a run given token budgets, or a resume that raises them, records nothing', async () => {
    harness = await supportDesk({
      script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'x' } }, { final: 'done [source: FU-1]' }],
    })
    await assert.rejects(
      harness.agent.run('go', { budgets: { maxTokens: 100 } }),
      (e: unknown) => CordageError.is(e, 'service_missing') && fix.test(e.message),
    )
    assert.deepEqual(await harness.agent.store().list(), [], 'no run was recorded')
    const paused = await harness.agent.run('go')
    assert.equal(paused.status, 'WAITING_APPROVAL')
    await assert.rejects(
      harness.agent.resume(paused.runId, { budgets: { maxCostUsd: 2 } }),
      (e: unknown) => CordageError.is(e, 'service_missing') && fix.test(e.message),
    )
    const after = await harness.events(paused.runId)
    assert.equal(after.at(-1)!.type, 'run/paused', 'nothing was recorded')
  })

  it('at the command, through the binary: resume --max-tokens on an agent without a meter exits 2', () => {
    const file = presetFile({
      support: {
        script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'x' } }],
        rules: [{ id: 'ask', verdict: 'ask', match: {} }],
      },
    })
    const run = cordage(['run', '--preset', file, '--task', 'note it', '--json'])
    const paused = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent)
      .at(-1)!
    assert.equal(paused.type, 'run/paused', run.stderr)
    const resumed = cordage(['resume', paused.runId, '--preset', file, '--max-tokens', '5000'])
    assert.equal(resumed.code, 2, resumed.stderr)
    assert.match(resumed.stderr, fix)
  })

  it('at a boundary: a run with token budgets taken on by an agent that lost its meter suspends (service_missing)', async () => {
    const desk = { path: resolve(import.meta.dirname, '../fixtures/plugins/budget-desk') }
    const four = ['a', 'b', 'c', 'd'].map((q) => ({ tool: 'paid_search', args: { q } }))
    const sketch = { script: [{ calls: four }, { final: 'Done.' }], plugins: [desk], rules: [{ id: 'r', verdict: 'allow', match: {} }] }
    const file = presetFile({ support: { ...sketch, budgets: { maxTokens: 1000 } } })
    const first = await openApp(file)
    const paused = await first.agent('support').run('search')
    assert.equal(paused.waiting?.code, 'reservation_refused', paused.reason)
    await first.stop()
    // The preset is edited: no token budget any more, and so no meter; the run keeps the budget it started with.
    presetFile({ support: sketch }, resolve(file, '..'))
    const second = await openApp(file)
    const state = await (await second.agent('support').resume(paused.runId, { acceptDrift: true })).done
    assert.deepEqual([state.status, state.waiting?.code], ['SUSPENDED', 'service_missing'])
    assert.match(state.waiting!.reason, /the budgets maxTokens need a plugin that provides "meter", and agent "support" has none/)
    assert.match(state.waiting!.reason, fix)
    const types = (await second.agent('support').store().load(paused.runId)).map((e) => e.type)
    assert.ok(!types.includes('tool/start'), 'no call ran unmetered')
  })

  it('a swap cannot take the meter away from an agent that sets token budgets', async () => {
    harness = await supportDesk({ script: [{ final: refundAnswer }], budgets: { maxTokens: 1000 } })
    const other = resolve(import.meta.dirname, '../fixtures/plugins/greeter')
    await assert.rejects(
      harness.app.swap('support', 'budgets', { path: other }),
      (e: unknown) => CordageError.is(e, 'service_missing') && fix.test(e.message),
    )
    const state = await harness.agent.run()
    const start = (await harness.events(state.runId))[0] as RunEvent<'run/start'>
    assert.equal(start.data.services.meter, 'budgets@1.0.0', 'the meter still serves')
  })
})

describe('a meter that fails refuses the reservation or ends the run', () => {
  async function run(mode: string, options: Partial<DeskOptions> = {}) {
    harness = await supportDesk({
      script: [lookup, { final: refundAnswer }],
      budgets: { maxTokens: 100_000 },
      meterPlugin: rogue(mode),
      ...options,
    })
    const state = await harness.agent.run()
    const events = await harness.events(state.runId)
    return { state, events, types: events.map((e) => e.type) }
  }

  for (const [mode, problem] of [
    ['reserve-throw', /meter rogue-meter@1\.0\.0 failed to reserve: the ledger is down/],
    ['reserve-unasked', /answered something that is not a reservation: a reservation for a call not asked about, or reserved twice/],
    ['reserve-twice', /answered something that is not a reservation: a reservation for a call not asked about, or reserved twice/],
    ['reserve-negative', /answered something that is not a reservation: a reservation's tokens must be a whole number/],
    ['reserve-inherited', /answered something that is not a reservation: kind must be reserve or refuse, got nothing/],
  ] as [string, RegExp][]) {
    it(`${mode}: suspends reservation_refused before the model is asked`, async () => {
      const { state, types } = await run(mode)
      assert.deepEqual([state.status, state.waiting?.code], ['SUSPENDED', 'reservation_refused'])
      assert.match(state.waiting!.reason, problem)
      assert.equal(harness!.model().requests.length, 0, 'the model was not asked')
      assert.ok(!types.includes('budget/reserved'))
    })
  }

  it('reserve-hang: ends FAILED service_timeout after serviceTimeouts.meter', async () => {
    const { state } = await run('reserve-hang', { serviceTimeouts: { meter: 150 } })
    assert.deepEqual([state.status, state.failureCode], ['FAILED', 'service_timeout'])
    assert.match(state.reason!, /the meter service \(rogue-meter@1\.0\.0\) did not answer within 150 ms \(serviceTimeouts\.meter\)/)
    assert.equal(harness!.model().requests.length, 0)
  })

  it('check: a throw ends FAILED internal_error, a code that is not a budget verdict_invalid, a stop STOPPED with its code', async () => {
    for (const [mode, status, code, reason] of [
      ['check-throw', 'FAILED', 'internal_error', /meter rogue-meter@1\.0\.0 failed to check the budgets: the ledger is down/],
      [
        'check-unknown-code',
        'FAILED',
        'verdict_invalid',
        /not a bound: a stop's code must be one of token_budget_exceeded, cost_budget_exceeded, thread_budget_exceeded, got "no_progress"/,
      ],
      ['check-stop', 'STOPPED', 'cost_budget_exceeded', /^the account is empty$/],
    ] as [string, string, string, RegExp][]) {
      const { state } = await run(mode)
      assert.deepEqual([state.status, state.failureCode], [status, code], mode)
      assert.match(state.reason!, reason)
      assert.equal(harness!.model().requests.length, 0, `${mode}: the run ended at the first boundary`)
      await harness!.stop()
      harness = undefined
    }
  })

  it('settle-nonsense: the model call is on record, the run ends FAILED verdict_invalid before its decision is acted on', async () => {
    const { state, types } = await run('settle-nonsense')
    assert.deepEqual([state.status, state.failureCode], ['FAILED', 'verdict_invalid'])
    assert.match(state.reason!, /meter rogue-meter@1\.0\.0 answered something that is not a settlement/)
    assert.ok(types.includes('step/model-response'))
    assert.ok(!types.includes('budget/settled') && !types.includes('tool/start'))
  })

  it("settle-tools-throw: the call's outcome is recorded first, then the run ends FAILED at the next boundary", async () => {
    const { state, types } = await run('settle-tools-throw')
    assert.deepEqual([state.status, state.failureCode], ['FAILED', 'internal_error'])
    assert.match(state.reason!, /meter rogue-meter@1\.0\.0 failed to settle: cannot count this one/)
    assert.ok(types.indexOf('tool/end') > 0 && types.indexOf('tool/end') < types.indexOf('run/end'))
    assert.equal(harness!.model().requests.length, 1, 'the model was not asked again')
  })
})
