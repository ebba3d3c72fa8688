/**
 * @module host/app
 * A Cordage application: one cordis root, and the agents of a preset, each in its own isolated
 * context with its own plugin versions. This is what the CLI (and later the playground) drives.
 */
import { Context, Logger } from 'cordis'
import { AgentRuntime } from '../agent.ts'
import { createAgentContext } from '../cordis.ts'
import { agentDirectory } from './agents.ts'
import { CordageError } from '../errors.ts'
import { PluginCatalog } from './catalog.ts'
import { handledErrors, plugOne, unplug, type LoadedPlugin } from './plug.ts'
import { loadPreset, type AgentSpec, type PluginRef, type Preset } from './preset.ts'
import { planAgent, type AgentPlan } from './resolve.ts'

export interface CordageOptions {
  /** Plugins to choose from; the built-in plugins/ folder by default. */
  catalog?: PluginCatalog
  /** Only plug these agents (all are still checked). */
  agents?: string[]
  /** Where errors raised inside cordis (a plugin's listener, a late failure) are reported. Default: stderr. */
  onError?: (error: unknown) => void
  /** Use this cordis root (to listen to plugin events before loading starts, or to embed Cordage). */
  root?: Context
  /**
   * Start only each agent's store (the preset is still checked whole): for reading runs, which must not
   * start tool servers or need a model key. Such an app cannot start or steer runs.
   */
  storeOnly?: boolean
}

interface LoadedAgent {
  runtime: AgentRuntime
  ctx: Context
  plan: AgentPlan
  plugins: LoadedPlugin[]
}

export class Cordage {
  private loaded = new Map<string, LoadedAgent>()
  private plans = new Map<string, AgentPlan>()
  private storeOnly = false

  private constructor(readonly preset: Preset, readonly catalog: PluginCatalog, readonly root: Context, onError: (error: unknown) => void) {
    // cordis logs plugin failures to stdout under the "app" logger; the host reports them itself
    // (as CordageErrors naming the plugin), so that logger is silenced and errors go to onError.
    Logger.levels.app = Logger.SILENT
    this.root.on('internal/error', (error: unknown) => {
      // Deferred: a failure while a plugin starts is thrown by plugOne as a CordageError and not reported twice.
      setImmediate(() => { if (!(error && typeof error === 'object' && handledErrors.has(error))) onError(error) })
    })
  }

  /**
   * Load a preset: check every agent, then plug the chosen ones.
   * @throws CordageError (`preset_*`, `plugin_*`, `manifest_invalid`, `service_missing`); nothing stays plugged
   */
  static async fromPreset(file: string, options: CordageOptions = {}): Promise<Cordage> {
    const preset = loadPreset(file)
    const catalog = options.catalog ?? (await PluginCatalog.scan())
    const app = new Cordage(preset, catalog, options.root ?? new Context(), options.onError ?? ((error) => console.error('[cordage]', error)))
    const wanted = options.agents ?? Object.keys(preset.agents)
    for (const name of wanted) {
      if (!preset.agents[name]) {
        throw new CordageError('agent_not_found', `preset ${preset.shown} has no agent "${name}"; agents: ${Object.keys(preset.agents).join(', ')}`)
      }
    }
    const plans = new Map<string, AgentPlan>()
    for (const spec of Object.values(preset.agents)) plans.set(spec.name, await planAgent(preset, spec, catalog))
    app.plans = plans
    app.storeOnly = options.storeOnly ?? false
    try {
      for (const name of wanted) await app.plugAgent(plans.get(name)!, options.storeOnly ?? false)
    } catch (error) {
      await app.stop()
      throw error
    }
    return app
  }

  agent(name: string): AgentRuntime {
    const agent = this.loaded.get(name)
    if (!agent) throw new CordageError('agent_not_found', `agent "${name}" is not loaded; loaded: ${[...this.loaded.keys()].join(', ') || 'none'}`)
    return agent.runtime
  }

  /** An agent of the preset, plugged now if it was not loaded (a subagent or handoff target of a loaded one). */
  async ensureAgent(name: string): Promise<AgentRuntime> {
    if (this.loaded.has(name)) return this.agent(name)
    const plan = this.plans.get(name)
    if (!plan) throw new CordageError('agent_not_found', `preset ${this.preset.shown} has no agent "${name}"`)
    if (this.storeOnly) throw new CordageError('agent_not_found', `agent "${name}" is not loaded (only stores are loaded for this command)`)
    const loading = this.loading.get(name) ?? this.plugAgent(plan, false).finally(() => this.loading.delete(name))
    this.loading.set(name, loading)
    await loading
    return this.agent(name)
  }

  private loading = new Map<string, Promise<void>>()

