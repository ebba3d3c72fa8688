import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyState, estimateTokens, type RunState } from 'cordage'
import { BasicContext } from '../projection.ts'

function transcript(state: RunState, steps: number) {
  for (let i = 1; i <= steps; i++) {
    state.transcript.push({
      kind: 'assistant',
      decision: { kind: 'tool_calls', calls: [{ name: 'lookup', args: { i } }] },
      actionIds: [`s${i}.a1`],
      seq: i * 10,
    })
    state.transcript.push({
      kind: 'observation',
      actionId: `s${i}.a1`,
      tool: 'lookup',
      text: `result ${i}`,
      ok: i % 2 === 0,
      seq: i * 10 + 1,
    })
  }
}

describe('context-basic', () => {
  it('projects the transcript into messages with provenance, pairing each call with its result', () => {
    const state = emptyState('r')
    state.transcript.push({ kind: 'user', text: 'task', seq: 2 })
    transcript(state, 2)
    const { messages } = new BasicContext('sys', 10).assemble({ state, tools: [] })
    assert.deepEqual(
      messages.map((m) => [m.role, m.source]),
      [
        ['system', 0],
        ['user', 2],
        ['assistant', 10],
        ['tool', 11],
        ['assistant', 20],
        ['tool', 21],
      ],
    )
    assert.deepEqual(messages[2].calls, [{ actionId: 's1.a1', name: 'lookup', args: { i: 1 } }])
    assert.equal(messages[3].actionId, 's1.a1')
    assert.equal(messages[3].text, 'Error: result 1', 'a failed result is marked for the model')
  })

  it('assembles incrementally to the same projection a fresh assembly gives', () => {
    const state = emptyState('r')
    state.transcript.push({ kind: 'user', text: 'task', seq: 2 })
    const incremental = new BasicContext('sys', 10)
    for (let i = 0; i < 5; i++) {
      transcript(state, 1)
      const step = incremental.assemble({ state, tools: [] })
      assert.deepEqual(step, new BasicContext('sys', 10).assemble({ state, tools: [] }))
    }
  })

  it('returns a fresh list each time, so a consumer cannot change state or a later projection', () => {
    const state = emptyState('r')
    state.transcript.push({ kind: 'user', text: 'task', seq: 2 })
    const context = new BasicContext('sys', 10)
    const first = context.assemble({ state, tools: [] })
    first.messages.length = 0
    assert.equal(context.assemble({ state, tools: [] }).messages.length, 2)
    assert.equal(state.transcript.length, 1)
  })

  it('estimates tokens from the text it projects, with the kit estimate when the model has no counter', () => {
    const state = emptyState('r')
    const text = 'Damaged items can be refunded within 30 days of delivery. '.repeat(10)
    state.transcript.push({ kind: 'user', text, seq: 2 })
    // 4 for each message frame (the empty system prompt and the task), and the estimate of the text.
    assert.equal(new BasicContext('', 10).assemble({ state, tools: [] }).tokens, 4 + 4 + estimateTokens(text))
    assert.equal(estimateTokens(text), 110, 'o200k_base counts 131')
  })

  it("counts with the model's counter, and counts again when its revision moves", () => {
    const state = emptyState('r')
    state.transcript.push({ kind: 'user', text: 'abcdefghij', seq: 2 })
    const counter = { name: 'chars', revision: 1, count: (text: string) => text.length }
    const context = new BasicContext('sys', 10, () => counter)
    assert.equal(context.assemble({ state, tools: [] }).tokens, 4 + 3 + 4 + 10)
    counter.count = (text: string) => 2 * text.length
    assert.equal(context.assemble({ state, tools: [] }).tokens, 4 + 3 + 4 + 10, 'the same revision: the counts are kept')
    counter.revision = 2
    assert.equal(context.assemble({ state, tools: [] }).tokens, 4 + 6 + 4 + 20)
    state.transcript.push({ kind: 'user', text: 'xy', seq: 3 })
    assert.equal(context.assemble({ state, tools: [] }).tokens, 4 + 6 + 4 + 20 + 4 + 4)
  })
})
