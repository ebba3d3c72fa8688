/**
 * core/kit/tokens.ts and token-calibration.ts: the estimate, the counter context plugins pick for an
 * agent (its model's, checked, or the estimate), and the counter calibrated on reported usage.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ModelRequest, ModelService } from '../../core/contracts/services/model.ts'
import { CalibratedCounter, calibrated, DefaultCalibration, requestTokens } from '../../core/kit/token-calibration.ts'
import {
  counterOf,
  EstimateCounter,
  estimateTokens,
  estimateWith,
  MaxTokensPerUnit,
  MaxTokensSlack,
  maxTokensFor,
  messageTokens,
  Rates,
} from '../../core/kit/tokens.ts'

const decision = { kind: 'final' as const, text: 'ok' }

describe('estimateTokens', () => {
  it('counts a short word with its space as one token and a long one as more', () => {
    assert.equal(estimateTokens('the refund window'), 3)
    assert.equal(estimateTokens('internationalisation'), 3, '20 letters: one, and one per ten after the ninth, rounded up')
  })

  it('counts digits in pairs, punctuation in runs of four, CJK at three tokens for four characters', () => {
    assert.equal(estimateTokens('2026'), 2)
    assert.equal(estimateTokens('"},{"'), 2)
    assert.equal(estimateTokens('损坏的商品'), 4)
  })

  it('is the estimate at the fitted rates, and counts nothing for nothing', () => {
    assert.equal(estimateTokens(''), 0)
    const text = '{"orders":[{"id":"ord_1","total":12.5}]}'
    assert.equal(estimateTokens(text), estimateWith(text, Rates))
    assert.notEqual(estimateWith(text, { ...Rates, punctuation: 1 }), estimateTokens(text), 'the rates are used')
  })
})

describe('counterOf', () => {
  it('is the estimate when there is no model or it has no counter', () => {
    assert.equal(counterOf(undefined), EstimateCounter)
    assert.equal(
      counterOf({ respond: async () => ({ decision, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } }) }),
      EstimateCounter,
    )
  })

  it("is the model's counter, the same object at every step", () => {
    const model = {
      respond: async () => ({ decision, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } }),
      tokens: { name: 'chars', count: (t: string) => t.length },
    }
    const counter = counterOf(model)
    assert.equal(counter.count('abcd'), 4)
    assert.equal(counter.name, 'chars')
    assert.equal(counterOf(model), counter)
    assert.equal(messageTokens({ role: 'user', text: 'abcd', source: 1 }, counter), 8)
  })

  it('fails closed on a counter that is not one, or that counts something other than a non-negative integer', () => {
    const respond = async () => ({ decision, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } })
    assert.throws(() => counterOf({ respond, tokens: { name: 'x' } } as unknown as ModelService), {
      code: 'internal_error',
      message: /not a token counter/,
    })
    for (const bad of [-1, 1.5, Number.NaN, '3']) {
      const counter = counterOf({ respond, tokens: { name: 'bad', count: () => bad as number } })
      assert.throws(() => counter.count('text'), {
        code: 'internal_error',
        message: /token counter bad counted .* not a non-negative integer/,
      })
    }
  })

  it('fails closed on a count no tokenizer emits for the text (1e300), and takes one up to the bound', () => {
    const respond = async () => ({ decision, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } })
    const counting = (n: number) => counterOf({ respond, tokens: { name: 'huge', count: () => n } })
    assert.throws(() => counting(1e300).count('text'), {
      code: 'internal_error',
      message: /token counter huge counted 1e\+300 tokens for a text of 4 characters: more than the 48 /,
    })
    assert.equal(maxTokensFor('text'), 4 * MaxTokensPerUnit + MaxTokensSlack)
    assert.equal(counting(48).count('text'), 48)
    assert.throws(() => counting(49).count('text'), { code: 'internal_error', message: /huge counted 49 tokens/ })
    assert.throws(() => counting(17).count(''), { code: 'internal_error', message: /huge counted 17 tokens for a text of 0 characters/ })
  })

  it('takes the calibrated estimate at its highest scale on the text it counts most for (the bound is not too tight)', () => {
    const counter = new CalibratedCounter()
    for (let i = 0; i < 20; i++) counter.observe(1000, 100_000)
    assert.equal(counter.factor, DefaultCalibration.max)
    const respond = async () => ({ decision, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } })
    const checked = counterOf({ respond, tokens: counter })
    // Characters outside ASCII and CJK count most in the estimate (2 each), single digits and punctuation 1.
    for (const text of ['é', 'ДДДДДДДДДД', '7', '{', 'ÿ'.repeat(5000), '🙂🙂']) assert.equal(checked.count(text), counter.count(text))
  })
})

describe('CalibratedCounter', () => {
  it('starts at the estimate and scales it by the ratio of reported to estimated tokens', () => {
    const counter = new CalibratedCounter()
    assert.equal(counter.count('the refund window'), 3)
    assert.equal(counter.revision, 0)
    counter.observe(1000, 1300)
    assert.equal(counter.factor, 1.3)
    assert.equal(counter.revision, 1)
    assert.equal(counter.count('the refund window'), 4, 'ceil(3 × 1.3)')
    assert.equal(counter.name, 'estimate calibrated')
  })

  it('takes the ratio of the sums over the last calls, in steps of 5%, and moves its revision only when the scale moves', () => {
    const counter = new CalibratedCounter(EstimateCounter, { calls: 2 })
    counter.observe(1000, 1000)
    assert.equal(counter.revision, 0, 'a ratio of 1 is the start: nothing moved')
    counter.observe(1000, 1210)
    assert.equal(counter.factor, 1.1, '2210 / 2000 = 1.105, to 1.1')
    assert.equal(counter.count('word '.repeat(10)), 11, 'ten tokens scaled by 1.1, not rounded up by floating point')
    counter.observe(1000, 1190)
    assert.equal(counter.factor, 1.2, 'the first call has left the window: 2400 / 2000')
    const revision = counter.revision
    counter.observe(1000, 1200)
    assert.equal(counter.revision, revision, '1.195 is still 1.2')
  })

  it('is bounded, and ignores calls too small to tell or without a usable report', () => {
    const counter = new CalibratedCounter()
    counter.observe(1000, 0)
    counter.observe(1000, Number.NaN)
    counter.observe(50, 500)
    assert.equal(counter.factor, 1)
    counter.observe(1000, 100_000)
    assert.equal(counter.factor, 2.5)
    const low = new CalibratedCounter()
    low.observe(1000, 1)
    assert.equal(low.factor, 0.5)
  })
})

describe('calibrated', () => {
  it("learns from each answer's reported input tokens against the estimate of the request it answered", async () => {
    const request: ModelRequest = {
      runId: 'r',
      stepId: 's1',
      stepIndex: 1,
      messages: [{ role: 'user', text: 'word '.repeat(400), source: 2 }],
      tools: [{ name: 'lookup', description: 'Find a policy', inputSchema: { type: 'object' } }],
      signal: new AbortController().signal,
    }
    const estimated = requestTokens(request)
    assert.equal(estimated, 4 + 400 + estimateTokens('lookup Find a policy {"type":"object"}'))
    const seen: ModelRequest[] = []
    const model = calibrated({
      respond: async (r) => {
        seen.push(r)
        return { decision, usage: { inputTokens: Math.round(estimated * 1.5), outputTokens: 1, costUsd: 0 } }
      },
    })
    assert.equal(model.tokens!.count('word '.repeat(10)), 10)
    const response = await model.respond(request)
    assert.deepEqual(response.decision, decision)
    assert.equal(seen[0], request, 'the request goes through unchanged')
    assert.equal(model.tokens!.count('word '.repeat(10)), 15)
    assert.equal(counterOf(model).revision, 1)
  })
})
