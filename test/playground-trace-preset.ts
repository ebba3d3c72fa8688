/**
 * The preset of the trace view's tests: the followup agent of presets/default.yml alone, in a temp
 * folder, with test/fixtures/plugins/flaky-desk added (check_stock fails transiently on its first
 * attempt and the kernel retries it) and a script of three steps: check_stock (a tool call and a retry),
 * record_followup (waits for approval), the answer. Each model answer reports usage, so the trace has
 * tokens and cost to show. Runs and the outbox stay in the folder.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parse, stringify } from 'yaml'
import { tempDir } from './helpers.ts'

const root = resolve(import.meta.dirname, '..')

export const TraceScript = [
  { tool: 'check_stock', args: { item: 'mugs' } },
  { tool: 'record_followup', args: { ticketId: 'T-1001', note: 'Refund approved; 12 mugs in stock.' } },
  { final: 'The follow-up is recorded on the ticket [source: T-1001].' },
]

/** The preset file; `modelDelayMs` is how long each model answer takes, `toolDelayMs` each check_stock attempt, `script` what the model answers. */
export function tracePresetCopy(modelDelayMs = 0, toolDelayMs = 0, script: readonly unknown[] = TraceScript): string {
  const dir = tempDir('cordage-playground-trace-')
  const raw = parse(readFileSync(join(root, 'presets/default.yml'), 'utf8'))
  const followup = raw.agents.followup
  followup.budgets = { maxSteps: 6, maxRepairs: 0 }
  followup.plugins = followup.plugins.map((p: string | { plugin?: string; config?: Record<string, unknown> }) => {
    if (p === 'store-sqlite@^1.0.0') return { plugin: 'store-sqlite', version: '^1.0.0', config: { path: 'runs.db' } }
    if (typeof p === 'object' && p.plugin === 'support-desk') return { ...p, config: { ...p.config, outbox: 'outbox.jsonl' } }
    return p
  })
  followup.plugins.push({ path: join(root, 'test/fixtures/plugins/flaky-desk'), config: { delayMs: toolDelayMs } })
  followup.model.config = {
    ...followup.model.config,
    delayMs: modelDelayMs,
    usage: { inputTokens: 120, outputTokens: 30, costUsd: 0.0002 },
    script,
  }
  const preset = join(dir, 'preset.yml')
  writeFileSync(preset, stringify({ ...raw, agents: { followup } }))
  return preset
}
