import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { emptyState } from 'cordage'
import { DefaultContext } from '../context.ts'
import manifest, { type Config } from '../manifest.ts'

const configOf = (config: Partial<Config>): Config => (manifest.config as unknown as (c: unknown) => Config)(config)

describe('context-default: a failed tool result', () => {
  it('is flagged isError (context 1.3.0), clipped or not; a result that worked is not', () => {
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
            { name: 'lookup', args: { id: 3 } },
          ],
        },
        actionIds: ['s1.a1', 's1.a2', 's1.a3'],
        seq: 5,
      },
      { kind: 'observation', actionId: 's1.a1', tool: 'lookup', text: 'found', ok: true, seq: 8 },
      { kind: 'observation', actionId: 's1.a2', tool: 'lookup', text: 'no such id', ok: false, seq: 9 },
      { kind: 'observation', actionId: 's1.a3', tool: 'lookup', text: `timed out ${'x'.repeat(4000)}`, ok: false, seq: 10 },
    )
    const context = new DefaultContext(configOf({ system: 'sys', observationTokens: 100 }), [])
    const tools = context.assemble({ state, tools: [] }).messages.filter((m) => m.role === 'tool')
    assert.deepEqual(
      tools.map((m) => [m.actionId, m.isError]),
      [
        ['s1.a1', undefined],
        ['s1.a2', true],
        ['s1.a3', true],
      ],
    )
    assert.equal(tools[1].text, 'Error: no such id')
    assert.match(tools[2].text, /^Error: timed out x+ … \[clipped/)
  })
})
