/**
 * @module tool-search/search-index
 * The ranking: BM25 (minisearch's BM25+) over four fields of each tool: the words of its name, its
 * namespace, its tags and its description. Queries go through the same term pipeline as tools
 * (terms.ts), are expanded with synonyms that count less than the words actually used, and may match
 * by prefix or with a small edit distance. The index follows the registry: tools are added and
 * discarded as plugins come and go.
 */
import MiniSearch, { type SearchResult } from 'minisearch'
import { BuiltinSynonyms, type SynonymTable } from './synonyms.ts'
import { localName, namespaceOf, term, terms, words } from './terms.ts'

export interface Ranking {
  /** Weight of a match in each field, relative to the description. */
  boost: { name: number; namespace: number; tags: number; description: number }
  /** Allowed edit distance, as a fraction of the term's length (0 turns fuzzy matching off). */
  fuzzy: number
  /** Let a query term match the start of a longer term (`deploy` finds `deployment`). */
  prefix: boolean
  /** Expand queries with the built-in synonyms (synonyms.ts). */
  synonyms: boolean
  /** What a synonym's match counts, relative to a word the query used. */
  synonymWeight: number
  /**
   * How much a tool gains for matching more of the query's words (directly or through a synonym):
   * the score is multiplied by 1 + coverage × this, coverage being the share of words matched.
   */
  coverage: number
  /**
   * A synonym is not added to a query when more than this share of tools contain it: so common a term
   * adds almost nothing to BM25 (its IDF is near zero) and costs the most to score (`show` would
   * otherwise pull in every get_ and list_ tool).
   */
  maxSynonymShare: number
}

/** Chosen on the dev half of bench/tool-search's queries; the surface is flat (see its README). */
export const DefaultRanking: Ranking = {
  boost: { name: 2, namespace: 3, tags: 1, description: 1 },
  fuzzy: 0.2,
  prefix: true,
  synonyms: true,
  synonymWeight: 0.25,
  coverage: 2,
  maxSynonymShare: 0.05,
}

/** The searchable part of a tool. */
export interface Indexable {
  name: string
  description: string
  tags?: readonly string[]
}

export interface Hit {
  name: string
  score: number
}

export interface SearchOptions {
  limit: number
  /** Only tools for which this holds are ranked (the caller's visibility filters). */
  accept?: (name: string) => boolean
}

const MaxCachedWords = 100_000

interface Doc {
  id: string
  name: string
  namespace: string
  tags: string
  description: string
}

export class SearchIndex {
  private readonly mini: MiniSearch<Doc>
  private readonly ranking: Ranking
  private readonly synonyms: SynonymTable
  /** How many tools hold each term, in any field; and each tool's terms, to undo that on removal. */
  private readonly df = new Map<string, number>()
  private readonly termsOf = new Map<string, string[]>()
  /** While a tool is being added: the distinct terms minisearch produced for it, for `df`. */
  private collecting: Set<string> | undefined
  /** Words seen so far and their terms: tool vocabularies repeat, and stemming is most of indexing. */
  private readonly termOf = new Map<string, string | null>()

  constructor(ranking: Partial<Ranking> = {}, synonyms: SynonymTable = BuiltinSynonyms) {
    this.ranking = { ...DefaultRanking, ...ranking, boost: { ...DefaultRanking.boost, ...ranking.boost } }
    this.synonyms = synonyms
    this.mini = new MiniSearch<Doc>({
      fields: ['name', 'namespace', 'tags', 'description'],
      tokenize: words,
      processTerm: (word) => {
        const t = this.cachedTerm(word)
        if (t) this.collecting?.add(t)
        return t
      },
    })
  }

  private cachedTerm(word: string): string | null {
    let t = this.termOf.get(word)
    if (t === undefined) {
      t = term(word) ?? null
      // Bounded: a registry of generated names must not grow the cache without end.
      if (this.termOf.size < MaxCachedWords) this.termOf.set(word, t)
    }
    return t
  }

  get size(): number {
    return this.mini.documentCount
  }

  add(tool: Indexable): void {
    const doc = toDoc(tool)
    // Minisearch runs every word of the tool through processTerm once: count the terms as it does.
    const seen = (this.collecting = new Set())
    try {
      this.mini.add(doc)
    } finally {
      this.collecting = undefined
    }
    this.count(doc.id, seen)
  }

  addAll(tools: Iterable<Indexable>): void {
    for (const tool of tools) this.add(tool)
  }

  remove(name: string): void {
    if (!this.mini.has(name)) return
    this.mini.discard(name)
    for (const t of this.termsOf.get(name) ?? []) this.df.set(t, this.df.get(t)! - 1)
    this.termsOf.delete(name)
  }

  private count(id: string, seen: Set<string>): void {
    const distinct = [...seen]
    for (const t of distinct) this.df.set(t, (this.df.get(t) ?? 0) + 1)
    this.termsOf.set(id, distinct)
  }

  /** The synonyms worth adding for a term of the query: known ones that are not too common. */
  private expansions(t: string): readonly string[] {
    const candidates = this.synonyms.get(t)
    if (!candidates) return []
    const max = this.ranking.maxSynonymShare * this.mini.documentCount
    return candidates.filter((c) => (this.df.get(c) ?? 0) <= max)
  }

  /** The best matches for a query, best first; at most `limit`. */
  search(query: string, options: SearchOptions): Hit[] {
    const used = new Set(terms(query))
    if (used.size === 0) return []
    const { boost, fuzzy, prefix, synonyms, synonymWeight, coverage } = this.ranking
    // Which words of the query each expanded term stands for, to tell how much of the query a tool covers.
    const expanded = new Map<string, readonly string[]>()
    const standsFor = new Map<string, string[]>()
    for (const t of used) {
      const more = synonyms ? this.expansions(t) : []
      expanded.set(t, more)
      for (const e of [t, ...more]) standsFor.set(e, [...(standsFor.get(e) ?? []), t])
    }
    const results: SearchResult[] = this.mini.search(query, {
      boost,
      combineWith: 'OR',
      processTerm: (word) => {
        const t = term(word)
        if (!t) return null
        const more = expanded.get(t)
        return more?.length ? [t, ...more] : t
      },
      // A synonym only counts when the query did not use that term itself.
      boostTerm: (t) => (used.has(t) ? 1 : synonymWeight),
      // Short terms are too often the start of unrelated words (`log` of `login`), and too close to
      // other short words to allow an edit.
      prefix: (t) => prefix && t.length >= 4,
      fuzzy: (t) => (fuzzy > 0 && t.length >= 5 ? fuzzy : false),
      filter: options.accept ? (r) => options.accept!(r.id) : undefined,
    })
    const hits: Hit[] = results.map((r) => ({
      name: r.id as string,
      score: r.score * (1 + (coverage * this.covered(r.queryTerms, standsFor)) / used.size),
    }))
    // Stable: equal scores keep minisearch's order.
    hits.sort((a, b) => b.score - a.score)
    return hits.slice(0, options.limit)
  }

  private covered(matched: string[], standsFor: Map<string, string[]>): number {
    const words = new Set<string>()
    for (const m of matched) for (const w of standsFor.get(m) ?? []) words.add(w)
    return words.size
  }
}

function toDoc(tool: Indexable): Doc {
  return {
    id: tool.name,
    name: localName(tool.name),
    namespace: namespaceOf(tool.name),
    tags: (tool.tags ?? []).join(' '),
    description: tool.description,
  }
}
