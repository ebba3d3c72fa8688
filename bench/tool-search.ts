/**
 * The tool-search bench: ranking quality on the labelled evaluation set, index build time and query
 * latency up to 10,000 tools, and the tokens of tool schemas the model sees with deferred loading
 * against exposing every tool. Measures only; nothing here asserts a time.
 *
 *   node --import tsx bench/tool-search.ts [--quick]
 *
 * The data and how it was made: bench/tool-search/README.md.
 */
import { Context } from 'cordis'
import { createAgentContext, definePlugin, emptyState, readService, type RunState, type Tool, type ToolView } from 'cordage'
import embeddingsLocal, { LocalEmbeddings } from '../plugins/embeddings-local/index.ts'
import { Dimensions, ModelId, sentenceEncoder } from '../plugins/embeddings-local/use-model.ts'
import plugin, { SearchIndex, type ToolSearch, type Ranking } from '../plugins/tool-search/index.ts'
import { runSearch, searchTool, type Searcher } from '../plugins/tool-search/search-tool.ts'
import { SemanticIndex } from '../plugins/tool-search/semantic-index.ts'
import { loadMetaTool, loadQueries, loadRegistry, score, type LabeledQuery, type RegistryTool } from './tool-search/eval.ts'
import { originalOf, scaleRegistry } from './tool-search/scale.ts'
import { toolOf } from './tool-search/tools.ts'

const quick = process.argv.includes('--quick')
const registry = loadRegistry()
const queries = loadQueries()
const metatool = loadMetaTool()
const K = 5
/**
 * One embeddings service for every agent of the bench, so a description is embedded once however many
 * registries hold it (its cache is per text). The same class embeddings-local provides.
 */
const shared = new LocalEmbeddings(ModelId, Dimensions, sentenceEncoder, embeddingsLocal.manifest.config!({ cacheSize: 200_000 }))
const sharedEmbeddings = definePlugin({ name: 'bench-embeddings', version: '1.0.0', provides: { embeddings: '1.0.0' } }, (c) => {
  c.set('embeddings', shared)
})

async function main() {
  const spaces = new Set(registry.map((t) => t.name.split('__')[0])).size
  const dev = queries.filter((q) => q.split === 'dev').length
  console.log(`tool-search bench${quick ? ' (--quick: fewer timing passes)' : ''}`)
  console.log(
    `evaluation set: ${fmt(registry.length)} tools in ${spaces} namespaces; ${queries.length} labelled queries (${dev} dev, ${queries.length - dev} test)\n`,
  )
  await quality("the project's own set", registry, queries)
  console.log(`MetaTool (public): ${metatool.source}, commit ${metatool.commit.slice(0, 7)}; ${metatool.licence}.`)
  await quality('MetaTool', metatool.tools, metatool.queries)
  const scales = [await scale(registry.length), await scale(10_000)]
  latencyTable(scales)
  await embeddingCost()
  await tokens(scales.at(-1)!)
}

// ── ranking quality ──────────────────────────────────────────────────────────────────────────────

