/**
 * @module tool-search/tool-search
 * The `tools` service with deferred loading. The registry holds every tool plugins register; the
 * visible set is only what the run has asked for: `search_tools`, the pinned tools, optionally the
 * tools ranked best for the run's task, and the tools revealed so far (this plugin's slice of run
 * state, `revealed`), each passed through the visibility filters. Because revealed tools come from run
 * state, which the kernel rebuilds from the run's events (`slice/update`), they stay visible after a
 * compaction and after a resume in another process.
 */
import { Service, type Context } from 'cordis'
import {
  AgentKey,
  CordageError,
  globPattern,
  pluginOf,
  readService,
  sliceName,
  type EmbeddingsService,
  type RunState,
  type Tool,
  type ToolsService,
  type VisibleInput,
  type Glob,
} from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { SearchIndex, type Hit } from './search-index.ts'
import { fuse, SemanticIndex } from './semantic-index.ts'
import { revealedIn, SearchToolName, searchTool, summaryOf, type Listing, type Searcher } from './search-tool.ts'
import { namespaceOf } from './terms.ts'
import { Visibility, type Scope } from './visibility.ts'

/** Runs whose last step scope is remembered for search_tools; older ones fall back to the agent alone. */
const RememberedRuns = 256

export class ToolSearch extends Service implements ToolsService {
  static reusable = true
  private tools = new Map<string, Tool>()
  private index: SearchIndex
  /** Vectors of the registry, when ranking by meaning is on; used only when the agent has `embeddings`. */
  private semantic: SemanticIndex | undefined
  private semanticConfig: Config['semantic']
  private visibility: Visibility
  private pinned: Glob[]
  private pinnedTags: Set<string>
  private preload: number
  private agentName: string
  /** Bumped on every register and removal: what was computed from the registry is stale. */
  private version = 0
  private pinnedCache: { version: number; names: string[] } | undefined
  private visibleCache: { key: string; tools: Tool[] } | undefined
  /**
   * The scope (agent, step) of each run's current step, as seen by `visible`, which the loop calls when
   * a step begins. search_tools gets only the run id from the kernel, and needs the step to apply the
   * phase a run is in.
   */
  private scopes = new Map<string, Scope>()
  /**
   * `add` bound to the instance itself. Called through `ctx.tools`, `this` is cordis's tracing proxy
   * of the service, and every field read and write in `add` would go through its traps: that was half
   * the cost of registering a tool.
   */
  private readonly addRaw: (tool: Tool, owner: string | undefined) => () => void
  /** The name of this plugin's slice of run state, where the search tool keeps what it revealed. */
  private readonly slice: string

  constructor(ctx: Context, config: Config) {
    super(ctx, 'tools', true)
    this.index = new SearchIndex(config.ranking)
    this.semanticConfig = config.semantic
    if (config.semantic.enabled) {
      const logger = ctx.logger('tool-search')
      this.semantic = new SemanticIndex(() => readService<EmbeddingsService>(ctx, 'embeddings')?.value, {
        batch: config.semantic.batch,
        // A provider that fails leaves those tools to BM25; say so once per failure, not per search.
        onError: (error) =>
          logger.warn(
            `embedding tools failed, they are ranked by words alone until the next registration: ${String((error as Error)?.message ?? error)}`,
          ),
      })
    }
    this.visibility = new Visibility(config, SearchToolName)
    this.pinned = config.pinned.map(globPattern)
    this.pinnedTags = new Set(config.pinnedTags)
    this.preload = config.preload
    this.agentName = (ctx as unknown as Record<symbol, string | undefined>)[AgentKey] ?? ''
    // In the constructor `this` is the instance, not a proxy; the arrow keeps it.
    this.addRaw = (tool, owner) => this.add(tool, owner)
    const owner = pluginOf(ctx)
    // The search tool keeps what it revealed in its plugin's slice: the one the kernel records it under.
    this.slice = sliceName(owner ?? manifest.name)
    this.add(searchTool(this.searcher(), { limit: Math.min(config.limit, config.maxLimit), maxLimit: config.maxLimit }), owner)
  }

