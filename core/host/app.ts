/**
 * @module host/app
 * A Cordage application: one cordis root, and the agents of a preset, each in its own isolated
 * context with its own plugin versions. This is what the CLI (and later the playground) drives.
 */
import { Context, type ForkScope } from 'cordis'
import type { Tool } from '../contracts/services/tools.ts'
import { AgentRuntime } from '../kernel/agent.ts'
import { createAgentContext } from '../kernel/cordis.ts'
import { agentDirectory } from './agents.ts'
import { waitsService } from './waits.ts'
import { CordageError } from '../contracts/errors.ts'
import { PluginCatalog, type CatalogEntry } from './catalog.ts'
import { handledErrors, plugOne, unplug, type LoadedPlugin } from './plug.ts'
import { type LoadedAgent, PinnedRuntimes } from './pinned-runtimes.ts'
import { offerState, takeSnapshot } from '../kit/swap-state.ts'
import { failClosedPlugin, guardedServices, isFailClosed } from './fail-closed.ts'
import { RebuiltCatalog } from './reload-catalog.ts'
import { swapSpec, type SwapTarget } from './swap-spec.ts'
import { loadPreset, type AgentSpec, type PluginRef, type Preset } from './preset.ts'
import { planAgent, type AgentPlan } from './resolve.ts'
import { applyLock, readLock } from './lock.ts'
import { PluginHashes } from './plugin-hashes.ts'
import { driftBinding } from '../kit/drift.ts'
import { secretsOf } from './secrets.ts'
import { KernelWriter } from '../kernel/store-writer.ts'
import { MinSecretLength, Scrubber } from '../kit/secrets.ts'
import { attachLogSink, effectiveLogLevel, type LogLevel, type LogSink } from './logging.ts'

export interface CordageOptions {
  /** Plugins to choose from; the built-in plugins/ folder by default. */
  catalog?: PluginCatalog
  /**
   * Only plug these agents (all are still checked): names, or a function of the preset's agent names
   * in file order (`cordage run` without --agent starts the first one only).
   */
  agents?: string[] | ((names: string[]) => string[])
  /** Where errors raised inside cordis (a plugin's listener, a late failure) are reported. Default: stderr. */
  onError?: (error: unknown) => void
  /** Use this cordis root (to listen to plugin events before loading starts, or to embed Cordage). */
  root?: Context
  /**
   * Start only each agent's store (the preset is still checked whole): for reading runs, which must not
   * start tool servers or need a model key. Such an app cannot start or steer runs.
   */
  storeOnly?: boolean
  /**
   * Start every agent's store now and its other plugins only when a command acts through it
   * ({@link Cordage.ensureAgent}): for the commands about one run or thread, which find it in the
   * stores and then start only the agent it belongs to (and, as the run reaches them, its children
   * and handoff targets). See docs/reference/presets.md#which-agents-a-command-starts.
   */
  onDemand?: boolean
  /** `--set KEY=VALUE` overrides, applied after the preset's layers (host/layers.ts). */
  sets?: readonly string[]
  /** Use the preset's lock file when there is one (host/lock.ts). Default true. */
  lock?: boolean
  /**
   * Which plugin log lines this app shows (host/logging.ts). Default: $CORDAGE_LOG_LEVEL, else the
   * preset's `logLevel`, else `warn`.
   */
  logLevel?: LogLevel
  /** Where this app's log lines go, one line per call, secrets scrubbed. Default: stderr. */
  log?: (line: string) => void
  /** Stand in for a tool at each call of an agent's runs (fault injection; `cordage eval`). */
  interceptTool?: (agent: string, tool: Tool) => Tool
}

export class Cordage {
  private loaded = new Map<string, LoadedAgent>()
  private plans = new Map<string, AgentPlan>()
  private storeOnly = false
  /** Agents loaded with their store only, in an app opened `onDemand`: ensureAgent starts the rest. */
  private storesOnly = new Set<string>()
  private interceptTool: CordageOptions['interceptTool']

  private readonly onError: (error: unknown) => void

