import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RedactedThinkingBlockParam, ThinkingBlockParam } from '@anthropic-ai/sdk/resources/messages'
import type { ContextMessage } from 'cordage'
import { AnthropicMessagesModel } from '../anthropic-model.ts'
import manifest from '../manifest.ts'
import { messagesRequest } from '../request.ts'
import { Message, MessageAnswer, StreamEvent } from '../response.ts'
import type { ReasoningBlock } from '../thinking.ts'

const env = { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }
const config = (over: Record<string, unknown> = {}) => manifest.config({ model: 'claude-test', ...over })
const prices = { inputPerMTok: 0, outputPerMTok: 0 }
// The shapes the official SDK sends back (its types, checked by tsc).
const thinking = { type: 'thinking', thinking: 'Look it up.', signature: 'c2ln' } satisfies ThinkingBlockParam
const redacted = { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' } satisfies RedactedThinkingBlockParam
/** What this plugin sends back is a block the SDK would send: tsc refuses this line otherwise. */
export const asSdkBlock = (b: ReasoningBlock): ThinkingBlockParam | RedactedThinkingBlockParam => b
const history = (reasoning?: ContextMessage['reasoning']): ContextMessage[] => [
  { role: 'user', text: 'Refund window?', source: 1 },
  {
    role: 'assistant',
    text: 'Checking.',
    source: 2,
    calls: [{ actionId: 's1.a1', name: 'lookup_policy', args: { topic: 'refunds' } }],
    ...(reasoning ? { reasoning } : {}),
  },
  { role: 'tool', text: '30 days', actionId: 's1.a1', source: 3 },
]
const events = (...list: unknown[]) => {
  const answer = new MessageAnswer()
  for (const e of list) answer.add(StreamEvent.parse(e))
  return answer
}
const start = { type: 'message_start', message: { model: 'claude-test', usage: { input_tokens: 1 } } }
const stop = [{ type: 'message_delta', delta: { stop_reason: 'end_turn' } }, { type: 'message_stop' }]
const text = [
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: 'Hi' } },
  { type: 'content_block_stop', index: 1 },
]

