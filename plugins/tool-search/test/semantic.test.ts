import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { definePlugin, defineTool, readService, type EmbeddingsService } from 'cordage'
import { plug } from '../../../test/plug.ts'
import plugin, { type ToolSearch } from '../index.ts'
import { ExactBelow, fuse, SemanticIndex } from '../semantic-index.ts'
import { TopK } from '../top-k.ts'
import opsCatalog from './fixtures/ops-catalog/index.ts'

/**
 * A deterministic embeddings provider: one dimension per concept, a text's vector counts the words of
 * each concept it holds. "money back" and "refund" share a concept and no word, which is what a
 * semantic signal is for.
 */
const Concepts = [
  ['refund', 'money', 'back', 'reimburse'],
  ['deploy', 'release', 'ship', 'rollout'],
  ['customer', 'client', 'buyer'],
  ['invoice', 'bill', 'statement'],
  ['draft', 'note', 'scratch'],
  ['status', 'health', 'progress'],
]
class ConceptEmbeddings implements EmbeddingsService {
  readonly dimensions = Concepts.length + 1
  calls: string[][] = []
  constructor(
    readonly model = 'concepts@1',
    private readonly answer?: (texts: readonly string[]) => Promise<ArrayLike<number>[]>,
  ) {}
  async embed(texts: readonly string[]) {
    this.calls.push([...texts])
    if (this.answer) return this.answer(texts)
    return texts.map((text) => {
      const words = text.toLowerCase().split(/[^a-z]+/)
      // The last dimension keeps every vector non-zero.
      return [...Concepts.map((c) => words.filter((w) => c.includes(w)).length), 0.01]
    })
  }
}

function provider(service: EmbeddingsService) {
  return definePlugin({ name: 'test-embeddings', version: '1.0.0', provides: { embeddings: '1.0.0' } }, (ctx) => {
    ctx.set('embeddings', service)
  })
}

async function searchWith(service: EmbeddingsService | undefined, config: Record<string, unknown> = {}) {
  const { ctx } = await plug(plugin, config)
  if (service) await plug(provider(service), {}, ctx)
  await plug(opsCatalog, {}, ctx)
  const tools = readService<ToolSearch>(ctx, 'tools')!.value
  await tools.settled()
  return { ctx, tools }
}

const namesOf = (listings: { name: string }[]) => listings.map((l) => l.name)

