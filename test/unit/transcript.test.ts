/**
 * core/kit/transcript.ts: each transcript entry becomes one message with its seq as `source`; harness
 * feedback and failed tool results are marked; a plugin may give a tool result's text itself.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { TranscriptEntry } from '../../core/contracts/state.ts'
import { FailedResultMark, type ObservationEntry, observationText, transcriptMessage } from '../../core/kit/transcript.ts'

const ok: ObservationEntry = { kind: 'observation', actionId: 's1.a1', tool: 'lookup', text: 'order 42 shipped', ok: true, seq: 11 }
const failed: ObservationEntry = { ...ok, actionId: 's1.a2', text: 'no such order', ok: false, seq: 12 }

describe('transcriptMessage', () => {
  it('passes a user message as it is', () => {
    assert.deepEqual(transcriptMessage({ kind: 'user', text: 'Where is order 42?', seq: 2 }), {
      role: 'user',
      text: 'Where is order 42?',
      source: 2,
    })
  })

  it('marks harness feedback as coming from the harness', () => {
    assert.deepEqual(transcriptMessage({ kind: 'feedback', text: 'cite a source', seq: 30 }), {
      role: 'user',
      text: '[harness] cite a source',
      source: 30,
    })
  })

  it('gives a tool result as a tool message of its action, marking and flagging a failure', () => {
    assert.deepEqual(transcriptMessage(ok), { role: 'tool', actionId: 's1.a1', text: 'order 42 shipped', source: 11 })
    assert.deepEqual(transcriptMessage(failed), {
      role: 'tool',
      actionId: 's1.a2',
      text: 'Error: no such order',
      source: 12,
      isError: true,
    })
  })

  it("gives a model turn's answer, question, or text with its calls paired to their action ids", () => {
    const final: TranscriptEntry = { kind: 'assistant', decision: { kind: 'final', text: 'It shipped.' }, actionIds: [], seq: 40 }
    assert.deepEqual(transcriptMessage(final), { role: 'assistant', text: 'It shipped.', source: 40 })
    const ask: TranscriptEntry = { kind: 'assistant', decision: { kind: 'ask_user', question: 'Which order?' }, actionIds: [], seq: 41 }
    assert.deepEqual(transcriptMessage(ask), { role: 'assistant', text: 'Which order?', source: 41 })
    const calls: TranscriptEntry = {
      kind: 'assistant',
      decision: {
        kind: 'tool_calls',
        text: 'Looking both up.',
        calls: [
          { name: 'lookup', args: { id: 42 } },
          { name: 'refund', args: { id: 7 } },
        ],
      },
      actionIds: ['s1.a1', 's1.a2'],
      seq: 10,
    }
    assert.deepEqual(transcriptMessage(calls), {
      role: 'assistant',
      text: 'Looking both up.',
      source: 10,
      calls: [
        { actionId: 's1.a1', name: 'lookup', args: { id: 42 } },
        { actionId: 's1.a2', name: 'refund', args: { id: 7 } },
      ],
    })
    const silent: TranscriptEntry = {
      ...calls,
      decision: { kind: 'tool_calls', calls: [{ name: 'lookup', args: {} }] },
      actionIds: ['s2.a1'],
    }
    assert.equal(transcriptMessage(silent).text, '', 'tool calls without text have empty text')
  })

  it("uses the plugin's text for a tool result, and only for a tool result", () => {
    const seen: ObservationEntry[] = []
    const clipped = (entry: ObservationEntry) => {
      seen.push(entry)
      return `${entry.ok ? '' : FailedResultMark}${entry.text.slice(0, 5)}…`
    }
    assert.deepEqual(transcriptMessage(failed, clipped), {
      role: 'tool',
      actionId: 's1.a2',
      text: 'Error: no su…',
      source: 12,
      isError: true,
    })
    assert.deepEqual(transcriptMessage({ kind: 'user', text: 'a long question', seq: 1 }, clipped).text, 'a long question')
    assert.deepEqual(seen, [failed])
  })
})

describe('observationText', () => {
  it('is the whole result, with FailedResultMark in front of a failure', () => {
    assert.equal(FailedResultMark, 'Error: ')
    assert.equal(observationText(ok), 'order 42 shipped')
    assert.equal(observationText(failed), 'Error: no such order')
  })
})
