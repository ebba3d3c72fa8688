import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyState } from 'cordage'
import { BasicContext } from '../projection.ts'

describe('context-basic: a failed tool result', () => {
  it('is flagged isError (context 1.3.0) as well as marked in its text; a result that worked is not', () => {
    const state = emptyState('r')
    state.transcript.push(
      { kind: 'user', text: 'task', seq: 2 },
      {
        kind: 'assistant',
        decision: {
          kind: 'tool_calls',
          calls: [
            { name: 'lookup', args: { id: 1 } },
            { name: 'lookup', args: { id: 2 } },
          ],
        },
        actionIds: ['s1.a1', 's1.a2'],
        seq: 5,
      },
      { kind: 'observation', actionId: 's1.a1', tool: 'lookup', text: 'found', ok: true, seq: 8 },
      { kind: 'observation', actionId: 's1.a2', tool: 'lookup', text: 'no such id', ok: false, seq: 9 },
    )
    const tools = new BasicContext('sys', 10).assemble({ state, tools: [] }).messages.filter((m) => m.role === 'tool')
    assert.deepEqual(
      tools.map((m) => [m.actionId, m.text, m.isError]),
      [
        ['s1.a1', 'found', undefined],
        ['s1.a2', 'Error: no such id', true],
      ],
    )
  })
})