  private constructor(
    readonly preset: Preset,
    readonly catalog: PluginCatalog,
    readonly root: Context,
    onError: ((error: unknown) => void) | undefined,
    logSink: LogSink,
  ) {
    // Every log of a context under this root (plugins, and cordis's own "app" logger, which reports
    // plugin failures the host reports itself as CordageErrors) goes to this app's sink, at its level,
    // scrubbed; other cordis roots in the process are not affected (host/logging.ts).
    attachLogSink(root, logSink)
    this.pinnedRuns = new PinnedRuntimes(root)
    const log = root.logger('cordage')
    this.onError = onError ?? ((error) => log.error(error))
    this.root.on('internal/error', (error: unknown) => {
      // Deferred: a failure while a plugin starts is thrown by plugOne as a CordageError and not reported twice.
      setImmediate(() => {
        if (!(error && typeof error === 'object' && handledErrors.has(error))) this.onError(error)
      })
    })
  }

  /**
   * Load a preset: check every agent, then plug the chosen ones.
   * @throws CordageError (`preset_*`, `plugin_*`, `manifest_invalid`, `service_missing`); nothing stays plugged
   */
  static async fromPreset(file: string, options: CordageOptions = {}): Promise<Cordage> {
    const preset = loadPreset(file, { sets: options.sets })
    const catalog = options.catalog ?? (await PluginCatalog.scan())
    const locked = options.lock === false ? undefined : readLock(preset.file)
    const hashes = new PluginHashes()
    const specs = locked ? await applyLock(preset, locked, catalog, (entry) => hashes.start(entry)) : preset.agents
    const level = effectiveLogLevel(options.logLevel, preset.logLevel)
    const names = Object.keys(preset.agents)
    const wanted = typeof options.agents === 'function' ? options.agents(names) : (options.agents ?? names)
    for (const name of wanted) {
      if (!Object.hasOwn(preset.agents, name)) {
        throw new CordageError(
          'agent_not_found',
          `preset ${preset.shown} has no agent "${name}"; agents: ${Object.keys(preset.agents).join(', ')}`,
        )
      }
    }
    const plans = new Map<string, AgentPlan>()
    for (const spec of Object.values(specs)) plans.set(spec.name, await planAgent(preset, spec, catalog))
    // Hashed side by side in esbuild's process while the plugins are imported and started (plugAgent waits).
    for (const plan of plans.values()) for (const p of plan.plugins) void hashes.start(p.entry)
    // Log lines are scrubbed of every agent's secrets: a plugin cannot log an API key.
    const secrets = [...plans.values()].flatMap((plan) => secretsOf(preset.secrets ?? [], plan.plugins).secrets)
    const write =
      options.log ??
      ((line: string) => {
        process.stderr.write(`${line}\n`)
      })
    const app = new Cordage(preset, catalog, options.root ?? new Context(), options.onError, {
      level,
      write,
      scrubber: new Scrubber(secrets),
    })
    app.plans = plans
    app.hashes = hashes
    app.interceptTool = options.interceptTool
    app.lockFile = locked?.file
    app.storeOnly = options.storeOnly ?? false
    for (const name of wanted) {
      try {
        if (options.onDemand && !app.storeOnly) {
          await app.plugAgent(plans.get(name)!, true, undefined, app.root.plugin({ name: `stores:${name}`, apply: () => {} }))
          app.storesOnly.add(name)
        } else await app.plugAgent(plans.get(name)!, app.storeOnly)
      } catch (error) {
        await app.stop()
        // Which agent did not start, for a command that started every agent to say how to serve the others.
        if (CordageError.is(error) && error.data === undefined) error.data = { agent: name }
        throw error
      }
    }
    return app
  }

  agent(name: string): AgentRuntime {
    const agent = this.loaded.get(name)
    if (!agent)
      throw new CordageError('agent_not_found', `agent "${name}" is not loaded; loaded: ${[...this.loaded.keys()].join(', ') || 'none'}`)
    return agent.runtime
  }