  register(tool: Tool): () => void {
    // Called through `ctx.tools`, `this.ctx` is the caller's context: the plugin that owns the tool.
    const caller = this.ctx
    const remove = this.addRaw(tool, pluginOf(caller))
    return caller.effect(() => remove)
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name)
  }

  list(): Tool[] {
    return [...this.tools.values()]
  }

  visible({ state }: VisibleInput): Tool[] {
    const scope = this.remember(state)
    const revealed = revealedIn(state, this.slice)
    const key = [this.version, scope.agent, this.visibility.phaseAt(scope.step), this.preload ? state.task : '', revealed.join(',')].join(
      '\n',
    )
    if (this.visibleCache?.key === key) return this.visibleCache.tools
    const names = new Set([SearchToolName, ...this.pinnedNames(), ...this.preloaded(state.task, scope), ...revealed])
    const tools: Tool[] = []
    for (const name of names) {
      const tool = this.tools.get(name)
      if (tool && this.visibility.allows(tool, scope)) tools.push(tool)
    }
    this.visibleCache = { key, tools }
    return tools
  }

  private add(tool: Tool, owner: string | undefined): () => void {
    const existing = this.tools.get(tool.name)
    if (existing) {
      throw new CordageError(
        'plugin_conflict',
        `tool "${tool.name}" is already registered by ${existing.owner ?? 'another plugin'}; tool names are unique per agent`,
      )
    }
    if (typeof tool.invoke !== 'function' || typeof tool.input?.safeParse !== 'function') {
      throw new CordageError('invalid_input', `tool "${tool.name}" was not built with defineTool (it lacks invoke or input.safeParse)`)
    }
    const registered: Tool = Object.freeze({ ...tool, owner })
    this.tools.set(tool.name, registered)
    this.index.add(registered)
    this.semantic?.add(registered)
    this.version++
    return () => {
      if (this.tools.get(tool.name) !== registered) return
      this.tools.delete(tool.name)
      this.index.remove(tool.name)
      this.semantic?.remove(tool.name)
      this.version++
    }
  }

  private remember(state: Readonly<RunState>): Scope {
    const scope: Scope = { agent: state.agent || this.agentName, step: state.steps }
    this.scopes.delete(state.runId)
    this.scopes.set(state.runId, scope)
    if (this.scopes.size > RememberedRuns) this.scopes.delete(this.scopes.keys().next().value!)
    return scope
  }

  /**
   * Where a search in `runId` looks: the step after the run's current one, because what a search
   * reveals becomes callable from the next step, so the phase that matters is the next step's.
   */
  private searchScope(runId: string): Scope {
    const scope = this.scopes.get(runId)
    return scope ? { agent: scope.agent, step: scope.step === undefined ? undefined : scope.step + 1 } : { agent: this.agentName }
  }

  private pinnedNames(): string[] {
    if (this.pinnedCache?.version !== this.version) {
      const names =
        this.pinned.length || this.pinnedTags.size
          ? this.list()
              .filter((t) => this.pinned.some((re) => re.test(t.name)) || (t.tags ?? []).some((tag) => this.pinnedTags.has(tag)))
              .map((t) => t.name)
          : []
      this.pinnedCache = { version: this.version, names }
    }
    return this.pinnedCache.names
  }

  private preloaded(task: string, scope: Scope): string[] {
    if (!this.preload || !task) return []
    return this.index.search(task, { limit: this.preload, accept: (name) => this.findable(name, scope) }).map((h) => h.name)
  }

  /** A tool a search may list in this scope: visible there, and not the search tool itself. */
  private findable(name: string, scope: Scope): boolean {
    const tool = this.tools.get(name)
    return !!tool && name !== SearchToolName && this.visibility.allows(tool, scope)
  }

  private listing(name: string, score?: number): Listing {
    return {
      name,
      namespace: namespaceOf(name),
      summary: summaryOf(this.tools.get(name)!.description),
      score: score === undefined ? undefined : Math.round(score * 10) / 10,
    }
  }

  /**
   * The tools a search for `query` lists, best first, by words alone (BM25), among those that can be
   * visible in `runId`'s next step (in any step of the agent when the run is unknown). Synchronous: the
   * preload of visible() uses it. Public so that a bench or a plugin holding this service can rank
   * without a tool call.
   */
  rank(query: string, limit: number, runId = ''): Listing[] {
    const scope = this.searchScope(runId)
    return this.index.search(query, { limit, accept: (name) => this.findable(name, scope) }).map((h) => this.listing(h.name, h.score))
  }

  /**
   * What search_tools lists: BM25 fused with the cosine of the query's embedding when the agent has an
   * `embeddings` service and the query is embedded in time; otherwise `rank`. A fused listing's score is
   * its fusion score, not BM25's.
   */
  async search(query: string, limit: number, runId = '', signal?: AbortSignal): Promise<Listing[]> {
    const vector = await this.queryVector(query, signal)
    if (!vector) return this.rank(query, limit, runId)
    const scope = this.searchScope(runId)
    const accept = (name: string) => this.findable(name, scope)
    const depth = Math.max(limit, this.semanticConfig.candidates)
    const lexical: Hit[] = this.index.search(query, { limit: depth, accept })
    const near = this.semantic!.nearest(vector, depth, accept)
    return fuse(lexical, near, this.semanticConfig.k, this.semanticConfig.weight)
      .slice(0, limit)
      .map((h) => this.listing(h.name, h.score * 100))
  }

  /** Starts embedding what is registered and resolves when nothing waits (for a bench, or a test). */
  async settled(): Promise<{ embedded: number; waiting: number }> {
    await this.semantic?.settle()
    return { embedded: this.semantic?.size ?? 0, waiting: this.semantic?.waiting ?? 0 }
  }

  /** The query's vector, or undefined: no service, an error, a foreign model, or past the time limit. */
  private async queryVector(query: string, signal?: AbortSignal): Promise<Float32Array | undefined> {
    if (!this.semantic) return undefined
    const controller = new AbortController()
    const stop = () => controller.abort()
    signal?.addEventListener('abort', stop, { once: true })
    const timer = setTimeout(stop, this.semanticConfig.timeoutMs)
    const aborted = new Promise<undefined>((resolve) =>
      controller.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
    )
    try {
      const vector = this.semantic.queryVector(query, controller.signal)
      vector.catch(() => {}) // read below, or dropped when the time is up
      // Tools registered and not embedded yet (a catalogue that just arrived): wait for them, within the
      // same time limit. Past it, the tools embedded so far are ranked by meaning, the rest by words.
      await Promise.race([this.semantic.settle(), aborted])
      return await Promise.race([vector, aborted])
    } catch {
      return undefined
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', stop)
    }
  }

  private searcher(): Searcher {
    return {
      search: (runId, query, limit, signal) => this.search(query, limit, runId, signal),
      load: (runId, names) => {
        const scope = this.searchScope(runId)
        const found: Listing[] = []
        const missing: { name: string; suggestions: string[] }[] = []
        for (const name of new Set(names)) {
          if (this.findable(name, scope)) found.push(this.listing(name))
          else
            missing.push({
              name,
              suggestions: this.index.search(name, { limit: 3, accept: (n) => this.findable(n, scope) }).map((h) => h.name),
            })
        }
        return { found, missing }
      },
      namespaces: (runId) => {
        const scope = this.searchScope(runId)
        const spaces = new Set<string>()
        for (const tool of this.tools.values()) {
          const space = namespaceOf(tool.name)
          if (space && !spaces.has(space) && this.findable(tool.name, scope)) spaces.add(space)
        }
        return [...spaces].sort().slice(0, 40)
      },
    }
  }
}
