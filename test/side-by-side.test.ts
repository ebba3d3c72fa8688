/**
 * Two agents of one preset, in one process, on two major versions of the same plugin: each sees its
 * own version, even while both run at once.
 */
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { readService, type PolicyService } from 'cordage'
import { Cordage } from 'cordage/host'
import { refundAnswer } from './helpers.ts'
import { tempDir } from './temp.ts'

const dir = tempDir('cordage-side-by-side-')
after(() => rmSync(dir, { recursive: true, force: true }))

const agent = (policy: Record<string, unknown>) => ({
  budgets: { maxSteps: 4 },
  model: {
    plugin: 'model-scripted',
    config: { script: [{ tool: 'lookup_policy', args: { topic: 'refunds' }, delayMs: 30 }, { final: refundAnswer }] },
  },
  plugins: [
    'store-memory',
    'tools-registry',
    'context-basic',
    'verifier-basic',
    policy,
    { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
  ],
})

describe('side-by-side plugin versions', () => {
  it('runs policy-rules 1.x for one agent and 2.x for another in one process, each deciding with its own', async () => {
    const file = join(dir, 'preset.yml')
    const rules = [{ id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } }]
    writeFileSync(
      file,
      stringify({
        cordage: 1,
        agents: {
          old: agent({ plugin: 'policy-rules', version: '^1.0.0', config: { default: 'deny', rules } }),
          new: agent({ plugin: 'policy-rules', version: '^2.0.0', config: { default: 'deny', approvers: ['*'], rules } }),
        },
      }),
    )
    const app = await Cordage.fromPreset(file)
    try {
      assert.equal(app.pluginsOf('old')['policy-rules'], '1.0.0')
      assert.equal(app.pluginsOf('new')['policy-rules'], '2.1.0')
      // Each agent's context holds its own policy service: isolation, not a shared one overwritten.
      const providers = ['old', 'new'].map((name) => readService<PolicyService>(app.agent(name).ctx, 'policy')!)
      assert.deepEqual(
        providers.map((p) => p.provider),
        ['policy-rules@1.0.0', 'policy-rules@2.1.0'],
      )
      assert.notEqual(providers[0].value, providers[1].value)

      // Both at once: the steps interleave in one event loop.
      const [a, b] = await Promise.all([app.agent('old').run('refund window?'), app.agent('new').run('refund window?')])
      assert.deepEqual([a.status, b.status], ['COMPLETED', 'COMPLETED'])
      const decided = async (name: string, runId: string) =>
        (await app.agent(name).store().load(runId))
          .filter((e) => e.type === 'tool/decision')
          .map((e) => e.type === 'tool/decision' && [e.producer, e.data.policyVersion.split('+')[0]])
      assert.deepEqual(await decided('old', a.runId), [['policy-rules@1.0.0', 'policy-rules@1.0.0']])
      assert.deepEqual(await decided('new', b.runId), [['policy-rules@2.1.0', 'policy-rules@2.1.0']])
      assert.equal(a.services.policy, 'policy-rules@1.0.0')
      assert.equal(b.services.policy, 'policy-rules@2.1.0')
    } finally {
      await app.stop()
    }
  })
})
