import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkVectors, dotRow } from 'cordage'
import plugin, { LocalEmbeddings, type SentenceModel } from '../index.ts'

const config = plugin.manifest.config!({})

test('the shipped model embeds offline, one 512-number vector per text, and close meanings are closer', async () => {
  const service = new LocalEmbeddings('use-lite@1', 512, async () => (await import('../use-model.ts')).sentenceEncoder(), config)
  const texts = ['refund a customer payment', 'give the buyer their money back', 'list the pods of a kubernetes cluster']
  const vectors = checkVectors(await service.embed(texts), texts.length, 512, 'embeddings-local')
  const [refund, moneyBack, pods] = vectors
  const cos = (a: Float32Array, b: Float32Array) => dotRow(a, b, 0)
  assert.ok(
    cos(refund, moneyBack) > cos(refund, pods) + 0.1,
    `refund~money back ${cos(refund, moneyBack)} vs refund~pods ${cos(refund, pods)}`,
  )
})

class CountingModel implements SentenceModel {
  calls: string[][] = []
  async embed(texts: string[]) {
    this.calls.push(texts)
    return texts.map((t) => [t.length, 1, 0])
  }
}

test('texts are cut to maxChars, repeated texts embedded once, and cached texts not again', async () => {
  const model = new CountingModel()
  const service = new LocalEmbeddings('m', 3, async () => model, plugin.manifest.config!({ maxChars: 16, batchSize: 2 }))
  const long = 'x'.repeat(100)
  const out = await service.embed(['a', long, 'a', 'bb'])
  assert.deepEqual(
    out.map((v) => v[0]),
    [1, 16, 1, 2],
  )
  assert.deepEqual(model.calls, [['a', 'x'.repeat(16)], ['bb']], 'batches of two, duplicates once')
  await service.embed(['bb', 'ccc'])
  assert.deepEqual(model.calls.at(-1), ['ccc'], 'only the new text reaches the model')
})

test('the cache is bounded and drops the least recently used text; 0 turns it off', async () => {
  const model = new CountingModel()
  const service = new LocalEmbeddings('m', 3, async () => model, plugin.manifest.config!({ cacheSize: 2 }))
  await service.embed(['a', 'b'])
  await service.embed(['a']) // a is now the most recent
  await service.embed(['c']) // drops b
  model.calls = []
  await service.embed(['a', 'b'])
  assert.deepEqual(model.calls, [['b']])
  const off = new LocalEmbeddings('m', 3, async () => model, plugin.manifest.config!({ cacheSize: 0 }))
  model.calls = []
  const out = await off.embed(['z', 'z'])
  await off.embed(['z'])
  assert.equal(out.length, 2)
  assert.deepEqual(model.calls, [['z'], ['z']])
})

test('an aborted signal stops between batches with `cancelled`', async () => {
  const model = new CountingModel()
  const service = new LocalEmbeddings('m', 3, async () => model, plugin.manifest.config!({ batchSize: 1 }))
  const controller = new AbortController()
  controller.abort()
  await assert.rejects(service.embed(['a', 'b'], { signal: controller.signal }), { code: 'cancelled' })
  assert.equal(model.calls.length, 0)
})

test('the config refuses what would make no sense, naming the key', () => {
  assert.throws(() => plugin.manifest.config!({ batchSize: 0 }))
  assert.throws(() => plugin.manifest.config!({ maxChars: 4 }))
})

test('two calls at once each get their own vectors, with the cache off or too small for them', async () => {
  for (const cacheSize of [0, 1]) {
    const model = new CountingModel()
    const slow: SentenceModel = {
      embed: async (texts) => {
        await new Promise((r) => setTimeout(r, 5))
        return model.embed(texts)
      },
    }
    const service = new LocalEmbeddings('m', 3, async () => slow, plugin.manifest.config!({ cacheSize, batchSize: 1 }))
    const [a, b] = await Promise.all([service.embed(['a', 'bbb']), service.embed(['cc', 'dddd'])])
    assert.deepEqual(
      [...a, ...b].map((v) => v?.[0]),
      [1, 3, 2, 4],
      `cacheSize ${cacheSize}`,
    )
  }
})
