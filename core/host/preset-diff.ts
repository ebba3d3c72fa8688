/**
 * @module host/preset-diff
 * What an edit of a preset asks of live agents (`cordage dev`, host/preset-reload.ts): for each agent,
 * the plugins whose config or version changed (each a swap of that plugin: {@link Cordage.swap}), or
 * the reasons the agent has to be planned again (a plugin added or removed, another model, changed
 * budgets or other agent settings, another `onDrift`, another list of secrets): those cannot be swapped
 * in one plugin at a time. A swap that would change what an agent's runs scrub (its plugins' secrets:
 * {@link secretsChanged}) is a new plan too: an agent computes its secrets when it is planned, not on a swap.
 */
import { isDeepStrictEqual } from 'node:util'
import type { AgentSpec, PluginRef, Preset } from './preset.ts'
import type { PlannedPlugin } from './resolve.ts'
import { secretsOf } from './secrets.ts'

/** One plugin of a live agent to swap: its preset entry before and after the edit. */
export interface PluginChange {
  agent: string
  /** The plugin's name as the agent runs it. */
  name: string
  before: PluginRef
  after: PluginRef
  /** What changed: `config`, `version`, or both. */
  changed: ('config' | 'version')[]
}

export interface PresetChanges {
  swaps: PluginChange[]
  /** Why the edit needs the agents planned again; empty when swaps are enough. */
  replan: string[]
}

/** The preset-wide keys and the agents' specs (lock applied), as the agents were or would be planned. */
export interface PresetView {
  preset: Pick<Preset, 'secrets' | 'logLevel'>
  specs: Record<string, AgentSpec>
}

/** Agent settings other than its plugins: any change to them is a new plan. */
const Settings = [
  'description',
  'task',
  'budgets',
  'contextTokens',
  'parallelTools',
  'retry',
  'durability',
  'serviceTimeouts',
  'artifactAboveBytes',
  'audit',
  'spawns',
  'handoffs',
] as const

/**
 * The changes from `before` to `after`; `live` lists the plugins each live agent runs (name and folder).
 * Agents of the preset that are not live count too: one of them may be started later (a subagent) from
 * the plan made at start, which a swap cannot reach.
 */
export function presetChanges(before: PresetView, after: PresetView, live: Record<string, { name: string; dir: string }[]>): PresetChanges {
  const replan: string[] = []
  const swaps: PluginChange[] = []
  if (!isDeepStrictEqual(before.preset.secrets, after.preset.secrets)) replan.push('the list of secrets changed')
  if (before.preset.logLevel !== after.preset.logLevel) replan.push('logLevel changed')
  const names = new Set([...Object.keys(before.specs), ...Object.keys(after.specs)])
  for (const agent of names) {
    const was = Object.hasOwn(before.specs, agent) ? before.specs[agent] : undefined
    const now = Object.hasOwn(after.specs, agent) ? after.specs[agent] : undefined
    if (!was || !now) {
      replan.push(`agent "${agent}" was ${was ? 'removed' : 'added'}`)
      continue
    }
    const settings = Settings.filter((key) => !isDeepStrictEqual(was[key], now[key]))
    if (settings.length) replan.push(`agent "${agent}": ${settings.join(', ')} changed`)
    const refsBefore = [was.model, ...was.plugins]
    const refsAfter = [now.model, ...now.plugins]
    if (identity(was.model) !== identity(now.model)) {
      replan.push(`agent "${agent}": the model changed from ${label(was.model)} to ${label(now.model)}`)
      continue
    }
    const added = refsAfter.filter((r) => !refsBefore.some((b) => identity(b) === identity(r)))
    const removed = refsBefore.filter((r) => !refsAfter.some((a) => identity(a) === identity(r)))
    if (added.length || removed.length || refsBefore.length !== refsAfter.length) {
      const what = [
        added.length ? `added ${added.map(label).join(', ')}` : '',
        removed.length ? `removed ${removed.map(label).join(', ')}` : '',
      ].filter(Boolean)
      replan.push(`agent "${agent}": the plugin list changed${what.length ? ` (${what.join('; ')})` : ''}`)
      continue
    }
    for (const old of refsBefore) {
      const next = refsAfter.find((r) => identity(r) === identity(old))!
      if (old.onDrift !== next.onDrift) replan.push(`agent "${agent}": onDrift of ${label(old)} changed`)
      const changed: PluginChange['changed'] = []
      if (!isDeepStrictEqual(old.config, next.config)) changed.push('config')
      if (old.version !== next.version) changed.push('version')
      if (!changed.length) continue
      const plugins = Object.hasOwn(live, agent) ? live[agent] : undefined
      const name = old.path === undefined ? old.plugin : plugins?.find((p) => p.dir === old.path)?.name
      // An agent that is not live has no plugin to swap: its plan is the one made at start.
      if (!plugins) replan.push(`agent "${agent}" (not started here) changed`)
      else if (name === undefined || !plugins.some((p) => p.name === name))
        replan.push(`agent "${agent}": ${label(old)} is not running as the preset names it`)
      else swaps.push({ agent, name, before: old, after: next, changed })
    }
  }
  return { swaps, replan: [...new Set(replan)] }
}

/** The plugin an entry names: its catalogue name, or its folder. */
function identity(ref: PluginRef): string {
  return ref.path !== undefined ? `path:${ref.path}` : `plugin:${ref.plugin}`
}

function label(ref: PluginRef): string {
  return ref.path !== undefined ? ref.path : `${ref.plugin}`
}

/**
 * Why swapping an agent from the plugins of plan `before` to those of plan `after` would change what its
 * runs scrub, or undefined when it would not. The secrets are read as the agent reads them when it is
 * planned (host/secrets.ts: the variables named by the config keys a manifest lists under `secrets`, such
 * as model-openai's `apiKeyEnv`, set in `env`): a new manifest `secrets` list or a renamed variable
 * would otherwise bring a key that the runs, still scrubbing the old ones, record in the clear.
 */
export function secretsChanged(
  agent: string,
  before: readonly PlannedPlugin[],
  after: readonly PlannedPlugin[],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const was = secretsOf([], before, env)
  const now = secretsOf([], after, env)
  const names = (found: typeof was) => [...found.secrets.map((s) => `${s.name}=${s.value}`), ...found.tooShort.map((n) => `${n} (short)`)]
  if (isDeepStrictEqual(names(was), names(now))) return undefined
  const added = now.secrets.map((s) => s.name).filter((n) => !was.secrets.some((s) => s.name === n))
  return `agent "${agent}": the secrets its plugins name changed${added.length ? ` (now also ${added.join(', ')})` : ''}`
}
