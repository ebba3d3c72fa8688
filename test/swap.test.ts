/**
 * Swapping a plugin at run time: dispose one version and plug another between two steps of a live run.
 * The step in flight finishes on the old version, the next step uses the new one, and a replacement
 * that fails its checks or its start leaves the old version serving.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { PluginEvent, RunEvent } from 'cordage'
import { DefaultRules, refundAnswer, supportDesk, type Harness } from './helpers.ts'

let harness: Harness | undefined
// The swap fixtures are policy-rules 1.1 and 1.2, so the desk starts on the 1.x line.
const policyV1 = { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'deny', rules: DefaultRules } }
afterEach(async () => {
  await harness?.stop()
  harness = undefined
})

const v11 = resolve(import.meta.dirname, 'fixtures/plugins/policy-rules-1.1')
const broken = resolve(import.meta.dirname, 'fixtures/plugins/policy-rules-1.2-broken')

describe('plugin swap', () => {
  it('swaps between two steps of a live run: the step in flight finishes on the old version, the next uses the new', async () => {
    harness = await supportDesk({
      script: [
        // Long enough for the swap to load and wait at the gate before s1 ends, on a loaded CI machine too.
        { tool: 'lookup_policy', args: { topic: 'refunds' }, delayMs: 500 },
        { tool: 'lookup_policy', args: { topic: 'shipping' } },
        { final: refundAnswer },
      ],
      policyPlugin: policyV1,
    })
    const log: string[] = []
    harness.app.root.on('step/end', (e: RunEvent) => log.push(`step/end ${e.stepId}`))
    harness.app.root.on('plugin/disposed', (e: PluginEvent) => log.push(`disposed ${e.name}@${e.version}`))
    harness.app.root.on('plugin/loaded', (e: PluginEvent) => log.push(`loaded ${e.name}@${e.version}`))
    let swapped: Promise<unknown> | undefined
    harness.app.root.on('step/model-request', (e: RunEvent) => {
      if (e.stepId === 's1') swapped = harness!.app.swap('support', 'policy-rules', { path: v11, config: { allow: ['lookup_policy'] } })
    })

    const state = await harness.agent.run('refund window?')
    assert.deepEqual(await swapped, { from: 'policy-rules@1.0.0', to: 'policy-rules@1.1.0' })
    assert.equal(state.status, 'COMPLETED')
    assert.deepEqual(log.slice(0, 3), ['step/end s1', 'disposed policy-rules@1.0.0', 'loaded policy-rules@1.1.0'])

    const decisions = (await harness.events(state.runId)).filter((e) => e.type === 'tool/decision')
    assert.deepEqual(
      decisions.map((d) => d.type === 'tool/decision' && [d.stepId, d.producer, d.data.ruleId, d.data.policyVersion]),
      [
        ['s1', 'policy-rules@1.0.0', 'read-only', decisions[0].type === 'tool/decision' ? decisions[0].data.policyVersion : ''],
        ['s2', 'policy-rules@1.1.0', 'allow-list', 'policy-rules@1.1.0'],
      ],
    )
    assert.match((decisions[0] as { data: { policyVersion: string } }).data.policyVersion, /^policy-rules@1\.0\.0\+/)
    assert.equal(harness.app.pluginsOf('support')['policy-rules'], '1.1.0')
  })

  it('keeps the old version serving when the new one fails to start', async () => {
    harness = await supportDesk({
      script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }],
      policyPlugin: policyV1,
    })
    await assert.rejects(harness.app.swap('support', 'policy-rules', { path: broken, config: {} }), {
      code: 'plugin_start_failed',
      message: /policy-rules@1\.2\.0 .* rules file is corrupt/,
    })
    assert.equal(harness.app.pluginsOf('support')['policy-rules'], '1.0.0')
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    const decision = (await harness.events(state.runId)).find((e) => e.type === 'tool/decision')
    assert.equal(decision?.producer, 'policy-rules@1.0.0')
  })

  it('refuses a replacement that fails its checks without touching the running version', async () => {
    harness = await supportDesk({ script: [{ final: refundAnswer }] })
    const disposed: string[] = []
    harness.app.root.on('plugin/disposed', (e: PluginEvent) => disposed.push(e.name))
    await assert.rejects(harness.app.swap('support', 'policy-rules', { config: { rules: [{ id: 'x', verdict: 'maybe' }] } }), {
      code: 'plugin_config_invalid',
      message: /rules\[0\]\.verdict/,
    })
    await assert.rejects(harness.app.swap('support', 'policy-rules', { version: '^3.0.0' }), { code: 'plugin_version_unsatisfiable' })
    await assert.rejects(harness.app.swap('support', 'no-such-plugin', { version: '*' }), {
      code: 'plugin_not_found',
      message: /agent "support" has no plugin "no-such-plugin"/,
    })
    assert.deepEqual(disposed, [])
  })

  it('re-registers the tools of dependents when the registry itself is swapped', async () => {
    harness = await supportDesk({ script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }] })
    await harness.app.swap('support', 'tools-registry', { config: { exclude: ['slow_lookup'] } })
    const state = await harness.agent.run('refund window?')
    assert.equal(state.status, 'COMPLETED')
    assert.deepEqual(
      harness.model().requests[0].tools.map((t) => t.name),
      ['lookup_policy', 'record_followup'],
    )
  })
})
