/**
 * @module bench/tool-search/eval
 * The evaluation set as data (registry.json, queries.json) and the measures computed on it. Shared by
 * the bench and by the plugin's quality test.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { RegistryTool } from './catalog/expand.ts'

export type { RegistryTool } from './catalog/expand.ts'

export interface LabeledQuery {
  id: string
  query: string
  /** Every tool that does what the query asks; most queries have one. */
  expected: string[]
  /** `dev` was looked at while choosing ranking parameters; `test` was not. */
  split: 'dev' | 'test'
}

const dir = import.meta.dirname

export function loadRegistry(): RegistryTool[] {
  return JSON.parse(readFileSync(join(dir, 'registry.json'), 'utf8'))
}

export function loadQueries(): LabeledQuery[] {
  return JSON.parse(readFileSync(join(dir, 'queries.json'), 'utf8'))
}

/** A public labelled set converted by a script in public/ (its source and licence are in the file). */
export interface PublicSet {
  source: string
  commit: string
  licence: string
  tools: { name: string; description: string }[]
  queries: LabeledQuery[]
}

export function loadMetaTool(): PublicSet {
  return JSON.parse(readFileSync(join(dir, 'public', 'metatool.json'), 'utf8'))
}

export interface Scores {
  queries: number
  /** Mean over queries of: expected tools in the top k / min(expected, k). */
  recall: number
  /** Share of queries with at least one expected tool in the top k. */
  success: number
  /** Mean reciprocal rank of the first expected tool (0 when it is not in the ranking). */
  mrr: number
  /** Queries whose top k held no expected tool, for reading. */
  misses: { id: string; query: string; expected: string[]; got: string[] }[]
}

/**
 * Score a ranking function on labelled queries. `rank` returns tool names, best first; only the first
 * `depth` count for MRR, the first `k` for recall and success.
 */
export function score(queries: LabeledQuery[], rank: (query: string) => string[], k = 5, depth = 20): Scores {
  let recall = 0
  let success = 0
  let mrr = 0
  const misses: Scores['misses'] = []
  for (const q of queries) {
    const ranked = rank(q.query).slice(0, depth)
    const top = ranked.slice(0, k)
    const found = q.expected.filter((name) => top.includes(name)).length
    recall += found / Math.min(q.expected.length, k)
    if (found > 0) success++
    else misses.push({ id: q.id, query: q.query, expected: q.expected, got: top })
    const first = ranked.findIndex((name) => q.expected.includes(name))
    if (first >= 0) mrr += 1 / (first + 1)
  }
  const n = queries.length || 1
  return { queries: queries.length, recall: recall / n, success: success / n, mrr: mrr / n, misses }
}
