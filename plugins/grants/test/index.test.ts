import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashArgs, type ApprovalGrant, type RunEvent } from 'cordage'
import { eventsOf, expectStatus, startApp, testPreset } from 'cordage/testing'
import { coveringGrant, type AskedCall } from '../cover.ts'

const args = { ticketId: 'T-1', note: 'x' }
const call = (over: Partial<AskedCall> = {}): AskedCall => ({
  tool: 'record_followup',
  args,
  argsHash: hashArgs(args),
  policyVersion: 'p@1',
  ...over,
})
const grant = (id: string, over: Partial<ApprovalGrant> = {}): ApprovalGrant => ({
  id,
  scope: 'run',
  agent: 'desk',
  tool: 'record_followup',
  args: 'any',
  policyVersion: 'p@1',
  by: 'alice',
  createdAt: 0,
  source: { runId: 'r1', actionId: 's1.a1' },
  ...over,
})

describe('grants: the grant that covers an ask', () => {
  it("takes the run's own grant before asking the store", async () => {
    let asked = 0
    const store = async () => {
      asked++
      return [grant('g-standing', { scope: 'grant' })]
    }
    assert.equal((await coveringGrant(call(), 'desk', [grant('g-run')], store))?.id, 'g-run')
    assert.equal(asked, 0)
    assert.equal((await coveringGrant(call(), 'desk', [], store))?.id, 'g-standing')
  })

  it('asks the store for this agent and tool, active ones only', async () => {
    const queries: unknown[] = []
    await coveringGrant(call(), 'desk', [], async (query) => (queries.push(query), []), 50)
    assert.deepEqual(queries, [{ agent: 'desk', tool: 'record_followup', now: 50 }])
  })

  it('passes over a grant that does not cover the call: other arguments, policy, agent, giver, or revoked', async () => {
    const others = [
      grant('g-hash', { args: { hash: hashArgs({ ticketId: 'T-2', note: 'x' }) } }),
      grant('g-policy', { policyVersion: 'p@0' }),
      grant('g-agent', { agent: 'ops' }),
      grant('g-bob', { by: 'bob' }),
      grant('g-revoked', { revokedAt: 1 }),
    ]
    assert.equal(await coveringGrant(call({ approvers: ['alice'] }), 'desk', others, undefined), undefined)
    assert.equal((await coveringGrant(call({ approvers: ['bob'] }), 'desk', others, undefined))?.id, 'g-bob')
  })

  it('uses only grants for the run when the store keeps no standing ones', async () => {
    assert.equal(await coveringGrant(call(), 'desk', [], undefined), undefined)
  })
})

describe('grants in an agent', () => {
  const followup = (ticketId: string) => ({ tool: 'record_followup', args: { ticketId, note: 'Refund approved.' } })
  const preset = (plugins: unknown[]) =>
    testPreset({
      agent: 'desk',
      script: [followup('T-1'), followup('T-2'), { final: 'Both follow-ups are noted.' }],
      rules: [{ id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } }],
      plugins: [{ plugin: 'verifier-basic', config: { minCount: 0 } }, 'support-desk', ...plugins] as never,
    })

  it('approves the later calls a run-wide approval covers, on record by the grant', async () => {
    const t = await startApp(preset(['grants']))
    try {
      const paused = await t.run()
      expectStatus(paused, 'WAITING_APPROVAL')
      await (await t.agent().approve(paused.state.runId, 's1.a1', { by: 'alice', scope: 'run' })).done
      const run = await t.read(paused.state.runId)
      expectStatus(run, 'COMPLETED')
      const [given, used] = eventsOf(run, 'tool/approval-decided') as RunEvent<'tool/approval-decided'>[]
      assert.deepEqual([used.actionId, used.data.by, used.data.grantId], ['s2.a1', `grant:${given.data.grant!.id}`, given.data.grant!.id])
    } finally {
      await t.stop()
    }
  })

  it('is what makes a wider approval possible: without it, approve --scope run is refused', async () => {
    const t = await startApp(preset([]))
    try {
      const paused = await t.run()
      await assert.rejects(t.agent().approve(paused.state.runId, 's1.a1', { by: 'alice', scope: 'run' }), {
        code: 'feature_unsupported',
        message: /needs the grants plugin.*agents\.desk\.plugins: - grants/,
      })
    } finally {
      await t.stop()
    }
  })
})
