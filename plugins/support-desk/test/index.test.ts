import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { tempDir } from '../../../test/temp.ts'
import { invokeTool } from '../../../test/tool-harness.ts'
import { Outbox } from '../outbox.ts'
import { lookupPolicy, recordFollowup, slowLookup } from '../tools.ts'

function call(tool: ReturnType<typeof slowLookup>, args: unknown, signal = new AbortController().signal) {
  return invokeTool(tool, args, { runId: 'r', signal })
}

describe('support-desk', () => {
  it('looks up a policy and puts the source to cite in the observation', async () => {
    const result = await call(lookupPolicy, { topic: 'Refunds' })
    assert.match(result.observation!, /\[source: policy\/refunds#2\]$/)
    await assert.rejects(call(lookupPolicy, { topic: 'pets' }), {
      code: 'tool_failed',
      message: /known topics: refunds, returns, shipping, warranty/,
    })
  })

  it('writes a follow-up once per idempotency key, and refuses the key with other content', async () => {
    const outbox = new Outbox(join(tempDir(), 'out.jsonl'))
    const tool = recordFollowup(outbox)
    const first = await call(tool, { ticketId: 'T-1', note: 'hello' })
    const again = await call(tool, { ticketId: 'T-1', note: 'hello' })
    assert.equal(first.receipt, 'FU-1')
    assert.deepEqual(again.output, { receipt: 'FU-1', ticketId: 'T-1', duplicate: true })
    await assert.rejects(call(tool, { ticketId: 'T-1', note: 'changed' }), { code: 'idempotency_conflict' })
    assert.equal(outbox.entries().length, 1)
  })

  it('declares its contracts: lookups read only, follow-ups external and approval-worthy', () => {
    assert.deepEqual([lookupPolicy.sideEffect, lookupPolicy.idempotent], ['none', true])
    const followup = recordFollowup(new Outbox())
    assert.deepEqual([followup.sideEffect, followup.idempotent, followup.needsApproval], ['external', true, true])
  })

  it('stops a slow lookup when it is aborted', async () => {
    const controller = new AbortController()
    const pending = call(slowLookup(10_000, 50), { query: 'q' }, controller.signal)
    setTimeout(() => controller.abort(), 20)
    await assert.rejects(pending, { code: 'cancelled' })
  })
})
