import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { emptyState } from 'cordage'
import { Cordage } from 'cordage/host'
import { renewalVerifier } from '../verifier.ts'

const preset = join(import.meta.dirname, '../../../library.yml')
const signal = new AbortController().signal

describe('library-desk', () => {
  it('renews a loan and completes with the new due date as evidence', async () => {
    const app = await Cordage.fromPreset(preset)
    const agent = app.agent('desk')
    const state = await agent.run('Please renew B-12 for two weeks.')
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await agent.store().load(state.runId)
    const renewed = events.find((e) => e.type === 'tool/end' && e.actionId === 's2.a1')
    assert.ok(renewed?.type === 'tool/end')
    assert.deepEqual(renewed.data.output, { bookId: 'B-12', due: '2025-07-15' })
    assert.equal(renewed.producer, 'library-desk@1.0.0')
    const verified = events.find((e) => e.type === 'verify/end')
    assert.ok(verified?.type === 'verify/end')
    assert.deepEqual(verified.data.evidence.map((e) => e.ref), ['2025-07-15'])
    await app.stop()
  })

  it('is denied a renewal over four weeks by the preset, and cannot claim it anyway', async () => {
    const app = await Cordage.fromPreset(preset, { sets: [
      'agents.desk.budgets.maxRepairs=0',
      'agents.desk.model.config.script=[{"tool": "renew_loan", "args": {"bookId": "B-12", "weeks": 6}}, {"final": "Renewed B-12, due 2025-08-12."}]',
    ] })
    const state = await app.agent('desk').run('Renew B-12 for six weeks.')
    assert.equal(state.actions['s1.a1'].status, 'denied')
    assert.equal(state.actions['s1.a1'].decision?.ruleId, 'long-renewals')
    assert.equal(state.status, 'FAILED_VERIFICATION')
    assert.match(state.reason ?? '', /no renewal in this run returned the due date 2025-08-12/)
    await app.stop()
  })

  it('asks for a due date when an answer says renewed without one', () => {
    const result = renewalVerifier.verify({ state: emptyState('r'), answer: 'Renewed, all done.', signal })
    assert.deepEqual(result, { ok: false, code: 'missing_evidence', reason: 'the answer says renewed but gives no due date', repairable: true })
  })
})