async function quality(name: string, tools: { name: string; description: string; tags?: string[] }[], labelled: LabeledQuery[]) {
  const variants: [string, Partial<Ranking>][] = [
    ['BM25, tool-search defaults', {}],
    ['  without synonyms', { synonyms: false }],
    ['  without the coverage bonus', { coverage: 0 }],
    ['plain BM25: exact terms only', { synonyms: false, fuzzy: 0, prefix: false, coverage: 0 }],
  ]
  const row = (label: string, rank: (q: string) => string[] | Promise<string[]>) => async () => {
    const ranked = new Map<string, string[]>()
    for (const q of labelled) ranked.set(q.query, await rank(q.query))
    const of = (qs: LabeledQuery[]) => score(qs, (q) => ranked.get(q)!, K)
    const all = of(labelled)
    const split = (s: LabeledQuery['split']) => of(labelled.filter((q) => q.split === s))
    return [label, f3(all.recall), `${f3(split('dev').recall)} / ${f3(split('test').recall)}`, f3(all.success), f3(all.mrr)]
  }
  const rows: string[][] = []
  for (const [label, ranking] of variants) {
    const index = new SearchIndex(ranking)
    index.addAll(tools)
    rows.push(await row(label, (q) => index.search(q, { limit: 20 }).map((h) => h.name))())
  }
  const hybrid = await searchService(tools.map(toolOfPlain), true)
  rows.push(await row('hybrid: BM25 + use-lite vectors (RRF)', async (q) => (await hybrid.search(q, 20)).map((l) => l.name))())
  const alone = new SemanticIndex(() => shared, { batch: 64, onError: (e) => console.error(e) })
  for (const tool of tools) alone.add(tool)
  await alone.settle()
  const signal = new AbortController().signal
  rows.push(
    await row('  vectors alone (cosine)', async (q) => alone.nearest((await alone.queryVector(q, signal))!, 20).map((h) => h.name))(),
  )
  const dev = labelled.filter((q) => q.split === 'dev').length
  console.log(
    `Ranking quality on ${name}: ${fmt(tools.length)} tools, ${fmt(labelled.length)} queries (${dev} dev, ${labelled.length - dev} test), top ${K}`,
  )
  table(['ranking', `recall@${K}`, 'dev / test', `success@${K}`, 'MRR'], rows)
  console.log(`recall@${K}: expected tools found in the top ${K} / min(expected, ${K}), averaged over queries. success@${K}: queries with`)
  console.log(
    `at least one expected tool in the top ${K}. MRR: 1 / rank of the first expected tool (top 20), averaged. Only dev was read while tuning.\n`,
  )
}

/** A tool-search service (optionally with the shared embeddings) holding `tools`, embedded when it returns. */
async function searchService(tools: Tool[], vectors: boolean): Promise<ToolSearch> {
  const ctx = createAgentContext(new Context(), 'bench')
  if (vectors) ctx.plugin(sharedEmbeddings)
  // The first query waits for the model to load.
  const config = plugin.manifest.config!({ semantic: { timeoutMs: 60_000 } })
  ctx.plugin(plugin, config)
  ctx.plugin(
    definePlugin({ name: 'bench-catalog', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
      const service = c.tools
      for (const tool of tools) service.register(tool)
    }),
  )
  await new Promise((r) => setImmediate(r))
  const service = readService<ToolSearch>(ctx, 'tools')!.value
  if (vectors) {
    const { waiting } = await service.settled()
    if (waiting) throw new Error(`${waiting} tools were not embedded`)
  }
  return service
}

function toolOfPlain(entry: { name: string; description: string; tags?: string[] }): Tool {
  return toolOf({ sideEffect: 'none', tags: [], inputSchema: { type: 'object' }, ...entry } as RegistryTool)
}

// ── scale: registration, search and visible() through the real service ─────────────────────────

interface Scale {
  tools: RegistryTool[]
  buildMs: number
  bulkBuildMs: number
  query: number[]
  visible: number[]
  recall: number
  service: ToolSearch
  /** With vectors: seconds to embed the registry, search latencies (query vector cached), recall. */
  hybrid?: { embedS: number; query: number[]; recall: number }
}

async function scale(size: number): Promise<Scale> {
  const tools = scaleRegistry(registry, size)
  const built = tools.map(toolOf)
  const ctx = createAgentContext(new Context(), 'bench')
  ctx.plugin(plugin, plugin.manifest.config!({}))
  let buildMs = 0
  // Registration is what builds the index: one register() per tool, as plugins do when they start.
  ctx.plugin(
    definePlugin({ name: 'bench-catalog', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
      const t0 = performance.now()
      // Held once, as a plugin registering a catalogue would: each `c.tools` goes through cordis's
      // context proxy.
      const service = c.tools
      for (const tool of built) service.register(tool)
      buildMs = performance.now() - t0
    }),
  )
  await new Promise((r) => setImmediate(r))
  const service = readService<ToolSearch>(ctx, 'tools')!.value
  if (service.list().length !== size + 1) throw new Error(`expected ${size} tools and search_tools, found ${service.list().length}`)

  const bulk = new SearchIndex()
  const t0 = performance.now()
  bulk.addAll(tools)
  const bulkBuildMs = performance.now() - t0

  const passes = quick ? 2 : 10
  for (const q of queries) service.rank(q.query, K)
  const query: number[] = []
  for (let pass = 0; pass < passes; pass++) {
    for (const q of queries) {
      const s = performance.now()
      service.rank(q.query, K)
      query.push(performance.now() - s)
    }
  }

  // A step's visible set: search_tools plus five revealed tools. A new state each time, so no cache helps.
  const visible: number[] = []
  for (let i = 0; i < (quick ? 200 : 2000); i++) {
    const state: RunState = {
      ...emptyState(`run-${i}`),
      agent: 'bench',
      steps: 2,
      slices: {
        'tool-search': {
          revealed: tools
            .slice(i % 100, (i % 100) + 5)
            .map((t) => t.name)
            .concat(`x${i}`),
        },
      },
    }
    const s = performance.now()
    service.visible({ state })
    visible.push(performance.now() - s)
  }

  // Copies of a tool in other tenants count as that tool: a sanity check that ten times more
  // near-duplicates do not push the right tool out.
  const recall = score(queries, (q) => distinct(service.rank(q, 60).map((l) => originalOf(l.name))), K).recall
  const hybrid =
    quick && size > registry.length ? undefined : await hybridScale(built, size > registry.length ? Math.min(passes, 3) : passes)
  return { tools, buildMs, bulkBuildMs, query, visible, recall, service, hybrid }
}

