/**
 * The model's token counter, end to end: the support desk on model-openai and model-anthropic, against
 * the scripted provider server on loopback. With a known OpenAI model, the projection is counted by its
 * tokenizer (o200k_base); with Anthropic, by the estimate scaled by the input tokens the API reports.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { readService, type ContextMessage, type ModelService, type RunEvent } from 'cordage'
import { CalibratedCounter } from '../core/kit/token-calibration.ts'
import { estimateTokens } from '../core/kit/tokens.ts'
import { refundAnswer } from './helpers.ts'
import { adapterDesk, Adapters, type AdapterDesk } from './servers/adapter-desk.ts'
import type { ScriptedReply } from './servers/provider-server.ts'

let desk: AdapterDesk | undefined
afterEach(async () => {
  await desk?.close()
  desk = undefined
})

const [openai, anthropic] = Adapters
const replies = (input: number): ScriptedReply[] => [
  { toolCalls: [{ name: 'lookup_policy', args: { topic: 'refunds' } }], usage: { input, output: 10 } },
  { text: refundAnswer, usage: { input, output: 10 } },
]

async function contexts(d: AdapterDesk, task?: string): Promise<RunEvent<'step/context'>[]> {
  const state = await d.agent.run(task)
  assert.equal(state.status, 'COMPLETED', state.reason)
  return (await d.events(state.runId)).filter((e): e is RunEvent<'step/context'> => e.type === 'step/context')
}

/** The first step's projection as context-basic builds it: the system prompt and the task. */
function firstProjection(d: AdapterDesk): ContextMessage[] {
  return d.server.requests[0].body.messages as ContextMessage[]
}

describe('token counter', () => {
  it('counts an OpenAI model by its tokenizer: the step/context figure is o200k_base, not the estimate', async () => {
    desk = await adapterDesk(openai, replies(100), { model: 'gpt-4.1-mini' })
    const model = readService<ModelService>(desk.agent.ctx, 'model')!.value
    assert.equal(model.tokens?.name, 'o200k_base')
    // A task in Chinese: the estimate counts it higher than o200k_base does, so the figure tells which counted.
    const [first] = await contexts(desk, '损坏的商品可以在收货后多少天内退款？请引用政策来源。')
    // Chat Completions sends the projection's texts as they are: system prompt, then the task.
    const texts = (firstProjection(desk) as unknown as { content: string }[]).map((m) => m.content)
    assert.equal(texts.length, 2)
    const byTokenizer = texts.reduce((n, t) => n + 4 + countTokens(t), 0)
    assert.equal(first.data.tokens, byTokenizer)
    assert.notEqual(
      first.data.tokens,
      texts.reduce((n, t) => n + 4 + estimateTokens(t), 0),
      'the estimate would count otherwise',
    )
  })

  it('counts a model it does not know, and any model told to, by the estimate calibrated on reported usage', async () => {
    desk = await adapterDesk(openai, replies(100), { model: 'llama3.1', tokenizer: 'o200k_base' })
    assert.equal(readService<ModelService>(desk.agent.ctx, 'model')!.value.tokens?.name, 'o200k_base', 'told to')
    await desk.close()
    desk = await adapterDesk(openai, replies(100), { model: 'llama3.1' })
    assert.equal(readService<ModelService>(desk.agent.ctx, 'model')!.value.tokens?.name, 'estimate calibrated')
  })

  it("scales Anthropic's count by what the API reports: a provider counting 2.5 times the estimate, from the second step on", async () => {
    desk = await adapterDesk(anthropic, replies(0))
    const plain = await contexts(desk)
    await desk.close()
    // The server reports far more input tokens than the estimate of each request: the scale reaches its bound, 2.5.
    desk = await adapterDesk(anthropic, replies(100_000))
    const scaled = await contexts(desk)
    const counter = readService<ModelService>(desk.agent.ctx, 'model')!.value.tokens as CalibratedCounter
    assert.equal(counter.name, 'estimate calibrated')
    assert.equal(counter.factor, 2.5)
    assert.equal(scaled[0].data.tokens, plain[0].data.tokens, 'the first step is counted before any report')
    const ratio = scaled[1].data.tokens / plain[1].data.tokens
    // Below 2.5: the four tokens of each message's frame are not scaled.
    assert.ok(ratio > 2 && ratio <= 2.5, `step 2 counted ${scaled[1].data.tokens} against ${plain[1].data.tokens}: ratio ${ratio}`)
  })
})