  /**
   * An agent of the preset with all its plugins started: plugged now if it was not loaded (a subagent
   * or handoff target of a loaded one), or, in an app opened `onDemand`, started whole where only its
   * store was.
   * @throws CordageError `agent_not_found` for a name the preset does not have, or in an app that
   *   only reads (`storeOnly`); a plugin's start failure as {@link Cordage.fromPreset} throws it
   */
  async ensureAgent(name: string): Promise<AgentRuntime> {
    if (this.loaded.has(name) && !this.storesOnly.has(name)) return this.agent(name)
    const plan = this.plans.get(name)
    if (!plan) throw new CordageError('agent_not_found', `preset ${this.preset.shown} has no agent "${name}"`)
    if (this.storeOnly) throw new CordageError('agent_not_found', `agent "${name}" is not loaded (only stores are loaded for this command)`)
    const loading = this.loading.get(name) ?? this.startWhole(plan).finally(() => this.loading.delete(name))
    this.loading.set(name, loading)
    await loading
    return this.agent(name)
  }

  private loading = new Map<string, Promise<void>>()

  /** Plug every plugin of `plan`'s agent, in place of its store-only runtime when it had one (nothing runs on that). */
  private async startWhole(plan: AgentPlan): Promise<void> {
    const name = plan.spec.name
    const storesOnly = this.loaded.get(name)
    if (storesOnly && this.storesOnly.has(name)) {
      this.loaded.delete(name)
      this.storesOnly.delete(name)
      this.pinnedRuns.unplug(storesOnly)
    }
    await this.plugAgent(plan, false)
  }

  /** The lock file the agents were resolved by, when one was used. */
  lockFile: string | undefined

  /**
   * Runtimes built for one run each, with plugins pinned to the run's recorded versions (see forRun),
   * released when their last run pauses or ends, or when a command on them fails before driving.
   */
  private pinnedRuns: PinnedRuntimes
  private hashes = new PluginHashes()

  /**
   * The content hash of a plugin (host/plugin-hash.ts): a hot-reload build's own (of the bytes it
   * compiled), else computed once per folder for this app.
   */
  hashOf(entry: Pick<CatalogEntry, 'dir' | 'entry' | 'hash'>): string {
    return this.hashes.get(entry)
  }

  /** How many runtimes pinned for one run (onDrift: pin) are alive now; 0 once their runs paused or ended. */
  pinnedRuntimes(): number {
    return this.pinnedRuns.size
  }

  /**
   * The runtime that should continue `runId`: the agent's own, or, when plugins whose preset entry says
   * `onDrift: pin` differ from what the run started with and the recorded version is installed (with
   * the recorded content, when the run recorded hashes), a runtime built for this run with those
   * plugins at their recorded versions. The rest of the drift decision (refuse, accept) is driftBinding's (kit/drift.ts).
   * @throws CordageError when a pinned plan cannot be resolved or started (for example the preset's
   *   config does not fit the recorded version)
   */
  async forRun(agent: string, runId: string): Promise<AgentRuntime> {
    const runtime = this.agent(agent)
    const loaded = this.loaded.get(agent)!
    const pins = loaded.plan.plugins.filter((p) => p.ref.onDrift === 'pin')
    if (!pins.length || this.storeOnly) return runtime
    let recorded: Awaited<ReturnType<AgentRuntime['startedWith']>>
    try {
      recorded = await runtime.startedWith(runId)
    } catch (error) {
      if (CordageError.is(error, 'run_not_found')) return runtime
      throw error
    }
    const pinned: Record<string, { version: string; hash?: string }> = {}
    const refs = new Map<PluginRef, PluginRef>()
    for (const p of pins) {
      const name = p.entry.manifest.name
      const version = recorded.plugins[name]
      const hash = recorded.hashes?.[name]
      const now = this.hashOf(p.entry)
      if (version === undefined || (version === p.entry.manifest.version && (hash === undefined || hash === now))) continue
      // The version the run recorded may be in any folder (policy-rules-v1 holds policy-rules 1.x).
      await this.catalog.read()
      const entry = this.catalog
        .entries()
        .find((e) => e.manifest.name === name && e.manifest.version === version && (hash === undefined || this.hashOf(e) === hash))
      if (!entry) continue
      pinned[name] = { version: p.entry.manifest.version, hash: now }
      refs.set(p.ref, {
        ...p.ref,
        plugin: entry.origin === 'path' ? undefined : name,
        path: entry.origin === 'path' ? entry.dir : undefined,
        version,
      })
    }
    if (!refs.size) return runtime
    const spec: AgentSpec = {
      ...loaded.plan.spec,
      model: refs.get(loaded.plan.spec.model) ?? loaded.plan.spec.model,
      plugins: loaded.plan.spec.plugins.map((r) => refs.get(r) ?? r),
    }
    let plan: AgentPlan
    try {
      plan = await planAgent(this.preset, spec, this.catalog)
    } catch (error) {
      const list = Object.keys(pinned)
        .map((n) => `${n}@${recorded.plugins[n]}`)
        .join(', ')
      throw new CordageError(
        CordageError.is(error) ? error.code : 'plugin_start_failed',
        `run ${runId} cannot be pinned to ${list} (onDrift: pin): ${(error as Error).message}`,
        { cause: error },
      )
    }
    const built = await this.plugAgent(plan, false, pinned)
    this.pinnedRuns.add(built)
    return built.runtime
  }

