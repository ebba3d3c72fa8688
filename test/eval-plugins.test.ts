/**
 * The plugins `cordage eval` swaps in (core/eval/plugins): a verifier and a policy that answer the same
 * whatever they are asked, and filler tools. Each loaded by `path:` into the support desk preset, run
 * for real, and compared with the preset's own plugin on the same script, so each test shows what the
 * swap changed.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { CordageError, type RunEvent, type RunEventType, type RunState } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { deskPreset, DefaultRules, refundAnswer, tempDir, type DeskOptions } from './helpers.ts'
import { Outbox } from '../plugins/support-desk/outbox.ts'
import { fillerCandidates } from '../core/eval/plugins/eval-filler-tools/vocabulary.ts'

const evalPlugin = (name: string, config: Record<string, unknown>) => ({
  path: resolve(import.meta.dirname, '../core/eval/plugins', name),
  config,
})

interface Desk {
  app: Cordage
  run(): Promise<RunState>
  events(runId: string): Promise<RunEvent[]>
  followups(): number
  stop(): Promise<void>
}

async function desk(options: DeskOptions): Promise<Desk> {
  const dir = tempDir('cordage-eval-plugins-')
  const presetFile = join(dir, 'preset.yml')
  writeFileSync(presetFile, stringify(deskPreset({ budgets: { maxRepairs: 0 }, ...options }, 'outbox.jsonl')))
  const errors: unknown[] = []
  const app = await Cordage.fromPreset(presetFile, { onError: (e) => errors.push(e) })
  const agent = app.agent('support')
  return {
    app,
    run: () => agent.run(),
    events: (runId) => agent.store().load(runId),
    followups: () => new Outbox(join(dir, 'outbox.jsonl')).entries().length,
    stop: async () => {
      await app.stop()
      assert.deepEqual(errors, [], 'the host reported no errors')
    },
  }
}

/** Load a preset that must be refused, and return the error. */
async function refused(options: DeskOptions): Promise<CordageError> {
  try {
    const d = await desk(options)
    await d.stop()
  } catch (error) {
    assert.ok(CordageError.is(error), String(error))
    return error
  }
  throw new Error('the preset was accepted')
}

const typed = <T extends RunEventType>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as RunEvent<T>[]
const followup = { tool: 'record_followup', args: { ticketId: 'T-1', note: 'Refund approved.' } }
const lookup = { tool: 'lookup_policy', args: { topic: 'refunds' } }
const noted = { final: 'The follow-up is noted on the ticket.' }

