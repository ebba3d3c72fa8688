/**
 * A grants decorator is a plugin (plugins/grants): it may name the grant that covers an `ask`
 * (`tool/after-decide`), and the kernel checks the claim before it acts on it. A decorator that lies
 * (test/fixtures/plugins/rogue-grants) gets nothing: a grant that does not exist, that another run
 * was given, that was revoked, that covers other arguments (even after it rewrote the arguments it was
 * shown) or that the decision's approvers did not give, and a handler that fails or turns the ask into
 * an allow: the call waits for a person, who is told why, and nothing runs. A decorator that tells the
 * truth is trusted only as far as the kernel can check, and the approval is on record as before.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent, RunState } from 'cordage'
import { supportDesk, type DeskOptions, type Harness } from '../helpers.ts'

let desk: Harness | undefined
afterEach(async () => {
  await desk?.stop()
  desk = undefined
})

const rogue = (config: Record<string, string>) => ({ path: resolve(import.meta.dirname, '../fixtures/plugins/rogue-grants'), config })
const followup = (ticketId: string) => ({ tool: 'record_followup', args: { ticketId, note: 'Refund approved.' } })
const done = { final: 'The follow-up is noted on the ticket.' }
const asks = [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
]

async function open(script: unknown[], options: Partial<DeskOptions> & { mode: Record<string, string> }) {
  desk = await supportDesk({
    script: script as DeskOptions['script'],
    rules: asks,
    verifier: { minCount: 0 },
    ...options,
    plugins: [rogue(options.mode)],
  })
  return desk
}

const approvalsOf = async (h: Harness, runId: string) =>
  (await h.events(runId)).filter((e) => e.type === 'tool/approval-decided') as RunEvent<'tool/approval-decided'>[]

/** The run waits for a person on its first action, told why the claim was not taken, and nothing ran. */
async function askedAPerson(h: Harness, state: RunState, why: RegExp) {
  assert.equal(state.status, 'WAITING_APPROVAL', state.reason)
  assert.equal(state.waiting?.actionId, 's1.a1')
  assert.match(state.waiting!.reason, why)
  assert.deepEqual(await approvalsOf(h, state.runId), [], 'no approval on record')
}

describe('a grants decorator that lies', () => {
  it('claims a grant that does not exist: a person is asked', async () => {
    const h = await open([followup('T-1'), done], { mode: { mode: 'id', grantId: 'gr_nope' } })
    await askedAPerson(h, await h.agent.run(), /grant gr_nope .*does not cover this call: no grant gr_nope/)
    assert.equal(h.followups().length, 0)
  })

  it("claims another run's run-wide grant: a person is asked (a run grant lives in its own run only)", async () => {
    const h = await open([followup('T-1'), followup('T-2'), done], { mode: { mode: 'first' } })
    const paused = await h.agent.run()
    const first = await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'run' })).done
    // The truthful part: in its own run the grant is checked and used, on record as before.
    assert.equal(first.status, 'COMPLETED', first.reason)
    const [given, used] = await approvalsOf(h, first.runId)
    const id = given.data.grant!.id
    assert.deepEqual([used.data.by, used.data.scope, used.data.grantId], [`grant:${id}`, 'run', id])

    await h.app.swap('support', 'rogue-grants', { config: { mode: 'id', grantId: id } })
    await h.app.swap('support', 'model-scripted', { config: { script: [followup('T-3'), done] } })
    await askedAPerson(h, await h.agent.run(), new RegExp(`grant ${id} .*does not cover this call: no grant ${id}`))
    assert.equal(h.followups().length, 2)
  })

  it('claims a revoked standing grant: a person is asked', async () => {
    const h = await open([followup('T-1'), done], { mode: { mode: 'first' } })
    const paused = await h.agent.run()
    await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant' })).done
    const [grant] = await h.agent.grants()
    await h.agent.revokeGrant(grant.id, { by: 'bob' })
    await askedAPerson(h, await h.agent.run(), new RegExp(`grant ${grant.id} .*does not cover this call: revoked`))
    assert.equal(h.followups().length, 1)
  })

  it('rewrites the arguments it was shown to fit a pattern grant: the kernel checks the call as proposed', async () => {
    const h = await open([followup('T-100'), done], { mode: { mode: 'mutate' } })
    const paused = await h.agent.run()
    await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'grant', args: { ticketId: 'T-1*' } })).done
    await h.app.swap('support', 'model-scripted', { config: { script: [followup('T-200'), done] } })
    const state = await h.agent.run()
    await askedAPerson(h, state, /does not cover this call: arguments outside its pattern/)
    assert.equal((state.actions['s1.a1'].args as { ticketId: string }).ticketId, 'T-200')
    assert.equal(h.followups().length, 1)
  })

  it("claims a grant given by someone the decision's approvers do not name: a person is asked", async () => {
    const rules = [
      asks[0],
      { id: 'routine', verdict: 'ask', priority: 10, match: { tool: 'record_followup', args: { ticketId: 'T-1' } }, approvers: ['*'] },
      { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' }, approvers: ['alice'] },
    ]
    const h = await open([followup('T-1'), done], { mode: { mode: 'first' }, rules })
    const paused = await h.agent.run()
    await (await h.agent.approve(paused.runId, 's1.a1', { by: 'bob', scope: 'grant', args: 'any' })).done
    await h.app.swap('support', 'model-scripted', { config: { script: [followup('T-2'), done] } })
    await askedAPerson(h, await h.agent.run(), /does not cover this call: given by bob, whom the decision does not name \(alice\)/)
    assert.equal(h.followups().length, 1)
  })

  it('throws: a person is asked, and told the decorator failed', async () => {
    const h = await open([followup('T-1'), done], { mode: { mode: 'throw' } })
    await askedAPerson(h, await h.agent.run(), /tool\/after-decide handler of rogue-grants@1\.0\.0 failed: the grant book is missing/)
  })

  it('turns the ask into an allow: refused, a person is asked', async () => {
    const h = await open([followup('T-1'), done], { mode: { mode: 'verdict' } })
    await askedAPerson(
      h,
      await h.agent.run(),
      /tool\/after-decide handler of rogue-grants@1\.0\.0 failed: .*may only name a grant \(grantId\)/,
    )
    assert.equal(h.followups().length, 0)
  })

  it('does not answer in time: the run ends with service_timeout, and nothing ran', async () => {
    const h = await open([followup('T-1'), done], { mode: { mode: 'hang' }, serviceTimeouts: { phases: 200 } })
    const state = await h.agent.run()
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'service_timeout')
    assert.equal(h.followups().length, 0)
  })
})
