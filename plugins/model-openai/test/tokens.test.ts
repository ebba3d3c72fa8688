/**
 * tokens.ts: which encoding an OpenAI model name gets, and the counter that loads it. The plugin wired
 * to a server is in test/token-counter.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { chosenEncoding, encodingOf, tokenizer } from '../tokens.ts'

describe('model-openai tokens', () => {
  it('knows the encoding of the OpenAI families by name, fine-tuned ones by their base, and no other', () => {
    for (const name of [
      'gpt-4o',
      'gpt-4o-mini-2024-07-18',
      'chatgpt-4o-latest',
      'gpt-4.1-mini',
      'gpt-5',
      'gpt-5.2-codex',
      'o1',
      'o3-mini',
      'o4-mini',
      'gpt-oss-20b',
      'ft:gpt-4o-mini-2024-07-18:org::abc',
    ])
      assert.equal(encodingOf(name), 'o200k_base', name)
    for (const name of ['gpt-4', 'gpt-4-turbo', 'gpt-4-0613', 'gpt-3.5-turbo']) assert.equal(encodingOf(name), 'cl100k_base', name)
    for (const name of ['llama3.1', 'deepseek-chat', 'qwen2.5-coder', 'o1x', 'gpt-40', 'mistral-large'])
      assert.equal(encodingOf(name), undefined, name)
  })

  it('lets the config choose: an encoding, the estimate, or auto by name', () => {
    assert.equal(chosenEncoding('auto', 'gpt-4.1'), 'o200k_base')
    assert.equal(chosenEncoding('estimate', 'gpt-4.1'), undefined)
    assert.equal(chosenEncoding('cl100k_base', 'llama3.1'), 'cl100k_base')
  })

  it('counts with the encoding it names, and counts special-token text as text instead of throwing', async () => {
    const o200k = await tokenizer('o200k_base')
    const cl100k = await tokenizer('cl100k_base')
    assert.equal(o200k.name, 'o200k_base')
    assert.equal(o200k.count('Hello, world!'), 4)
    // The two encodings cut CJK differently: o200k_base has many two-character tokens.
    assert.equal(o200k.count('退款期限是多久'), 4)
    assert.equal(cl100k.count('退款期限是多久'), 8)
    assert.ok(o200k.count('a <|endoftext|> b') > 3, 'the marker is counted as the characters it is made of')
  })
})