describe('eval-policy', () => {
  it('allow-all: a call the preset sends to approval runs without one', async () => {
    const script = [followup, noted]
    const own = await desk({ script, rules: DefaultRules, verifier: { minCount: 0 } })
    try {
      assert.equal((await own.run()).status, 'WAITING_APPROVAL', "the preset's own policy asks")
    } finally {
      await own.stop()
    }
    const open = await desk({ script, verifier: { minCount: 0 }, policyPlugin: evalPlugin('eval-policy', { mode: 'allow-all' }) })
    try {
      const run = await open.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await open.events(run.runId)
      assert.deepEqual(
        typed(events, 'tool/decision').map((e) => [e.data.verdict, e.data.ruleId]),
        [['allow', 'eval-allow-all']],
      )
      assert.equal(typed(events, 'tool/approval-requested').length, 0)
      assert.equal(open.followups(), 1)
    } finally {
      await open.stop()
    }
  })

  it('deny-all: even a read is denied, and nothing runs', async () => {
    const d = await desk({
      script: [lookup, noted],
      verifier: { minCount: 0 },
      policyPlugin: evalPlugin('eval-policy', { mode: 'deny-all' }),
    })
    try {
      const run = await d.run()
      const events = await d.events(run.runId)
      assert.deepEqual(
        typed(events, 'tool/decision').map((e) => [e.data.verdict, e.data.ruleId]),
        [['deny', 'eval-deny-all']],
      )
      assert.deepEqual(
        typed(events, 'tool/error').map((e) => e.data.code),
        ['policy_denied'],
      )
      assert.equal(typed(events, 'tool/start').length, 0)
    } finally {
      await d.stop()
    }
  })

  it('malformed: the kernel fails closed, denying each action (rule policy-invalid, policy_denied), and no tool runs', async () => {
    const d = await desk({
      script: [followup, lookup, noted],
      verifier: { minCount: 0 },
      policyPlugin: evalPlugin('eval-policy', { mode: 'malformed' }),
    })
    try {
      const run = await d.run()
      const events = await d.events(run.runId)
      const decisions = typed(events, 'tool/decision')
      assert.deepEqual(
        decisions.map((e) => [e.data.verdict, e.data.ruleId]),
        [
          ['deny', 'policy-invalid'],
          ['deny', 'policy-invalid'],
        ],
      )
      assert.match(
        decisions[0].data.reason,
        /^policy eval-policy@1\.0\.0 answered something that is not a decision \(verdict_invalid: verdict must be allow, ask or deny, got "permit"\)/,
      )
      assert.deepEqual(
        typed(events, 'tool/error').map((e) => e.data.code),
        ['policy_denied', 'policy_denied'],
      )
      assert.equal(typed(events, 'tool/start').length, 0, 'no tool ran')
      assert.equal(d.followups(), 0)
      // The denials are fed back to the model; the run then ends as the model goes on (here, it answers).
      assert.equal(run.status, 'COMPLETED', run.reason)
    } finally {
      await d.stop()
    }
  })

  it('mode is required and checked', async () => {
    for (const config of [{}, { mode: 'allow-some' }]) {
      const error = await refused({ script: [noted], policyPlugin: evalPlugin('eval-policy', config) })
      assert.equal(error.code, 'plugin_config_invalid', error.message)
      assert.match(error.message, /mode/)
    }
  })
})

describe('eval-verifier', () => {
  const wrong = { final: 'Refunds are never possible.' }

  it('pass: an answer the preset verifier rejects completes', async () => {
    const own = await desk({ script: [wrong] })
    try {
      const run = await own.run()
      assert.deepEqual([run.status, run.failureCode], ['FAILED_VERIFICATION', 'missing_evidence'], "the preset's own verifier rejects it")
    } finally {
      await own.stop()
    }
    const open = await desk({ script: [wrong], verifierPlugin: evalPlugin('eval-verifier', { verdict: 'pass' }) })
    try {
      const run = await open.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      assert.equal(run.answer, wrong.final)
    } finally {
      await open.stop()
    }
  })

  it('fail: an answer the preset verifier accepts fails verification (verification_failed)', async () => {
    const script = [lookup, { final: refundAnswer }]
    const own = await desk({ script })
    try {
      const run = await own.run()
      assert.equal(run.status, 'COMPLETED', `the preset's own verifier accepts it: ${run.reason}`)
    } finally {
      await own.stop()
    }
    const shut = await desk({ script, budgets: { maxRepairs: 2 }, verifierPlugin: evalPlugin('eval-verifier', { verdict: 'fail' }) })
    try {
      const run = await shut.run()
      assert.deepEqual([run.status, run.failureCode], ['FAILED_VERIFICATION', 'verification_failed'])
      const ends = typed(await shut.events(run.runId), 'verify/end')
      assert.deepEqual(
        ends.map((e) => [e.data.ok, e.data.repair]),
        [[false, false]],
        'not repairable: one verdict, even with repairs left',
      )
    } finally {
      await shut.stop()
    }
  })

  it('verdict is required and checked', async () => {
    for (const config of [{}, { verdict: 'maybe' }]) {
      const error = await refused({ script: [noted], verifierPlugin: evalPlugin('eval-verifier', config) })
      assert.equal(error.code, 'plugin_config_invalid', error.message)
      assert.match(error.message, /verdict/)
    }
  })
})

