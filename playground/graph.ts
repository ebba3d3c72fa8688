/**
 * @module playground/graph
 * What the agents view shows: each agent of the preset with the plugins it runs now (name, version,
 * the range the preset pins, where it comes from, the versions installed side by side) and its service
 * graph: which plugin provides each service, and who requires it with which range. Built from the
 * host's plan of the agent (manifests only, no plugin code runs) and the versions loaded now, which a
 * swap or a reload may have changed since the preset was read.
 */
import semver from 'semver'
import { HostProvided, KernelOptional, KernelRequires } from 'cordage'
import { planAgent, type Cordage } from 'cordage/host'
import type { DevReloader } from 'cordage/host'

/** One plugin of an agent, as the page shows it. */
export interface PluginView {
  name: string
  /** The version loaded now. */
  version: string
  /** The range the preset pins (`*` when it gives none). */
  range: string
  /** `builtin` (plugins/) or `path` (a folder named in the preset). */
  origin: 'builtin' | 'path'
  description?: string
  provides: Record<string, string>
  requires: Record<string, string>
  optional: Record<string, string>
  /** Every installed version of this plugin, newest first. */
  installed: string[]
  /** The agent's model entry. */
  model: boolean
  /** With hot reload on: the bundle hash of the code serving now (unset while unknown, or after a fail-closed fallback). */
  hash?: string
}

/** A requirement edge of the service graph. */
export interface Need {
  /** A plugin name, or `kernel` for what the loop itself needs. */
  from: string
  range: string
  required: boolean
  /** The provider's contract version satisfies the range. */
  ok: boolean
}

export interface ServiceView {
  service: string
  /** `name@version` of the provider, `host` for a service the host gives, or nothing. */
  provider?: string
  /** The contract version the provider implements. */
  contract?: string
  neededBy: Need[]
}

export interface AgentView {
  name: string
  description?: string
  task?: string
  budgets: Record<string, unknown>
  plugins: PluginView[]
  services: ServiceView[]
  /** The agent's plugins could not be planned (a plugin changed on disk since); the message says why. */
  problem?: string
}

/** Every loaded agent of the app, for `GET /api/agents`. */
export async function describeAgents(app: Cordage, reloader?: DevReloader): Promise<AgentView[]> {
  const out: AgentView[] = []
  for (const name of app.agentNames()) out.push(await describeAgent(app, name, reloader))
  return out
}

async function describeAgent(app: Cordage, name: string, reloader?: DevReloader): Promise<AgentView> {
  const spec = app.preset.agents[name]
  const loaded = app.pluginsOf(name)
  const base = { name, description: spec.description, task: spec.task, budgets: { ...spec.budgets } }
  let plan
  try {
    plan = await planAgent(app.preset, spec, app.catalog)
  } catch (error) {
    const plugins = Object.entries(loaded).map(([plugin, version]) => ({
      name: plugin,
      version,
      range: '*',
      origin: 'builtin' as const,
      provides: {},
      requires: {},
      optional: {},
      installed: installed(app, plugin),
      model: false,
    }))
    return { ...base, plugins, services: [], problem: (error as Error).message }
  }
  const plugins: PluginView[] = plan.plugins.map((p) => {
    const pluginName = p.entry.manifest.name
    const version = loaded[pluginName] ?? p.entry.manifest.version
    // After a swap the loaded version may differ from the planned one: show that version's manifest.
    const manifest =
      app.catalog.entries().find((e) => e.manifest.name === pluginName && e.manifest.version === version)?.manifest ?? p.entry.manifest
    return {
      name: pluginName,
      version,
      range: p.ref.version,
      origin: p.entry.origin,
      description: manifest.description,
      provides: { ...manifest.provides },
      requires: { ...manifest.requires },
      optional: { ...manifest.optional },
      installed: installed(app, pluginName),
      model: p.ref === spec.model,
      ...(reloader ? { hash: reloader.hashOf(name, p.entry.dir) } : {}),
    }
  })
  return { ...base, plugins, services: serviceGraph(plugins) }
}

function installed(app: Cordage, plugin: string): string[] {
  return app.catalog
    .entries()
    .filter((e) => e.manifest.name === plugin)
    .map((e) => e.manifest.version)
    .sort(semver.rcompare)
}

/** Providers and the requirement edges into them, services in a stable order (kernel services first). */
export function serviceGraph(plugins: PluginView[]): ServiceView[] {
  const services = new Map<string, ServiceView>()
  const service = (name: string) => {
    let view = services.get(name)
    if (!view) services.set(name, (view = { service: name, neededBy: [] }))
    return view
  }
  for (const name of [...Object.keys(KernelRequires), ...Object.keys(KernelOptional)]) service(name)
  for (const p of plugins) {
    for (const [name, contract] of Object.entries(p.provides))
      Object.assign(service(name), { provider: `${p.name}@${p.version}`, contract })
  }
  const need = (from: string, name: string, range: string, required: boolean) => {
    const view = service(name)
    if (!view.provider && HostProvided[name]) Object.assign(view, { provider: 'host', contract: HostProvided[name] })
    view.neededBy.push({ from, range, required, ok: !!view.contract && semver.satisfies(view.contract, range) })
  }
  for (const [name, range] of Object.entries(KernelRequires)) need('kernel', name, range, true)
  for (const [name, range] of Object.entries(KernelOptional)) need('kernel', name, range, false)
  for (const p of plugins) {
    for (const [name, range] of Object.entries(p.requires)) need(p.name, name, range, true)
    for (const [name, range] of Object.entries(p.optional)) need(p.name, name, range, false)
  }
  // An optional kernel service nobody provides says nothing; leave it out.
  return [...services.values()].filter((s) => s.provider || s.neededBy.some((n) => n.required))
}
