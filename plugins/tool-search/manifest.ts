import { Schema } from 'cordis'
import type { Manifest, SideEffect } from 'cordage'

export interface Config {
  pinned: string[]
  pinnedTags: string[]
  preload: number
  limit: number
  maxLimit: number
  environment?: string
  deny: string[]
  agents: Record<string, { allow: string[]; deny: string[] }>
  phases: { until: number; tags: string[]; tools: string[]; sideEffects: SideEffect[] }[]
  ranking: {
    boost: { name: number; namespace: number; tags: number; description: number }
    fuzzy: number
    prefix: boolean
    synonyms: boolean
    synonymWeight: number
    coverage: number
  }
  semantic: {
    enabled: boolean
    weight: number
    k: number
    candidates: number
    timeoutMs: number
    batch: number
  }
}

const patterns = (text: string) => Schema.array(String).default([]).description(text)

export default {
  name: 'tool-search',
  version: '1.1.0',
  description:
    'The tool registry with deferred loading: the model sees a search_tools meta-tool and the tools it found, ranked by BM25 (fused with vectors when the agent has an embeddings service), filtered by environment, agent and phase.',
  provides: { tools: '1.0.0' },
  optional: { embeddings: '^1.0.0' },
  config: Schema.object({
    pinned: patterns('Name patterns (`*` matches any run of characters) of tools always visible, without a search.'),
    pinnedTags: patterns('Tools with any of these tags are always visible.'),
    preload: Schema.natural()
      .max(50)
      .default(0)
      .description("Also show this many tools ranked for the run's task from the first step (0: only pinned tools and search_tools)."),
    limit: Schema.natural()
      .min(1)
      .max(50)
      .default(5)
      .description('Tools a search lists (and reveals) when the model does not say how many.'),
    maxLimit: Schema.natural().min(1).max(50).default(10).description('The most tools one search may list.'),
    environment: Schema.string().description(
      'The environment the agent runs in. Tools tagged `env:<name>` for other environments only are hidden; untagged tools are everywhere.',
    ),
    deny: patterns('Name patterns of tools no agent sees. Visibility is not permission: policy still decides every call.'),
    agents: Schema.dict(
      Schema.object({
        allow: Schema.array(String).default(['*']).description('Name patterns this agent may see (search_tools is always allowed).'),
        deny: Schema.array(String).default([]).description('Name patterns this agent never sees.'),
      }),
    )
      .default({})
      .description("Per agent name (the preset's agent key): which tools it may see."),
    phases: Schema.array(
      Schema.object({
        until: Schema.natural().min(1).required().description('The phase lasts up to and including this step.'),
        tags: Schema.array(String).default([]).description('Tools with any of these tags are visible in the phase.'),
        tools: Schema.array(String).default([]).description('Tools matching any of these name patterns are visible in the phase.'),
        sideEffects: Schema.array(Schema.union(['none', 'local', 'external']))
          .default([])
          .description('Tools of these side-effect classes are visible in the phase.'),
      }),
    )
      .default([])
      .description('Phases of a run by step number; after the last one every tool can be visible. search_tools is visible in every phase.'),
    // Keep these defaults equal to DefaultRanking in search-index.ts (index.test.ts checks it): the
    // manifest imports no plugin code.
    ranking: Schema.object({
      boost: Schema.object({
        name: Schema.number().min(0).default(2),
        namespace: Schema.number().min(0).default(3),
        tags: Schema.number().min(0).default(1),
        description: Schema.number().min(0).default(1),
      }).description('Weight of a match in each field.'),
      fuzzy: Schema.number()
        .min(0)
        .max(0.5)
        .default(0.2)
        .description("Allowed edit distance as a fraction of a term's length (0: exact terms only)."),
      prefix: Schema.boolean().default(true).description('Let a query term match the start of a longer term.'),
      synonyms: Schema.boolean().default(true).description('Expand queries with the built-in synonyms.'),
      synonymWeight: Schema.number()
        .min(0)
        .max(1)
        .default(0.25)
        .description("What a synonym's match counts, relative to a word the query used."),
      coverage: Schema.number()
        .min(0)
        .max(10)
        .default(2)
        .description("Bonus for matching more of the query's words: the score is multiplied by 1 + coverage × (share of words matched)."),
    }).description('How search results are ranked.'),
    // Chosen on the dev halves of bench/tool-search's own set and of MetaTool's (see its README).
    semantic: Schema.object({
      enabled: Schema.boolean()
        .default(true)
        .description('Rank by meaning too when the agent has an `embeddings` service (embeddings-local, embeddings-openai).'),
      weight: Schema.number().min(0).max(10).default(1).description("Weight of the vector ranking in the fusion, relative to BM25's."),
      k: Schema.natural()
        .min(1)
        .max(1000)
        .default(10)
        .description('The constant of reciprocal rank fusion: a tool at rank r in a list gets weight / (k + r).'),
      candidates: Schema.natural().min(1).max(500).default(50).description('How deep each ranking is read before fusing.'),
      timeoutMs: Schema.natural()
        .min(1)
        .max(60_000)
        .default(2000)
        .description('How long a search waits for the embedding of its query; past it, the search ranks by words alone.'),
      batch: Schema.natural().min(1).max(2048).default(64).description('Tools embedded per request when they are registered.'),
    }).description('Hybrid ranking: BM25 fused with the cosine of embeddings (reciprocal rank fusion).'),
  }),
} satisfies Manifest