describe('model-anthropic extended thinking', () => {
  it('asks for thinking only when configured, with the budget the API takes', () => {
    assert.equal('thinking' in messagesRequest(config(), history(), []), false)
    const body = messagesRequest(config({ thinking: { budgetTokens: 2048 } }), history({ provider: 'anthropic', blocks: [thinking] }), [])
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2048 })
  })

  it('refuses a budget the API would refuse, saying what to change', () => {
    assert.throws(() => new AnthropicMessagesModel(config({ thinking: { budgetTokens: 1000 } }), env), {
      code: 'plugin_config_invalid',
      message: /budgetTokens is 1000, and the API takes at least 1024/,
    })
    assert.throws(() => new AnthropicMessagesModel(config({ maxTokens: 2048, thinking: { budgetTokens: 2048 } }), env), {
      code: 'plugin_config_invalid',
      message: /budgetTokens \(2048\) must be less than maxTokens \(2048\)/,
    })
    assert.throws(() => config({ thinking: {} }), /thinking/)
    assert.throws(() => config({ thinking: { budgetTokens: 'lots' } }), /thinking/)
    assert.throws(() => new AnthropicMessagesModel(config({ extraBody: { thinking: { type: 'enabled', budget_tokens: 2048 } } }), env), {
      code: 'plugin_config_invalid',
      message: /extraBody.thinking is not taken; set thinking: \{ budgetTokens \} instead/,
    })
    assert.ok(new AnthropicMessagesModel(config({ maxTokens: 4096, thinking: { budgetTokens: 1024 } }), env))
  })

  it('sends the thinking blocks back first in their turn, exactly, and only with thinking on', () => {
    const messages = history({ provider: 'anthropic', blocks: [redacted, thinking] })
    const turn = (messagesRequest(config({ thinking: { budgetTokens: 2048 } }), messages, []).messages as any[])[1]
    assert.deepEqual(turn.content, [
      redacted,
      thinking,
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_s1_a1', name: 'lookup_policy', input: { topic: 'refunds' } },
    ])
    const off = (messagesRequest(config(), messages, []).messages as any[])[1]
    assert.deepEqual(
      off.content.map((b: { type: string }) => b.type),
      ['text', 'tool_use'],
    )
  })

  it("leaves another provider's reasoning out, and refuses a continuation then left without thinking", () => {
    const other = history({ provider: 'openai', blocks: [{ id: 'rs_1' }] })
    assert.throws(() => messagesRequest(config({ thinking: { budgetTokens: 2048 } }), other, []), {
      code: 'model_permanent',
      message: /has no thinking blocks to send back/,
    })
    assert.deepEqual(
      (messagesRequest(config(), other, []).messages as any[])[1].content.map((b: { type: string }) => b.type),
      ['text', 'tool_use'],
    )
  })

  it('refuses recorded blocks that are not the API’s, rather than send them', () => {
    for (const bad of [
      { ...thinking, signature: '' },
      { type: 'thinking', thinking: 'x' },
      { ...redacted, extra: 1 },
      { type: 'text', text: 'x' },
    ])
      assert.throws(
        () => messagesRequest(config({ thinking: { budgetTokens: 2048 } }), history({ provider: 'anthropic', blocks: [bad] }), []),
        {
          code: 'model_permanent',
          message: /recorded with the answer at seq 2 are not the API's thinking blocks/,
        },
      )
  })

  it('keeps streamed thinking and redacted thinking whole, signature included', () => {
    const answer = events(
      start,
      { type: 'content_block_start', index: 0, content_block: redacted },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 2, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'thinking_delta', thinking: 'Look ' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'thinking_delta', thinking: 'it up.' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'signature_delta', signature: 'c2ln' } },
      { type: 'content_block_stop', index: 2 },
      ...text,
      ...stop,
    )
    const result = answer.result(prices, 'x', false)
    assert.deepEqual(result.reasoning, { provider: 'anthropic', blocks: [redacted, thinking] })
    assert.deepEqual(result.decision, { kind: 'final', text: 'Hi' })
  })

  it('reads thinking blocks from a whole message, and an answer without any has no reasoning', () => {
    const answer = new MessageAnswer()
    answer.read(Message.parse({ content: [thinking, { type: 'text', text: 'Hi' }], stop_reason: 'end_turn' }))
    assert.deepEqual(answer.result(prices, 'x', false).reasoning, { provider: 'anthropic', blocks: [thinking] })
    const plain = new MessageAnswer()
    plain.read(Message.parse({ content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn' }))
    assert.equal('reasoning' in plain.result(prices, 'x', false), false)
  })

  it('refuses thinking blocks that could not go back whole', () => {
    assert.equal(Message.safeParse({ content: [{ type: 'thinking', thinking: 'x' }] }).success, false, 'no signature')
    assert.equal(Message.safeParse({ content: [{ type: 'thinking', signature: 's' }] }).success, false, 'no thinking')
    assert.equal(
      StreamEvent.safeParse({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking' } }).success,
      false,
    )
    assert.equal(StreamEvent.safeParse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta' } }).success, false)
    assert.equal(StreamEvent.safeParse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta' } }).success, false)
    const unsigned = events(
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: 'x', signature: '' } },
      { type: 'content_block_stop', index: 0 },
      ...text,
      ...stop,
    )
    assert.throws(() => unsigned.result(prices, 'x', false), { code: 'model_invalid_response', message: /without its signature/ })
    const answer = events(start, ...text.slice(0, 1))
    assert.throws(
      () => answer.add(StreamEvent.parse({ type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 's' } })),
      {
        code: 'model_invalid_response',
        message: /signature_delta for block 1, which is a text block/,
      },
    )
  })
})