  /**
   * For a worker (AgentRuntime.driveNext): the pinned runtime that should drive `runId`, or undefined
   * for the agent's own. When pinning fails, the error is reported and the agent's own runtime takes
   * the run: its drift check cannot honour the pin and suspends the run, recorded (fail closed).
   */
  private async pinnedFor(agent: string, runId: string): Promise<AgentRuntime | undefined> {
    try {
      const runtime = await this.forRun(agent, runId)
      return runtime === this.loaded.get(agent)?.runtime ? undefined : runtime
    } catch (error) {
      this.onError(error)
      return undefined
    }
  }

  /** The agents this app has loaded (in an app opened `onDemand`, every agent: some with their store only). */
  agentNames(): string[] {
    return [...this.loaded.keys()]
  }

  /** The plugins an agent runs now: name → version. */
  pluginsOf(agent: string): Record<string, string> {
    const loaded = this.loaded.get(agent)
    if (!loaded) throw new CordageError('agent_not_found', `agent "${agent}" is not loaded`)
    return Object.fromEntries(loaded.plugins.map((p) => [p.planned.entry.manifest.name, p.planned.entry.manifest.version]))
  }

  /** The catalogue entries (folders) of the plugins an agent runs now, by plugin name: what `cordage dev` watches. */
  entriesOf(agent: string): { name: string; entry: CatalogEntry }[] {
    const loaded = this.loaded.get(agent)
    if (!loaded) throw new CordageError('agent_not_found', `agent "${agent}" is not loaded`)
    return loaded.plugins.map((p) => ({ name: p.planned.entry.manifest.name, entry: p.planned.entry }))
  }

