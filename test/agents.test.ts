/**
 * Several agents in one preset and one process: each has its own providers (isolated context) and its
 * own store, and each run's record names its own agent and plugins.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { Cordage } from '../core/host/app.ts'

describe('agents of one preset', () => {
  it('run side by side, each under its own policy configuration and into its own store', async () => {
    const app = await Cordage.fromPreset(resolve(import.meta.dirname, 'fixtures/presets/two-agents.yml'))
    assert.deepEqual(app.agentNames(), ['lenient', 'strict'])
    const [lenient, strict] = await Promise.all([app.agent('lenient').run(), app.agent('strict').run()])

    assert.equal(lenient.status, 'COMPLETED')
    assert.deepEqual([lenient.actions['s1.a1'].decision?.verdict, lenient.actions['s1.a1'].decision?.ruleId], ['allow', 'reads'])
    assert.equal(strict.status, 'COMPLETED')
    assert.deepEqual([strict.actions['s1.a1'].decision?.verdict, strict.actions['s1.a1'].decision?.ruleId], ['deny', 'default'])
    assert.notEqual(lenient.actions['s1.a1'].decision?.policyVersion, strict.actions['s1.a1'].decision?.policyVersion)

    await assert.rejects(app.agent('strict').store().load(lenient.runId), { code: 'run_not_found' })
    await assert.rejects(app.agent('lenient').store().load(strict.runId), { code: 'run_not_found' })
    for (const [name, state] of [
      ['lenient', lenient],
      ['strict', strict],
    ] as const) {
      const start = (await app.agent(name).store().load(state.runId))[0]
      assert.ok(start.type === 'run/start' && start.data.agent === name)
    }
    await app.stop()
  })
})