  agentNames(): string[] {
    return [...this.loaded.keys()]
  }

  /** The plugins an agent runs now: name → version. */
  pluginsOf(agent: string): Record<string, string> {
    const loaded = this.loaded.get(agent)
    if (!loaded) throw new CordageError('agent_not_found', `agent "${agent}" is not loaded`)
    return Object.fromEntries(loaded.plugins.map((p) => [p.planned.entry.manifest.name, p.planned.entry.manifest.version]))
  }

  /**
   * Replace one plugin of a live agent at the next step boundary of its runs: the step in flight finishes
   * on the old version, the next step uses the new one. The replacement is checked like a preset entry
   * (version, config, every requirement in both directions) before the old one is touched; if it fails
   * to start, the old version is plugged back and the error is thrown.
   */
  async swap(agent: string, plugin: string, target: { version?: string; path?: string; config?: Record<string, unknown> }): Promise<{ from: string; to: string }> {
    const loaded = this.loaded.get(agent)
    if (!loaded) throw new CordageError('agent_not_found', `agent "${agent}" is not loaded`)
    const current = loaded.plugins.find((p) => p.planned.entry.manifest.name === plugin)
    if (!current) throw new CordageError('plugin_not_found', `agent "${agent}" has no plugin "${plugin}"; it has ${loaded.plugins.map((p) => p.planned.entry.manifest.name).join(', ')}`)
    const old = current.planned.ref
    const ref: PluginRef = {
      ...old,
      plugin: target.path ? undefined : (old.plugin ?? current.planned.entry.manifest.name),
      path: target.path ?? (target.version ? undefined : old.path),
      version: target.version ?? (target.path ? '*' : old.version),
      config: target.config ?? old.config,
    }
    const spec: AgentSpec = {
      ...loaded.plan.spec,
      model: loaded.plan.spec.model === old ? ref : loaded.plan.spec.model,
      plugins: loaded.plan.spec.plugins.map((p) => (p === old ? ref : p)),
    }
    const plan = await planAgent(this.preset, spec, this.catalog)
    const next = plan.plugins.find((p) => p.ref === ref)!
    const from = `${current.planned.entry.manifest.name}@${current.planned.entry.manifest.version}`
    const to = `${next.entry.manifest.name}@${next.entry.manifest.version}`

    await loaded.runtime.gate.exclusive(async () => {
      // A service can be set by one provider at a time: the old one leaves first. The gate holds every
      // run of the agent at a step boundary meanwhile, so no step sees the gap.
      unplug(loaded.ctx, agent, current, 'swap')
      try {
        const replacement = await plugOne(loaded.ctx, agent, next)
        loaded.plugins[loaded.plugins.indexOf(current)] = replacement
        loaded.plan = plan
        loaded.runtime.plugins[next.entry.manifest.name] = next.entry.manifest.version
      } catch (error) {
        const restored = await plugOne(loaded.ctx, agent, current.planned)
        loaded.plugins[loaded.plugins.indexOf(current)] = restored
        throw error
      }
    })
    return { from, to }
  }

  /** Dispose every agent's plugins (after their runs pause or end). */
  async stop(): Promise<void> {
    for (const [name, agent] of this.loaded) {
      await agent.runtime.idle()
      for (const p of [...agent.plugins].reverse()) unplug(agent.ctx, name, p, 'stop')
    }
    this.loaded.clear()
  }

  private async plugAgent(plan: AgentPlan, storeOnly: boolean): Promise<void> {
    const name = plan.spec.name
    const ctx = createAgentContext(this.root, name).extend({ baseDir: plan.preset.dir })
    // The host's own service: the preset's other agents, for subagents and handoffs.
    ctx.set('agents', agentDirectory(this, name))
    const plugins: LoadedPlugin[] = []
    const wanted = storeOnly ? plan.plugins.filter((p) => p.entry.manifest.provides?.store) : plan.plugins
    try {
      for (const planned of wanted) plugins.push(await plugOne(ctx, name, planned))
    } catch (error) {
      for (const p of plugins.reverse()) unplug(ctx, name, p, 'rollback')
      throw error
    }
    const runtime = new AgentRuntime(ctx, {
      name, defaultTask: plan.spec.task, budgets: plan.spec.budgets, contextTokens: plan.spec.contextTokens, parallelTools: plan.spec.parallelTools, modelRetry: plan.spec.retry,
      ...plan.spec.durability,
      handoff: async (runId, to) => (await (await this.ensureAgent(to)).acceptHandoff(runId)).done,
      plugins: Object.fromEntries(plugins.map((p) => [p.planned.entry.manifest.name, p.planned.entry.manifest.version])),
    })
    this.loaded.set(name, { runtime, ctx, plan, plugins })
  }
}