  /**
   * Replace one plugin of a live agent at the next step boundary of its runs: the step in flight finishes
   * on the old version, the next step uses the new one. The replacement is checked like a preset entry
   * (version, config, every requirement in both directions) before the old one is touched; if it fails
   * to start, the old version is plugged back and the error is thrown.
   *
   * `entry` is a rebuilt plugin (a hot reload, see host/dev.ts): it replaces the installed entry of the
   * same folder for this swap. State the old version registered with `swapState` goes to the new one
   * (or, on failure, back to the old one). If the old version cannot be plugged back either, a policy,
   * guardrail or verifier is replaced by a stand-in that refuses everything (host/fail-closed.ts).
   */
  async swap(agent: string, plugin: string, target: SwapTarget): Promise<{ from: string; to: string }> {
    const loaded = this.loaded.get(agent)
    if (!loaded) throw new CordageError('agent_not_found', `agent "${agent}" is not loaded`)
    const { current, ref, spec } = swapSpec(loaded, agent, plugin, target)
    const plan = await planAgent(this.preset, spec, target.entry ? new RebuiltCatalog(this.catalog, target.entry) : this.catalog)
    const next = plan.plugins.find((p) => p.ref === ref)!
    const from = `${current.planned.entry.manifest.name}@${current.planned.entry.manifest.version}`
    const to = `${next.entry.manifest.name}@${next.entry.manifest.version}`
    const hash = this.hashOf(next.entry)

    await loaded.runtime.gate.exclusive(async () => {
      // A service can be set by one provider at a time: the old one leaves first. The gate holds every
      // run of the agent at a step boundary meanwhile, so no step sees the gap. Its state is taken
      // first: a snapshot that fails cancels the swap before anything changed.
      let snapshot: { state: unknown } | undefined
      try {
        snapshot = takeSnapshot(current.fork)
      } catch (error) {
        throw new CordageError(
          'plugin_start_failed',
          `${from} could not hand over its state (snapshot): ${(error as Error)?.message ?? error}; it keeps serving`,
          { cause: error },
        )
      }
      unplug(loaded.ctx, agent, current, 'swap')
      try {
        const replacement = await offerState(agent, plugin, snapshot, () => plugOne(loaded.ctx, agent, next))
        loaded.plugins[loaded.plugins.indexOf(current)] = replacement
        loaded.plan = plan
        loaded.runtime.plugins[next.entry.manifest.name] = next.entry.manifest.version
        // The hash of the code that started: a rebuilt entry's own (taken from the bytes it compiled, so
        // an edit made while the swap waited at the step boundary is not in it); the folder's from now on.
        this.hashes.set(next.entry.dir, hash)
        loaded.runtime.hashes[next.entry.manifest.name] = hash
      } catch (error) {
        const back = await this.fallBack(loaded.ctx, agent, current, snapshot, error)
        loaded.plugins[loaded.plugins.indexOf(current)] = back
        if (!isFailClosed(back.plugin)) throw error
        const code = CordageError.is(error) ? error.code : 'plugin_start_failed'
        throw new CordageError(
          code,
          `${(error as Error)?.message ?? error}; ${from} could not be plugged back either, so its ${guardedServices(current.planned.entry.manifest).join(', ')} now refuse everything until a version starts again (fail closed)`,
          { cause: error, data: { failClosed: true } },
        )
      }
    })
    return { from, to }
  }

  /**
   * Plug back the version a failed swap replaced, with the state it handed over. When that fails too, a
   * plugin that provides policy, guardrail or verifier gets a refusing stand-in: never none.
   */
  private async fallBack(
    ctx: Context,
    agent: string,
    current: LoadedPlugin,
    snapshot: { state: unknown } | undefined,
    cause: unknown,
  ): Promise<LoadedPlugin> {
    const { manifest } = current.planned.entry
    let failure: unknown
    if (!isFailClosed(current.plugin)) {
      try {
        return await offerState(agent, manifest.name, snapshot, () => plugOne(ctx, agent, current.planned))
      } catch (error) {
        failure = error
      }
    }
    const guarded = guardedServices(manifest)
    if (!guarded.length) throw failure
    const why = `${(cause as Error)?.message ?? cause}${failure ? `; restoring ${manifest.name}@${manifest.version} failed: ${(failure as Error)?.message ?? failure}` : ''}`
    const standIn = isFailClosed(current.plugin) ? current.plugin : failClosedPlugin(manifest, guarded, why)
    const loaded = await plugOne(ctx, agent, {
      ...current.planned,
      entry: { ...current.planned.entry, manifest: standIn.manifest, module: standIn },
      config: {},
    })
    // Listed under the failed plugin's name, so the next reload of that plugin replaces the stand-in.
    return { ...loaded, planned: current.planned }
  }

  /** Dispose every agent's plugins (after their runs pause or end). */
  async stop(): Promise<void> {
    await this.pinnedRuns.stop()
    // Every agent's runs pause or end before any agent goes: a run of one may still reach another's
    // (a parent woken by its child re-attaches to the child's agent), in whatever order they loaded.
    const agents = () => [...this.loaded.values()]
    do await Promise.all(agents().map((a) => a.runtime.idle()))
    while (agents().some((a) => a.runtime.running().length))
    for (const [name, agent] of this.loaded) {
      if (this.storesOnly.has(name)) this.pinnedRuns.unplug(agent)
      else for (const p of [...agent.plugins].reverse()) unplug(agent.ctx, name, p, 'stop')
    }
    this.loaded.clear()
    this.storesOnly.clear()
    // The log sink stays attached: a late line (a server closing) must not fall through to cordis's own
    // printer on stdout. It goes when the root does (a WeakMap).
  }

