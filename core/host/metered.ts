/**
 * @module host/metered
 * Token and cost budgets are enforced by a plugin that provides `meter` (plugins/budgets): an agent
 * whose runs may carry such budgets without one is refused when the preset loads, naming the plugin
 * to add, rather than run unbounded. Its runs carry them when its own budgets set them, and when an
 * agent that sets them may start it (a child's budgets are capped by its parent's) or hand it a run.
 */
import type { Code } from '../contracts/errors.ts'
import { meterMissing, meteredBudgets } from '../contracts/services/meter.ts'
import type { AgentSpec, Preset } from './preset.ts'

export function meterProblems(preset: Preset, spec: AgentSpec, providers: Record<string, unknown>): { code: Code; message: string }[] {
  if (providers.meter) return []
  const own = meteredBudgets(spec.budgets)
  const at = (key: string) => `${preset.locate(key)} ${key}`
  if (own.length) return [{ code: 'service_missing', message: `${at(`${spec.at}.budgets`)}: ${meterMissing(spec.name, own)}` }]
  for (const other of Object.values(preset.agents)) {
    const via = other.spawns.includes(spec.name) ? 'spawns' : other.handoffs.includes(spec.name) ? 'handoffs' : undefined
    const needs = meteredBudgets(other.budgets)
    if (via && needs.length) {
      const carried = `agent "${other.name}" may pass its runs' budgets on to agent "${spec.name}" (a child's are capped by its parent's)`
      return [{ code: 'service_missing', message: `${at(`${other.at}.${via}`)}: ${carried}, and ${meterMissing(spec.name, needs)}` }]
    }
  }
  return []
}