describe('tool-search: ranking by meaning (embeddings)', () => {
  it('finds a tool that shares no word with the query, which BM25 alone cannot', async () => {
    const query = 'give the buyer their money back'
    const { tools: plain } = await searchWith(undefined)
    assert.ok(!namesOf(await plain.search(query, 3)).includes('billing__refund_payment'), 'BM25 alone misses it')
    const embeddings = new ConceptEmbeddings()
    const { tools } = await searchWith(embeddings)
    assert.equal(namesOf(await tools.search(query, 3))[0], 'billing__refund_payment')
    // Embedded once, in one batch, with the words of the name and namespace before the description.
    assert.equal(embeddings.calls[0].length, 9) // search_tools and the eight ops tools
    assert.ok(embeddings.calls[0].includes('billing refund payment: Refund a card payment, in full or in part.'))
  })

  it('keeps the index in step with the registry: a removed tool is never listed, a new one is embedded', async () => {
    const embeddings = new ConceptEmbeddings()
    const { ctx, tools } = await searchWith(embeddings)
    const { fork } = await plug(
      definePlugin({ name: 'extra', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
        c.tools.register(
          defineTool({
            name: 'payments__reimburse',
            description: 'Reimburse a client.',
            input: z.object({}),
            sideEffect: 'external',
            run: () => ({ output: 'ok' }),
          }),
        )
      }),
      {},
      ctx,
    )
    const before = await tools.settled()
    assert.equal(before.waiting, 0)
    assert.ok(namesOf(await tools.search('money back for the client', 5)).includes('payments__reimburse'))
    fork.dispose()
    assert.ok(!namesOf(await tools.search('money back for the client', 5)).includes('payments__reimburse'))
    assert.equal((await tools.settled()).embedded, before.embedded - 1)
  })

  it('ranks by words alone when the provider fails, answers the wrong shape, or is too slow, within the time limit', async () => {
    const query = 'refund a payment'
    const { tools: plain } = await searchWith(undefined)
    const expected = namesOf(plain.rank(query, 5))
    const failing: [string, EmbeddingsService][] = [
      ['throws', new ConceptEmbeddings('x@1', async () => Promise.reject(new Error('provider down')))],
      ['wrong length', new ConceptEmbeddings('x@1', async (texts) => texts.map(() => [1, 2]))],
      ['one vector short', new ConceptEmbeddings('x@1', async (texts) => texts.slice(1).map(() => [1, 0, 0, 0, 0, 0, 1]))],
      ['NaN', new ConceptEmbeddings('x@1', async (texts) => texts.map(() => [Number.NaN, 0, 0, 0, 0, 0, 1]))],
      ['never answers', new ConceptEmbeddings('x@1', () => new Promise(() => {}))],
    ]
    for (const [name, service] of failing) {
      const { ctx } = await plug(plugin, { semantic: { timeoutMs: 50 } })
      await plug(provider(service), {}, ctx)
      await plug(opsCatalog, {}, ctx)
      const tools = readService<ToolSearch>(ctx, 'tools')!.value
      // A provider that never answers would leave this await pending and the test to time out.
      assert.deepEqual(namesOf(await tools.search(query, 5)), expected, name)
    }
  })

  it('re-embeds everything when the provider changes model, and never compares vectors of two models', async () => {
    const first = new ConceptEmbeddings('concepts@1')
    const index = new SemanticIndex(() => current, { batch: 100, onError: (e) => assert.fail(String(e)) })
    let current: EmbeddingsService = first
    index.add({ name: 'billing__refund_payment', description: 'Refund a card payment.' })
    index.add({ name: 'deploy__release_prod', description: 'Deploy a build.' })
    await index.settle()
    assert.equal(index.size, 2)
    // Same concepts, other order: a vector of one space read in the other would rank deploy first.
    const second = new ConceptEmbeddings('reversed@1', async (texts) =>
      (await new ConceptEmbeddings().embed(texts)).map((v) => Array.from(v).reverse()),
    )
    current = second
    const signal = new AbortController().signal
    const vector = await index.queryVector('money back', signal)
    assert.ok(vector)
    assert.equal(index.size, 0, 'old vectors dropped')
    await index.settle()
    assert.equal(index.size, 2)
    assert.equal(index.nearest(vector, 1)[0].name, 'billing__refund_payment')
    assert.deepEqual(second.calls[1].sort(), ['billing refund payment: Refund a card payment.', 'deploy release prod: Deploy a build.'])
  })

  it('the first search after a catalogue arrives waits for its embedding, within timeoutMs', async () => {
    const slow = new ConceptEmbeddings('concepts@1', async (texts) => {
      await new Promise((r) => setTimeout(r, 50))
      return new ConceptEmbeddings().embed(texts)
    })
    const { ctx } = await plug(plugin, {})
    await plug(provider(slow), {}, ctx)
    await plug(opsCatalog, {}, ctx)
    const tools = readService<ToolSearch>(ctx, 'tools')!.value
    // No settled() first: the search itself waits for the catalogue.
    assert.equal(namesOf(await tools.search('give the buyer their money back', 3))[0], 'billing__refund_payment')
  })

  it('refuses a semantic config that makes no sense, naming the key', () => {
    for (const [semantic, key] of [
      [{ k: 0 }, /k/],
      [{ weight: -1 }, /weight/],
      [{ timeoutMs: 0 }, /timeoutMs/],
      [{ candidates: 0 }, /candidates/],
      [{ enabled: 'yes' }, /enabled/],
    ] as const) {
      assert.throws(() => plugin.manifest.config!({ semantic }), key, JSON.stringify(semantic))
    }
  })

  it('can be turned off in the config', async () => {
    const embeddings = new ConceptEmbeddings()
    const { tools } = await searchWith(embeddings, { semantic: { enabled: false } })
    assert.deepEqual(
      namesOf(await tools.search('give the buyer their money back', 3)),
      namesOf(tools.rank('give the buyer their money back', 3)),
    )
    assert.equal(embeddings.calls.length, 0)
  })
})