/**
 * The same registry with vectors. The query's embedding is cached after the warm-up pass, so the
 * times are the ranking's: BM25, the scan of every vector and the fusion. What embedding a new query
 * costs is measured apart (embeddingCost), because it is the model's time, not the index's.
 */
async function hybridScale(built: Tool[], passes: number): Promise<Scale['hybrid']> {
  const t0 = performance.now()
  const service = await searchService(built, true)
  const embedS = (performance.now() - t0) / 1000
  const ranked = new Map<string, string[]>()
  for (const q of queries) ranked.set(q.query, distinct((await service.search(q.query, 60)).map((l) => originalOf(l.name))))
  const query: number[] = []
  for (let pass = 0; pass < passes; pass++) {
    for (const q of queries) {
      const s = performance.now()
      await service.search(q.query, K)
      query.push(performance.now() - s)
    }
  }
  return { embedS, query, recall: score(queries, (q) => ranked.get(q)!, K).recall }
}

/** What the model costs: one new query (no cache), and tools embedded in batches. */
async function embeddingCost() {
  const cold = new LocalEmbeddings(ModelId, Dimensions, sentenceEncoder, embeddingsLocal.manifest.config!({ cacheSize: 0 }))
  await cold.embed(['warm up'])
  const one: number[] = []
  for (const q of queries.slice(0, quick ? 20 : 100)) {
    const s = performance.now()
    await cold.embed([q.query])
    one.push(performance.now() - s)
  }
  const batch = registry.slice(0, 256).map((t) => t.description)
  const t0 = performance.now()
  await cold.embed(batch)
  const perTool = (performance.now() - t0) / batch.length
  console.log(`The embedding model (embeddings-local, ${ModelId}, ${Dimensions} dimensions, on the CPU in this process):`)
  console.log(`one new query p50 ${ms(q(one, 0.5))}, p95 ${ms(q(one, 0.95))}; tools in batches of 32: ${ms(perTool)} per tool.\n`)
}

function latencyTable(scales: Scale[]) {
  console.log('Scale: the tool-search service with every tool registered (each query run through rank(), as search_tools does)')
  table(
    ['tools', 'index build', 'bulk build', 'query p50', 'query p95', 'query p99', 'visible() p50', `recall@${K}`],
    scales.map((s) => [
      fmt(s.tools.length),
      ms(s.buildMs),
      ms(s.bulkBuildMs),
      ms(q(s.query, 0.5)),
      ms(q(s.query, 0.95)),
      ms(q(s.query, 0.99)),
      ms(q(s.visible, 0.5)),
      f3(s.recall),
    ]),
  )
  console.log(
    '\nThe same with vectors (hybrid search(); the query vector cached, so this is the ranking: BM25, the vector scan, the fusion)',
  )
  table(
    ['tools', 'embed registry', 'query p50', 'query p95', 'query p99', `recall@${K}`, 'vs BM25 p50'],
    scales
      .filter((s) => s.hybrid)
      .map((s) => [
        fmt(s.tools.length),
        `${s.hybrid!.embedS.toFixed(1)} s`,
        ms(q(s.hybrid!.query, 0.5)),
        ms(q(s.hybrid!.query, 0.95)),
        ms(q(s.hybrid!.query, 0.99)),
        f3(s.hybrid!.recall),
        `${(q(s.hybrid!.query, 0.5) / q(s.query, 0.5)).toFixed(2)}x`,
      ]),
  )
  console.log(
    `index build: ${fmt(scales.at(-1)!.tools.length)} register() calls through the service, as plugins make them; bulk build: the SearchIndex alone,\nwithout the service or cordis, for comparison.`,
  )
  console.log(
    `Above ${fmt(registry.length)} tools the registry holds tenant copies of the evaluation tools (github_eu__create_issue); recall@${K}`,
  )
  console.log(
    `there counts a copy as its original. ${queries.length} queries × ${quick ? 2 : 10} passes after one warm-up pass; Node ${process.version}.\n`,
  )
}

