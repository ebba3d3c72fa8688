/**
 * Approvals that reach beyond one call: once (the default), for the rest of the run, or as a standing
 * grant across runs, each bound to the tool, the arguments it covers, the policy version and the
 * approvers the policy names. Through the real support desk and its store.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { grantMismatch, type ApprovalGrant, type RunEvent } from 'cordage'
import { FaultLab } from './fault-lab.ts'
import { supportDesk, tempDir, type DeskOptions, type Harness } from './helpers.ts'

const done = { final: 'The follow-up is noted on the ticket.' }

const followup = (ticketId: string, note = 'Refund approved.') => ({ tool: 'record_followup', args: { ticketId, note } })
const rules = (approvers?: string[]) => [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' }, ...(approvers ? { approvers } : {}) },
]
/** The desk with the grants plugin (plugins/grants): without it nothing would use a wider approval. */
const withGrants = (options: DeskOptions) => supportDesk({ ...options, plugins: ['grants', ...(options.plugins ?? [])] })
const decisions = async (desk: Harness, runId: string) =>
  (await desk.events(runId)).filter((e) => e.type === 'tool/approval-decided') as RunEvent<'tool/approval-decided'>[]

describe('approvals beyond one call', () => {
  it('once (the default) covers that call only: the next call in the run asks again', async () => {
    const desk = await withGrants({ script: [followup('T-1'), followup('T-1'), done], rules: rules(), verifier: { minCount: 0 } })
    try {
      const first = await desk.agent.run()
      const second = await (await desk.agent.approve(first.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(second.status, 'WAITING_APPROVAL')
      assert.equal(second.waiting?.actionId, 's2.a1')
    } finally {
      await desk.stop()
    }
  })

  it('for the run: later calls of the tool are approved by the grant, without asking; a new run asks', async () => {
    const desk = await withGrants({ script: [followup('T-1'), followup('T-2'), done], rules: rules(), verifier: { minCount: 0 } })
    try {
      const paused = await desk.agent.run()
      const finished = await (await desk.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'run' })).done
      assert.equal(finished.status, 'COMPLETED', finished.reason)
      const [given, used] = await decisions(desk, finished.runId)
      assert.equal(given.data.scope, 'run')
      assert.equal(given.data.grant?.args, 'any')
      assert.deepEqual([used.data.by, used.data.scope, used.data.grantId], [`grant:${given.data.grant!.id}`, 'run', given.data.grant!.id])
      assert.equal((await desk.events(finished.runId)).filter((e) => e.type === 'tool/approval-requested').length, 1, 'asked once')
      assert.equal(desk.followups().length, 2)
      assert.equal((await desk.agent.run()).status, 'WAITING_APPROVAL', 'a run grant does not outlive its run')
    } finally {
      await desk.stop()
    }
  })

  it('a standing grant covers later runs for exactly those arguments until it is revoked', async () => {
    const desk = await withGrants({ script: [followup('T-1'), done], rules: rules(), verifier: { minCount: 0 } })
    try {
      const paused = await desk.agent.run()
      await (await desk.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant', reason: 'routine note' })).done
      const [grant] = await desk.agent.grants()
      assert.deepEqual(
        [grant.scope, grant.tool, grant.by, grant.reason, grant.source],
        ['grant', 'record_followup', 'alice', 'routine note', { runId: paused.runId, actionId: 's1.a1' }],
      )
      assert.ok(typeof grant.args === 'object' && 'hash' in grant.args)

      const again = await desk.agent.run()
      assert.equal(again.status, 'COMPLETED', 'the same call in a new run needs no one')
      assert.equal((await decisions(desk, again.runId))[0].data.by, `grant:${grant.id}`)

      await desk.app.swap('support', 'model-scripted', { config: { script: [followup('T-2'), done] } })
      assert.equal((await desk.agent.run()).status, 'WAITING_APPROVAL', 'other arguments: asked')

      await desk.app.swap('support', 'model-scripted', { config: { script: [followup('T-1'), done] } })
      await desk.agent.revokeGrant(grant.id, { by: 'bob', reason: 'policy review' })
      assert.equal((await desk.agent.run()).status, 'WAITING_APPROVAL', 'revoked: asked again')
      const [revoked] = await desk.agent.grants({ inactive: true })
      assert.deepEqual([revoked.revokedBy, revoked.revokeReason], ['bob', 'policy review'])
    } finally {
      await desk.stop()
    }
  })

  it('a grant for an argument pattern covers matching calls only, and lapses when it expires', async () => {
    const desk = await withGrants({
      script: [followup('T-100'), followup('T-101'), followup('T-200'), done],
      rules: rules(),
      verifier: { minCount: 0 },
    })
    try {
      const paused = await desk.agent.run()
      const next = await (
        await desk.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant', args: { ticketId: 'T-1*' }, expiresInMs: 60_000 })
      ).done
      assert.equal(next.status, 'WAITING_APPROVAL')
      assert.equal(next.waiting?.actionId, 's3.a1', 'T-101 went through on the grant, T-200 asks')
      const [grant] = await desk.agent.grants()
      assert.ok(grant.expiresAt! > Date.now())
      assert.equal(
        grantMismatch(
          grant,
          { agent: 'support', tool: 'record_followup', args: { ticketId: 'T-150' }, argsHash: 'x', policyVersion: grant.policyVersion },
          grant.expiresAt!,
        ),
        'expired',
      )
    } finally {
      await desk.stop()
    }
  })

  it('a changed policy voids grants made under the old one', async () => {
    const desk = await withGrants({ script: [followup('T-1'), done], rules: rules(), verifier: { minCount: 0 } })
    try {
      const paused = await desk.agent.run()
      await (await desk.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant' })).done
      await desk.app.swap('support', 'policy-rules', {
        config: { default: 'deny', approvers: ['*'], rules: [...rules(), { id: 'extra', verdict: 'deny', match: { tool: 'nothing_*' } }] },
      })
      assert.equal((await desk.agent.run()).status, 'WAITING_APPROVAL')
    } finally {
      await desk.stop()
    }
  })

  it('only the approvers the policy names may decide, and their grants only', async () => {
    const desk = await withGrants({ script: [followup('T-1'), done], rules: rules(['alice']), verifier: { minCount: 0 } })
    try {
      const paused = await desk.agent.run()
      const requested = (await desk.events(paused.runId)).find(
        (e) => e.type === 'tool/approval-requested',
      ) as RunEvent<'tool/approval-requested'>
      assert.deepEqual(requested.data.approvers, ['alice'])
      await assert.rejects(desk.agent.approve(paused.runId, 's1.a1', { by: 'mallory' }), {
        code: 'approver_not_allowed',
        message: /mallory may not decide action s1\.a1.*rule followups names its approvers: alice/,
      })
      await assert.rejects(desk.agent.reject(paused.runId, 's1.a1', { by: 'mallory' }), { code: 'approver_not_allowed' })
      const finished = await (await desk.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(finished.status, 'COMPLETED', finished.reason)
    } finally {
      await desk.stop()
    }
  })

  it('refuses a bad pattern and a standing grant the store cannot keep', async () => {
    const desk = await withGrants({ script: [followup('T-1'), done], rules: rules(), verifier: { minCount: 0 } })
    try {
      const paused = await desk.agent.run()
      await assert.rejects(desk.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant', args: { note: { regex: '(' } } }), {
        code: 'invalid_input',
        message: /argument test "note": regex: \/\(\/ is not a valid regular expression/,
      })
      assert.equal((await desk.agent.load(paused.runId)).status, 'WAITING_APPROVAL', 'nothing was recorded')
    } finally {
      await desk.stop()
    }
    // A store that keeps no standing grants.
    const plain = await withGrants({
      script: [followup('T-1'), done],
      rules: rules(),
      verifier: { minCount: 0 },
      storePlugin: { path: resolve(import.meta.dirname, 'fixtures/plugins/store-without-grants') },
      // A store of contract 2.2 has no threads either: the threads plugin needs 2.3.
      threads: false,
    })
    try {
      const paused = await plain.agent.run()
      await assert.rejects(plain.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant' }), {
        code: 'invalid_input',
        message: /keeps no standing grants/,
      })
      assert.equal((await plain.agent.load(paused.runId)).status, 'WAITING_APPROVAL', 'nothing was recorded')
    } finally {
      await plain.stop()
    }
  })
})

describe('approvals beyond one call need the grants plugin', () => {
  const refusal = (scope: string, agent: string) =>
    new RegExp(`--scope ${scope} needs the grants plugin, which agent "${agent}" does not have.*agents\\.${agent}\\.plugins: - grants`)

  it('refuses approve with scope run or grant on an agent without it, naming the plugin; once still approves', async () => {
    const desk = await supportDesk({ script: [followup('T-1'), followup('T-2'), done], rules: rules(), verifier: { minCount: 0 } })
    try {
      const paused = await desk.agent.run()
      for (const scope of ['run', 'grant'] as const)
        await assert.rejects(desk.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope }), {
          code: 'feature_unsupported',
          message: refusal(scope, 'support'),
        })
      assert.equal((await desk.agent.load(paused.runId)).status, 'WAITING_APPROVAL', 'nothing was recorded')
      assert.deepEqual(await desk.agent.grants({ inactive: true }), [])
      const next = await (await desk.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(next.status, 'WAITING_APPROVAL', 'approved once: the next call asks')
      assert.equal(next.waiting?.actionId, 's2.a1')
    } finally {
      await desk.stop()
    }
  })

  it('uses no grant without it: a standing grant in the store approves nothing, every ask goes to a person', async () => {
    const storePlugin = { plugin: 'store-sqlite', config: { path: `${tempDir()}/runs.db` } }
    const given = await withGrants({ script: [followup('T-1'), done], rules: rules(), verifier: { minCount: 0 }, storePlugin })
    try {
      const paused = await given.agent.run()
      await (await given.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant' })).done
      assert.equal((await given.agent.run()).status, 'COMPLETED', 'with the plugin the grant covers the same call')
    } finally {
      await given.stop()
    }
    const plain = await supportDesk({ script: [followup('T-1'), done], rules: rules(), verifier: { minCount: 0 }, storePlugin })
    try {
      assert.equal((await plain.agent.grants()).length, 1, 'the grant is still in the store')
      const state = await plain.agent.run()
      assert.equal(state.status, 'WAITING_APPROVAL')
      assert.equal((await decisions(plain, state.runId)).length, 0)
    } finally {
      await plain.stop()
    }
  })

  it('through the CLI: approve --scope run exits 2 with feature_unsupported, naming the plugin and where to add it', async () => {
    const lab = new FaultLab({
      script: [{ tool: 'pay_once', args: { amount: 3 } }, { final: 'paid' }],
      rules: [{ id: 'ask', verdict: 'ask', match: { tool: 'pay_*' } }],
    })
    try {
      const paused = await lab.run(['run', '--json'])
      assert.equal(paused.code, 5, paused.stderr)
      const runId = paused.events[0].runId
      const refused = await lab.run(['approve', runId, 's1.a1', '--scope', 'run'])
      assert.equal(refused.code, 2, refused.stderr)
      assert.match(refused.stderr, /feature_unsupported/)
      assert.match(refused.stderr, refusal('run', 'pay'))
      assert.equal(lab.payments().length, 0)
      const approved = await lab.run(['approve', runId, 's1.a1'])
      assert.equal(approved.code, 0, approved.stderr)
      assert.equal(lab.payments().length, 1)
    } finally {
      lab.close()
    }
  })
})

describe('grantMismatch', () => {
  const grant: ApprovalGrant = {
    id: 'g',
    scope: 'grant',
    agent: 'a',
    tool: 't',
    args: 'any',
    policyVersion: 'p1',
    toolVersion: 'desk@1.0.0',
    by: 'alice',
    createdAt: 0,
    source: { runId: 'r', actionId: 's1.a1' },
  }
  const call = { agent: 'a', tool: 't', args: {}, argsHash: 'h', policyVersion: 'p1', toolVersion: 'desk@1.0.0' }
  it('says why a grant does not apply: tool version, policy version, revoked', () => {
    assert.equal(grantMismatch(grant, call, 1), undefined)
    assert.match(grantMismatch(grant, { ...call, toolVersion: 'desk@1.1.0' }, 1)!, /given for desk@1\.0\.0, now desk@1\.1\.0/)
    assert.match(grantMismatch(grant, { ...call, policyVersion: 'p2' }, 1)!, /given under policy p1, now p2/)
    assert.equal(grantMismatch({ ...grant, revokedAt: 1 }, call, 2), 'revoked')
  })
})