describe('tool-search: the vector index and the fusion', () => {
  it('nearest() is the exact top k by cosine, with the filter applied', async () => {
    let seed = 7
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1
    const vectors = new Map<string, number[]>()
    const service: EmbeddingsService = {
      model: 'random@1',
      dimensions: 16,
      embed: async (texts) => texts.map((t) => vectors.get(t) ?? vectors.set(t, Array.from({ length: 16 }, random)).get(t)!),
    }
    const index = new SemanticIndex(() => service, { batch: 50, onError: (e) => assert.fail(String(e)) })
    for (let i = 0; i < 300; i++) index.add({ name: `t${i}`, description: `tool ${i}` })
    await index.settle()
    for (let i = 0; i < 300; i += 3) index.remove(`t${i}`)
    const query = (await index.queryVector('some query', new AbortController().signal))!
    const accept = (name: string) => !name.endsWith('7')
    const norm = (v: number[]) => Math.hypot(...v)
    const cosine = (name: string) => {
      const v = vectors.get(`t${name.slice(1)}: tool ${name.slice(1)}`)!
      return v.reduce((s, x, d) => s + x * query[d], 0) / norm(v)
    }
    const expected = [...Array(300).keys()]
      .filter((i) => i % 3 !== 0)
      .map((i) => `t${i}`)
      .filter(accept)
      .sort((a, b) => cosine(b) - cosine(a))
      .slice(0, 10)
    assert.deepEqual(
      index.nearest(query, 10, accept).map((h) => h.name),
      expected,
    )
  })

  it('above ExactBelow vectors, the sketch scan still finds the true nearest (clusters of near duplicates)', async () => {
    let seed = 11
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1
    const dims = 128
    const centers = Array.from({ length: 300 }, () => Array.from({ length: dims }, random))
    const vectorOf = new Map<string, number[]>()
    centers.forEach((c, i) => {
      // Ten tenants of one tool: the same meaning with a little noise each.
      for (let j = 0; j < 10; j++)
        vectorOf.set(
          `tool ${i * 10 + j}`,
          c.map((x) => x + random() * 0.15),
        )
    })
    const service: EmbeddingsService = {
      model: 'clusters@1',
      dimensions: dims,
      embed: async (texts) => texts.map((t) => vectorOf.get(t.slice(t.indexOf(': ') + 2)) ?? centers[Number(t.match(/\d+/)![0]) % 300]),
    }
    const index = new SemanticIndex(() => service, { batch: 500, onError: (e) => assert.fail(String(e)) })
    for (let i = 0; i < 3000; i++) index.add({ name: `t${i}`, description: `tool ${i}` })
    await index.settle()
    assert.ok(index.size >= ExactBelow)
    const signal = new AbortController().signal
    let found = 0
    for (let c = 0; c < 300; c += 7) {
      const query = (await index.queryVector(`center ${c}`, signal))!
      const got = new Set(index.nearest(query, 10).map((h) => h.name))
      for (let j = 0; j < 10; j++) if (got.has(`t${c * 10 + j}`)) found++
    }
    assert.ok(found / (43 * 10) >= 0.99, `found ${found} of ${43 * 10} true neighbours`)
  })

  it('TopK keeps the k best of a stream, best first, ties by row', () => {
    let seed = 5
    const random = () => (seed = (seed * 16807) % 2147483647) % 1000
    for (const k of [1, 3, 50]) {
      const scores = Array.from({ length: 500 }, random)
      const top = new TopK(k)
      scores.forEach((score, row) => {
        if (score > top.floor || top.size < k) top.push(row, score)
      })
      const expected = scores
        .map((score, row) => ({ row, score }))
        .sort((a, b) => b.score - a.score || a.row - b.row)
        .slice(0, k)
      assert.deepEqual(
        top.sorted().map((h) => h.score),
        expected.map((h) => h.score),
      )
    }
  })

  it('fuse() adds 1 / (k + rank) from each list, the semantic one weighted', () => {
    const fused = fuse([{ name: 'a' }, { name: 'b' }], [{ name: 'b' }, { name: 'c' }], 10, 2)
    assert.deepEqual(
      fused.map((h) => h.name),
      ['b', 'c', 'a'],
    )
    assert.ok(Math.abs(fused[0].score - (1 / 12 + 2 / 11)) < 1e-12)
  })
})