describe('eval-filler-tools', () => {
  const names = (app: Cordage) =>
    app
      .agent('support')
      .ctx.tools.list()
      .map((t) => t.name)
  const own = ['lookup_policy', 'record_followup', 'slow_lookup']
  const filler = (config: Record<string, unknown>) => ({ script: [noted], plugins: [evalPlugin('eval-filler-tools', config)] })

  it('count 200: 200 read-only tools with unique names beside the agent own, the same on every load', async () => {
    const lists: { name: string; description: string }[][] = []
    for (let load = 0; load < 2; load++) {
      const d = await desk(filler({ count: 200 }))
      try {
        const all = d.app.agent('support').ctx.tools.list()
        const added = all.filter((t) => !own.includes(t.name))
        assert.deepEqual(
          own.filter((n) => names(d.app).includes(n)),
          own,
          'the agent keeps its own tools',
        )
        assert.equal(added.length, 200)
        assert.equal(new Set(added.map((t) => t.name)).size, 200, 'unique names')
        for (const t of added) {
          assert.deepEqual([t.sideEffect, t.idempotent, t.needsApproval], ['none', true, false], t.name)
          assert.match(t.name, /^[a-z]+_[a-z]+_[a-z_]+$/)
          assert.ok(t.description.length > 20, t.description)
        }
        assert.ok(new Set(added.map((t) => t.name.split('_')[0])).size >= 10, 'varied verbs')
        lists.push(added.map((t) => ({ name: t.name, description: t.description })))
      } finally {
        await d.stop()
      }
    }
    assert.deepEqual(lists[0], lists[1], 'deterministic across loads')
    const other = await desk(filler({ count: 200, seed: 7 }))
    try {
      assert.notDeepEqual(
        names(other.app).filter((n) => !own.includes(n)),
        lists[0].map((t) => t.name),
        'another seed, other tools',
      )
    } finally {
      await other.stop()
    }
  })

  it('a run can call one: it answers a small result and changes nothing', async () => {
    const probe = await desk(filler({ count: 30 }))
    let name: string
    try {
      // One that takes a query (the shapes vary: a query, an id, or a date range).
      const tool = probe.app
        .agent('support')
        .ctx.tools.list()
        .find((t) => !own.includes(t.name) && 'query' in ((t.inputSchema as { properties?: object }).properties ?? {}))
      assert.ok(tool, 'a filler tool that takes a query')
      name = tool.name
    } finally {
      await probe.stop()
    }
    const d = await desk({ ...filler({ count: 30 }), script: [{ tool: name, args: { query: 'acme' } }, noted], verifier: { minCount: 0 } })
    try {
      const run = await d.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const [end] = typed(await d.events(run.runId), 'tool/end')
      assert.equal(end.data.tool, name)
      assert.deepEqual((end.data.output as { results: unknown[] }).results, [])
    } finally {
      await d.stop()
    }
  })

  it("passes over a name another plugin registered first, and still adds count tools; the other plugin's tool stays", async () => {
    const [taken, ...next] = [...fillerCandidates(1)].slice(0, 4).map((spec) => spec.name)
    const desk1 = {
      path: resolve(import.meta.dirname, 'fixtures/plugins/eval-desk'),
      config: { records: 'records.jsonl', names: [taken] },
    }
    const d = await desk({ script: [noted], plugins: [desk1, evalPlugin('eval-filler-tools', { count: 3 })] })
    try {
      const tools = d.app.agent('support').ctx.tools.list()
      assert.deepEqual(
        tools.filter((t) => t.owner?.startsWith('eval-filler-tools@')).map((t) => t.name),
        next,
      )
      assert.match(tools.find((t) => t.name === taken)?.owner ?? '', /^eval-desk@/)
    } finally {
      await d.stop()
    }
  })

  it('count 0 adds nothing; count is required and at most 2000', async () => {
    const none = await desk(filler({ count: 0 }))
    try {
      assert.deepEqual(names(none.app).sort(), own)
    } finally {
      await none.stop()
    }
    for (const config of [{}, { count: 2001 }, { count: -1 }]) {
      const error = await refused(filler(config))
      assert.equal(error.code, 'plugin_config_invalid', error.message)
    }
  })
})