// ── tokens of what the model is shown ────────────────────────────────────────────────────────────

/** The documented estimate: characters / 4 of the JSON of what the model sees of a tool. */
function tokensOf(tools: ToolView[]): number {
  return tools.reduce(
    (n, t) => n + Math.ceil(JSON.stringify({ name: t.name, description: t.description, inputSchema: t.inputSchema }).length / 4),
    0,
  )
}

async function tokens(big: Scale) {
  const byName = new Map(registry.map((t) => [t.name, t]))
  const dummy: Searcher = { search: () => [], load: () => ({ found: [], missing: [] }), namespaces: () => [] }
  const meta = searchTool(dummy, { limit: K, maxLimit: 10 })
  const metaTokens = tokensOf([meta])
  // What a search costs and shows: the result text (an observation the model reads once), then the
  // schemas of the revealed tools, which stay in every later step's tool list.
  const small = new SearchIndex()
  small.addAll(registry)
  let revealed = 0
  let observation = 0
  for (const q of queries) {
    const searcher: Searcher = {
      ...dummy,
      search: (_run, query, limit) =>
        small.search(query, { limit }).map((h) => ({
          name: h.name,
          namespace: h.name.split('__')[0],
          summary: byName.get(h.name)!.description.split(/(?<=\.)\s/)[0],
          score: h.score,
        })),
    }
    const result = await runSearch(searcher, '', { query: q.query }, K)
    revealed += tokensOf((result.state!.add!.revealed as string[]).map((n) => byName.get(n)!))
    observation += Math.ceil(result.observation!.length / 4)
  }
  revealed /= queries.length
  observation /= queries.length
  const all = tokensOf(registry)
  const all10k = tokensOf(big.tools)
  const after = metaTokens + revealed
  console.log('Tokens of tool schemas per model request (chars / 4 of the JSON of name, description and inputSchema)')
  table(
    ['what the model is shown', 'tokens', 'vs all 1,010', 'vs all 10,000'],
    [
      [`every tool, ${fmt(registry.length)}`, fmt(all), '1.000', ''],
      [`every tool, ${fmt(big.tools.length)}`, fmt(all10k), '', '1.000'],
      ['deferred, before any search: search_tools', fmt(metaTokens), ratio(metaTokens, all), ratio(metaTokens, all10k)],
      [`deferred, after one search: search_tools + ${K} revealed (mean)`, fmt(Math.round(after)), ratio(after, all), ratio(after, all10k)],
    ],
  )
  console.log(`The search result itself (the listing, read once as an observation) adds ${Math.round(observation)} tokens on average.`)
  console.log(`Every further search adds up to ${K} schemas (~${Math.round(revealed)} tokens); revealed tools stay visible for the run.\n`)
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────────

function distinct(names: string[]): string[] {
  return [...new Set(names)]
}

function q(values: number[], quantile: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(quantile * sorted.length) - 1))]
}

function table(head: string[], rows: string[][]) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  console.log(line(head))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const row of rows) console.log(line(row))
}

const fmt = (n: number) => n.toLocaleString('en-US')
const f3 = (n: number) => n.toFixed(3)
const ms = (n: number) => (n >= 100 ? `${n.toFixed(0)} ms` : n >= 1 ? `${n.toFixed(1)} ms` : `${(n * 1000).toFixed(0)} µs`)
const ratio = (a: number, b: number) => (a / b).toFixed(4)

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
