/**
 * @module swap-spec
 * What a swap asks for, as a change to the agent's spec: the plugin it replaces (by name), and the
 * reference that replaces it (another version from the catalogue, another folder, another config, or
 * a rebuilt entry from a hot reload, which must keep the plugin's name). The agent is then planned
 * again from that spec, so a swap is checked exactly like a start.
 */
import { CordageError } from '../contracts/errors.ts'
import type { CatalogEntry } from './catalog.ts'
import type { LoadedPlugin } from './plug.ts'
import type { AgentSpec, PluginRef } from './preset.ts'
import type { AgentPlan } from './resolve.ts'

/** What a plugin is swapped for. */
export interface SwapTarget {
  version?: string
  path?: string
  config?: Record<string, unknown>
  /** A rebuilt entry (hot reload): the plugin's folder built again. */
  entry?: CatalogEntry
}

/** The plugin `plugin` of a loaded agent, the reference replacing it, and the agent's spec with it. */
export function swapSpec(
  loaded: { plan: AgentPlan; plugins: LoadedPlugin[] },
  agent: string,
  plugin: string,
  target: SwapTarget,
): { current: LoadedPlugin; ref: PluginRef; spec: AgentSpec } {
  const current = loaded.plugins.find((p) => p.planned.entry.manifest.name === plugin)
  if (!current)
    throw new CordageError(
      'plugin_not_found',
      `agent "${agent}" has no plugin "${plugin}"; it has ${loaded.plugins.map((p) => p.planned.entry.manifest.name).join(', ')}`,
    )
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
  if (target.entry && target.entry.manifest.name !== plugin) {
    throw new CordageError(
      'manifest_invalid',
      `the rebuilt plugin at ${target.entry.dir} is now named "${target.entry.manifest.name}"; agent "${agent}" uses it as "${plugin}" (renaming needs a preset change and a restart)`,
    )
  }
  return { current, ref, spec }
}
