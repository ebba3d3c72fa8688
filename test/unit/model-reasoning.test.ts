/**
 * A model's reasoning (model contract 1.2.0): checked and copied with the answer, kept on the transcript
 * entry by the reducer, and carried on the assistant message context plugins build.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkResponse, type ModelResponse } from '../../core/contracts/services/model.ts'
import type { Decision } from '../../core/contracts/data.ts'
import type { TranscriptEntry } from '../../core/contracts/state.ts'
import { plainResponse } from '../../core/contracts/checks/model.ts'
import { transcriptMessage } from '../../core/kit/transcript.ts'

const usage = { inputTokens: 1, outputTokens: 1, costUsd: 0 }
const reasoning = { provider: 'anthropic', blocks: [{ type: 'thinking', thinking: 'hm', signature: 'c2ln' }] }
const response = (r: unknown) => ({ decision: { kind: 'final', text: 'ok' }, usage, reasoning: r }) as ModelResponse

describe('reasoning on a model response', () => {
  it('is checked for its shape', () => {
    assert.equal(checkResponse(response(reasoning)), undefined)
    assert.equal(checkResponse({ decision: { kind: 'final', text: 'ok' }, usage }), undefined)
    for (const bad of [null, 'thinking', { provider: 'anthropic' }, { provider: 1, blocks: [] }, { provider: 'x', blocks: {} }])
      assert.match(checkResponse(response(bad)) ?? '', /reasoning that is not/, JSON.stringify(bad))
  })

  it('is copied as plain JSON, and a reasoning that cannot be fails the call', () => {
    const out = plainResponse(response(reasoning))
    assert.deepEqual(out.reasoning, reasoning)
    assert.notEqual(out.reasoning!.blocks[0], reasoning.blocks[0], "a copy, not the model plugin's object")
    assert.equal(Object.hasOwn(plainResponse({ decision: { kind: 'final', text: 'ok' }, usage }), 'reasoning'), false)
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    assert.throws(() => plainResponse(response({ provider: 'anthropic', blocks: [cycle] })), { code: 'model_invalid_response' })
  })

  it('goes on the assistant message a transcript entry becomes, whatever the decision', () => {
    const entry = (decision: Decision): TranscriptEntry => ({
      kind: 'assistant',
      decision,
      actionIds: ['s1.a1'],
      seq: 4,
      reasoning,
    })
    for (const decision of [
      { kind: 'final', text: 'ok' },
      { kind: 'ask_user', question: 'which?' },
      { kind: 'tool_calls', calls: [{ name: 'lookup', args: {} }] },
    ] satisfies Decision[])
      assert.deepEqual(transcriptMessage(entry(decision)).reasoning, reasoning, decision.kind)
    assert.equal(
      Object.hasOwn(transcriptMessage({ kind: 'assistant', decision: { kind: 'final', text: 'ok' }, actionIds: [], seq: 4 }), 'reasoning'),
      false,
    )
  })
})