  /**
   * Plug an agent. A runtime pinned for one run, or one with its store only that will be replaced by
   * the whole agent, lives in a cordis scope of its own, so it goes without leaving listeners behind.
   */
  private async plugAgent(
    plan: AgentPlan,
    storeOnly: boolean,
    pinned?: Record<string, { version: string; hash?: string }>,
    ownScope?: ForkScope<Context>,
  ): Promise<LoadedAgent> {
    const name = plan.spec.name
    const scope = ownScope ?? (pinned ? this.pinnedRuns.scope(name) : undefined)
    const ctx = createAgentContext(scope?.ctx ?? this.root, name).extend({ baseDir: plan.preset.dir })
    // The host's own services: the preset's other agents, for subagents and handoffs; and who answers
    // for what a tool call waits on (child runs, and the kinds plugins own).
    const agents = agentDirectory(this, name)
    ctx.set('agents', agents)
    ctx.set('waits', waitsService(this, name, agents))
    const plugins: LoadedPlugin[] = []
    const wanted = storeOnly ? plan.plugins.filter((p) => p.entry.manifest.provides?.store) : plan.plugins
    try {
      for (const planned of wanted) plugins.push(await plugOne(ctx, name, planned))
    } catch (error) {
      for (const p of plugins.reverse()) unplug(ctx, name, p, 'rollback')
      scope?.dispose()
      throw error
    }
    try {
      for (const p of plugins) await this.hashes.start(p.planned.entry)
    } catch (error) {
      for (const p of plugins.reverse()) unplug(ctx, name, p, 'rollback')
      scope?.dispose()
      throw error
    }
    const found = secretsOf(plan.preset.secrets ?? [], plan.plugins)
    if (found.tooShort.length)
      this.onError(
        new CordageError(
          'invalid_input',
          `secrets ${found.tooShort.join(', ')} of agent "${name}" are shorter than ${MinSecretLength} characters and are not scrubbed from the record: they would match ordinary text`,
        ),
      )
    const runtime = new AgentRuntime(ctx, {
      name,
      defaultTask: plan.spec.task,
      secrets: found.secrets,
      writer: KernelWriter,
      budgets: plan.spec.budgets,
      contextTokens: plan.spec.contextTokens,
      parallelTools: plan.spec.parallelTools,
      modelRetry: plan.spec.retry,
      serviceTimeouts: plan.spec.serviceTimeouts,
      ...plan.spec.durability,
      handoff: async (runId, to) => (await (await this.ensureAgent(to)).acceptHandoff(runId)).done,
      handoffs: plan.spec.handoffs,
      interceptTool: this.interceptTool ? (tool) => this.interceptTool!(name, tool) : undefined,
      plugins: Object.fromEntries(plugins.map((p) => [p.planned.entry.manifest.name, p.planned.entry.manifest.version])),
      hashes: Object.fromEntries(plugins.map((p) => [p.planned.entry.manifest.name, this.hashOf(p.planned.entry)])),
      binding: driftBinding(
        Object.fromEntries(plan.plugins.filter((p) => p.ref.onDrift).map((p) => [p.entry.manifest.name, p.ref.onDrift!])),
        pinned,
      ),
      // A worker drives a run set to pin on the runtime resume would use (forRun); a pinned runtime is
      // released when nothing runs on it any more.
      runtimeFor: pinned || !plan.plugins.some((p) => p.ref.onDrift === 'pin') ? undefined : (runId) => this.pinnedFor(name, runId),
      onIdle: pinned ? () => this.pinnedRuns.release(loaded) : undefined,
    })
    const loaded: LoadedAgent = { runtime, ctx, plan, plugins, scope }
    // A runtime pinned for one run is not the agent's: the caller keeps it (forRun).
    if (!pinned) this.loaded.set(name, loaded)
    return loaded
  }
}

// Sealed: a plugin importing cordage/host must not be able to patch the running host (say, to capture an
// agent runtime and approve its own calls).
Object.freeze(Cordage.prototype)
