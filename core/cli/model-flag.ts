/**
 * @module cli/model-flag
 * `--model PLUGIN[@RANGE]` (run, dev): run an agent of a preset on another model plugin without editing
 * the preset. It becomes `--set` overrides after the user's own (host/layers.ts applies them, so a
 * problem is reported as any --set's is): the agent's `model` entry is replaced by the plugin named, and
 * `--set model.KEY=VALUE` sets a key of that new entry (`model.config.baseUrl=...`). The preset's model
 * config goes along only when the plugin is the same one: another plugin's config would not fit it.
 * The plugin is checked against the catalogue first, so a typo lists the installed model plugins.
 */
import { semver } from '../host/semver.ts'
import { CordageError } from '../contracts/errors.ts'
import type { PluginCatalog } from '../host/catalog.ts'
import { loadPreset } from '../host/preset.ts'
import { closest } from '../kit/closest.ts'

/** What `--model` asks for, once checked. */
export interface ModelOverride {
  /** The agent whose model is replaced: `--agent`, or the preset's first. */
  agent: string
  plugin: string
  range: string
  /** The user's `--set`s, then those that replace the model entry and set keys inside it. */
  sets: string[]
  /** A message about the preset as loaded, with the overrides named as the user wrote them. */
  shown(message: string): string
}

/** `model.config.baseUrl=...`: a `--set` of the --model entry. */
const ModelSet = /^model(\.|\[|=)/

/**
 * The overrides `--model` (and the `--set model.…` that go with it) make for `file`.
 * @returns undefined when there is no --model (and no --set model.…)
 * @throws CordageError `invalid_input` for a malformed value or a `--set model.…` without --model;
 *   `plugin_not_found` / `plugin_version_unsatisfiable` listing the installed model plugins
 */
export function modelOverride(
  file: string,
  flags: { model?: unknown; agent?: unknown; set?: unknown },
  catalog: PluginCatalog,
): ModelOverride | undefined {
  const all = (flags.set as string[] | undefined) ?? []
  const own = all.filter((s) => ModelSet.test(s))
  const rest = all.filter((s) => !ModelSet.test(s))
  if (flags.model === undefined) {
    if (own.length)
      throw new CordageError(
        'invalid_input',
        `--set ${own[0]}: a "model." key sets the model that --model names; add --model PLUGIN, or set agents.NAME.model.${own[0].replace(ModelSet, '')} to change the preset's model`,
      )
    return undefined
  }
  const { plugin, range } = parseModel(String(flags.model))
  checkInstalled(plugin, range, catalog)
  const preset = loadPreset(file, { sets: rest })
  const agent = (flags.agent as string | undefined) ?? Object.keys(preset.agents)[0]
  if (!Object.hasOwn(preset.agents, agent))
    throw new CordageError(
      'agent_not_found',
      `preset ${preset.shown} has no agent "${agent}"; agents: ${Object.keys(preset.agents).join(', ')}`,
    )
  const same = preset.agents[agent].model.plugin === plugin
  const entry = `agents.${agent}.model`
  const replace = same ? `${entry}.version=${JSON.stringify(range)}` : `${entry}=${JSON.stringify({ plugin, version: range })}`
  const sets = [...rest, replace, ...own.map((s) => `${entry}${s.slice('model'.length)}`)]
  const shown = (message: string) =>
    message.split(`--set ${replace}`).join(`--model ${flags.model}`).split(`--set ${entry}`).join('--set model')
  return { agent, plugin, range, sets, shown }
}

/** `model-anthropic` or `model-scripted@^1`. */
export function parseModel(text: string): { plugin: string; range: string } {
  const at = text.lastIndexOf('@')
  const plugin = at > 0 ? text.slice(0, at) : text
  const range = at > 0 ? text.slice(at + 1) : '*'
  if (!/^[a-z][a-z0-9-]*$/.test(plugin))
    throw new CordageError(
      'invalid_input',
      `--model ${JSON.stringify(text)}: expected PLUGIN or PLUGIN@RANGE, such as model-anthropic or model-scripted@^1 (a plugin name is lower-case letters, digits and "-")`,
    )
  if (semver.validRange(range) === null)
    throw new CordageError('invalid_input', `--model ${text}: "${range}" is not a semver range; write one such as ^1, ~1.2 or 1.2.0`)
  return { plugin, range }
}

/** The plugin is installed, provides a model, and has a version in the range; else an error listing the model plugins. */
function checkInstalled(plugin: string, range: string, catalog: PluginCatalog): void {
  const models = catalog.providersOf('model')
  const names = [...new Set(models.map((e) => e.manifest.name))].sort()
  const listed = names
    .map(
      (n) =>
        `${n}@${models
          .filter((e) => e.manifest.name === n)
          .map((e) => e.manifest.version)
          .join('|')}`,
    )
    .join(', ')
  const versions = models.filter((e) => e.manifest.name === plugin)
  if (!versions.length) {
    const other = catalog.entries().find((e) => e.manifest.name === plugin)
    const hint = closest(plugin, names)
    throw new CordageError(
      'plugin_not_found',
      `--model ${plugin}: ${other ? `"${plugin}" is installed but provides no model (it provides ${Object.keys(other.manifest.provides ?? {}).join(', ') || 'nothing'})` : `no model plugin named "${plugin}" is installed${hint ? ` (did you mean "${hint}"?)` : ''}`}; installed model plugins: ${listed || 'none'}`,
    )
  }
  if (!versions.some((e) => semver.satisfies(e.manifest.version, range)))
    throw new CordageError(
      'plugin_version_unsatisfiable',
      `--model ${plugin}@${range}: no installed version of "${plugin}" satisfies ${range}; installed model plugins: ${listed}`,
    )
}
