/**
 * Presets for tests as plain objects: the scripted model and the in-memory store, so a test runs
 * offline and leaves nothing behind.
 */
import { MeterPlugin, meteredBudgets } from '../contracts/services/meter.ts'

/** One answer of the scripted model (plugins/model-scripted): exactly one of tool, calls, final, ask. */
export interface ScriptStep {
  tool?: string
  args?: unknown
  calls?: { tool: string; args?: unknown }[]
  final?: string
  ask?: string
  repeat?: number
  failFirst?: { code: 'model_transient' | 'model_permanent'; times: number }
  usage?: { inputTokens?: number; outputTokens?: number; costUsd?: number }
  delayMs?: number
}

/** A plugin entry as a preset writes it: a name (`store-memory@^2`), or an object with plugin or path. */
export type PluginEntry = string | { plugin?: string; path?: string; version?: string; config?: Record<string, unknown>; onDrift?: string }

/** The model entry of a preset: model-scripted answering from `script`, one step per model call. */
export function scriptedModel(script: ScriptStep[], config: Record<string, unknown> = {}): PluginEntry {
  if (!Array.isArray(script) || script.length === 0)
    throw new TypeError('scriptedModel: give the script as a non-empty array of steps, e.g. [{ final: "Hello." }]')
  return { plugin: 'model-scripted', config: { ...config, script } }
}

export interface TestPresetOptions {
  /** The agent's name (default `agent`). */
  agent?: string
  /** Its default task (default: "Test task."). */
  task?: string
  /** What the model answers, in order; or a model entry of your own (a real adapter). */
  script: ScriptStep[] | PluginEntry
  /** Policy rules of policy-rules 2 (`{ id, verdict, match }`). Default deny: a call no rule allows is refused. */
  rules?: unknown[]
  /** Who may approve an `ask` (default `['*']`: anyone, as in a test). */
  approvers?: string[]
  /** The plugins under test and any others (a verifier among them, or `verifier-basic`). */
  plugins: PluginEntry[]
  /** With maxTokens or maxCostUsd, the budgets plugin (the meter) is added, unless `plugins` lists it. */
  budgets?: Record<string, number>
}

/**
 * A one-agent preset object: store-memory, tools-registry, context-basic, policy-rules (default deny,
 * your rules), the scripted model, then your plugins. `path` entries resolve against the folder given
 * to {@link startApp} (the working directory by default).
 */
export function testPreset(options: TestPresetOptions): Record<string, unknown> {
  const name = options.agent ?? 'agent'
  return {
    cordage: 1,
    agents: {
      [name]: {
        task: options.task ?? 'Test task.',
        budgets: { maxSteps: 8, ...options.budgets },
        model: Array.isArray(options.script) ? scriptedModel(options.script) : options.script,
        plugins: [
          'store-memory',
          'tools-registry',
          'context-basic',
          {
            plugin: 'policy-rules',
            version: '^2.0.0',
            config: { default: 'deny', approvers: options.approvers ?? ['*'], rules: options.rules ?? [] },
          },
          ...options.plugins,
          ...meterFor(options),
        ],
      },
    },
  }
}

/** The meter token and cost budgets need (plugins/budgets), when they are set and no plugin given is it. */
function meterFor(options: TestPresetOptions): PluginEntry[] {
  const named = options.plugins.some((p) => (typeof p === 'string' ? p.split('@')[0] : p.plugin) === MeterPlugin)
  return meteredBudgets(options.budgets).length && !named ? [MeterPlugin] : []
}
