/**
 * @module host/artifact-keys
 * The agent keys of the artifacts plugin (plugins/artifacts, docs/concepts/artifacts.md):
 * `artifactAboveBytes` and `audit.keepRedacted` are written on the agent and reach the plugin as its
 * config. Without the plugin every result is recorded inline and no raw copy is kept, so an agent that
 * sets either without it asks for something nothing would do: it is refused, naming the plugin.
 * (`audit.keepRedacted: false` asks for nothing, and passes.)
 */
import type { Code } from '../contracts/errors.ts'
import type { AgentSpec, PluginRef, Preset } from './preset.ts'

export const ArtifactsPlugin = 'artifacts'

interface Problem {
  code: Code
  message: string
}

/** The agent's keys the plugin takes: its config key, where the agent writes it, and the value. */
function agentKeys(spec: AgentSpec): { key: string; at: string; value: unknown }[] {
  const keys: { key: string; at: string; value: unknown }[] = []
  if (spec.artifactAboveBytes !== undefined)
    keys.push({ key: 'artifactAboveBytes', at: 'artifactAboveBytes', value: spec.artifactAboveBytes })
  if (spec.audit?.keepRedacted !== undefined) keys.push({ key: 'keepRedacted', at: 'audit.keepRedacted', value: spec.audit.keepRedacted })
  return keys
}

/** The plugin's entry with the agent's keys in its config; a key set in both places is a problem. */
export function withAgentKeys(preset: Preset, spec: AgentSpec, ref: PluginRef, problems: Problem[]): PluginRef {
  const config = { ...ref.config }
  for (const { key, at, value } of agentKeys(spec)) {
    if (Object.hasOwn(config, key)) {
      problems.push({
        code: 'plugin_config_invalid',
        message: `${preset.locate(`${spec.at}.${at}`)} ${spec.at}.${at} and ${ref.at}.config.${key} both set the artifacts plugin's ${key}: set it in one place`,
      })
      continue
    }
    config[key] = value
  }
  return { ...ref, config }
}

/** The problem of an agent that asks for what only the plugin does, without listing it. */
export function artifactsMissing(preset: Preset, spec: AgentSpec, listed: boolean): Problem | undefined {
  if (listed) return undefined
  const asked = agentKeys(spec).filter((k) => k.value !== false)
  if (!asked.length) return undefined
  const names = asked.map((k) => k.at).join(' and ')
  return {
    code: 'plugin_requirement_missing',
    message: `${preset.locate(`${spec.at}.${asked[0].at}`)} ${spec.at}: ${names} need${asked.length === 1 ? 's' : ''} the artifacts plugin, which keeps large and redacted results apart (without it every result is recorded inline): add it to ${spec.at}.plugins: - artifacts`,
  }
}
