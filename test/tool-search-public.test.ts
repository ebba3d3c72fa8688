/**
 * Tool search on data the project did not write: MetaTool's labelled queries (bench/tool-search/public),
 * through the real tool-search service with the real embeddings-local model. Only the test split is
 * scored here; its floors are below what the bench measured, so that a regression in the fusion, the
 * embedding text or the index fails, not the noise of one query.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Context } from 'cordis'
import { createAgentContext, definePlugin, readService } from 'cordage'
import embeddingsLocal from '../plugins/embeddings-local/index.ts'
import toolSearch, { type ToolSearch } from '../plugins/tool-search/index.ts'
import { loadMetaTool, score } from '../bench/tool-search/eval.ts'
import { toolOf } from '../bench/tool-search/tools.ts'

test('on MetaTool (public, held out), hybrid ranking finds more of the right tools than BM25 alone', async () => {
  const set = loadMetaTool()
  const held = set.queries.filter((q) => q.split === 'test')
  const ctx = createAgentContext(new Context(), 'public-set')
  ctx.plugin(embeddingsLocal, embeddingsLocal.manifest.config!({}))
  ctx.plugin(toolSearch, toolSearch.manifest.config!({ semantic: { timeoutMs: 60_000 } }))
  ctx.plugin(
    definePlugin({ name: 'metatool', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
      for (const t of set.tools) c.tools.register(toolOf({ ...t, sideEffect: 'none', tags: [], inputSchema: { type: 'object' } } as never))
    }),
  )
  await new Promise((r) => setImmediate(r))
  const tools = readService<ToolSearch>(ctx, 'tools')!.value
  const { embedded, waiting } = await tools.settled()
  assert.equal(waiting, 0)
  assert.equal(embedded, set.tools.length + 1)
  // Queries embedded in batches first (the model is faster so), then each search finds its vector cached.
  await readService<{ embed(t: string[]): Promise<unknown> }>(ctx, 'embeddings')!.value.embed(held.map((q) => q.query))
  const hybrid = new Map<string, string[]>()
  for (const q of held)
    hybrid.set(
      q.query,
      (await tools.search(q.query, 20)).map((l) => l.name),
    )
  const words = score(held, (q) => tools.rank(q, 20).map((l) => l.name))
  const both = score(held, (q) => hybrid.get(q)!)
  // The bench measured BM25 0.67 to 0.69 and hybrid 0.77 on this split.
  assert.ok(words.recall < 0.72, `BM25 recall@5 ${words.recall.toFixed(3)}: the set stopped being hard for words alone`)
  assert.ok(both.recall >= 0.74, `hybrid recall@5 ${both.recall.toFixed(3)}`)
  assert.ok(both.recall >= words.recall + 0.05, `hybrid ${both.recall.toFixed(3)} vs BM25 ${words.recall.toFixed(3)}`)
})
