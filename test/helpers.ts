/**
 * Test setup through the front door: a real preset file in a temporary folder, loaded by the host with
 * the built-in plugins, and helpers to read what a run left in the store and in the outbox.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { meteredBudgets, readService, type AgentRuntime, type RunEvent } from 'cordage'
import type { Cordage } from '../core/host/app.ts'
import type { ScriptEntry } from '../plugins/model-scripted/manifest.ts'
import type { ScriptedModel } from '../plugins/model-scripted/index.ts'
import { Outbox, type Followup } from '../plugins/support-desk/outbox.ts'

import { tempDir } from './temp.ts'

export { removeTemp, tempDir } from './temp.ts'

export const DefaultRules = [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'followups-need-approval', verdict: 'ask', match: { tool: 'record_followup' } },
]

export interface DeskOptions {
  script: ScriptEntry[]
  budgets?: Record<string, number>
  rules?: unknown[]
  verifier?: Record<string, unknown>
  desk?: Record<string, unknown>
  model?: Record<string, unknown>
  /** Replace the scripted model with this plugin entry (preset form), for example a real adapter. */
  modelPlugin?: unknown
  /** Extra plugin entries (preset form). */
  plugins?: unknown[]
  /** Leave out the threads plugin (plugins/threads): runs cannot join a thread then. */
  threads?: false
  /** Replace verifier-basic with this plugin entry. */
  verifierPlugin?: unknown
  /** Replace the policy-rules 2 entry, for example to pin the 1.x line. */
  policyPlugin?: unknown
  /** The meter (default: `budgets` when `budgets` sets tokens or cost, else none; null: none). */
  meterPlugin?: unknown
  contextTokens?: number
  parallelTools?: boolean
  /** Replace context-basic with this plugin entry. */
  contextPlugin?: unknown
  /** Replace store-memory with this plugin entry. */
  storePlugin?: unknown
  /** false: leave out the previews plugin (no preview with an approval request, no dry runs). */
  previews?: boolean
  /** The preset's top-level `secrets`. */
  secrets?: string[]
  serviceTimeouts?: Record<string, number>
  retry?: { attempts: number; backoffMs: number }
}

export interface Harness {
  app: Cordage
  agent: AgentRuntime
  dir: string
  presetFile: string
  outboxFile: string
  events(runId: string): Promise<RunEvent[]>
  types(runId: string): Promise<string[]>
  followups(): Followup[]
  model(): ScriptedModel
  /** Errors the host reported (cordis internal/error). A test that expects some must take them out. */
  errors: unknown[]
  /** Stops the app; fails if the host reported errors the test did not take out. */
  stop(): Promise<void>
}

/** The support desk preset with the given script, written to a temp folder and loaded. */
export async function supportDesk(options: DeskOptions): Promise<Harness> {
  const dir = tempDir()
  const outboxFile = join(dir, 'outbox.jsonl')
  const preset = deskPreset(options, 'outbox.jsonl')
  const presetFile = join(dir, 'preset.yml')
  writeFileSync(presetFile, stringify(preset))
  const errors: unknown[] = []
  // The host is loaded by the tests that start a desk, not by every file that imports a helper from here.
  const { Cordage } = await import('../core/host/app.ts')
  const app = await Cordage.fromPreset(presetFile, { onError: (error) => errors.push(error) })
  const agent = app.agent('support')
  return {
    app,
    agent,
    dir,
    presetFile,
    outboxFile,
    errors,
    events: (runId) => agent.store().load(runId),
    types: async (runId) => (await agent.store().load(runId)).map((e) => e.type),
    followups: () => new Outbox(outboxFile).entries(),
    model: () => readService<ScriptedModel>(agent.ctx, 'model')!.value,
    stop: async () => {
      await app.stop()
      await new Promise((r) => setImmediate(r))
      if (errors.length) throw new Error(`the host reported ${errors.length} unexpected error(s): ${errors.map(String).join('; ')}`)
    },
  }
}

export function deskPreset(options: DeskOptions, outbox: string) {
  return {
    cordage: 1,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    agents: {
      support: {
        task: 'What is the refund window for damaged items?',
        budgets: { maxSteps: 8, ...options.budgets },
        ...(options.contextTokens ? { contextTokens: options.contextTokens } : {}),
        ...(options.parallelTools !== undefined ? { parallelTools: options.parallelTools } : {}),
        ...(options.serviceTimeouts ? { serviceTimeouts: options.serviceTimeouts } : {}),
        retry: options.retry ?? { attempts: 3, backoffMs: 1 },
        model: options.modelPlugin ?? { plugin: 'model-scripted', config: { script: options.script, ...options.model } },
        plugins: [
          options.storePlugin ?? 'store-memory',
          'tools-registry',
          options.contextPlugin ?? 'context-basic',
          options.verifierPlugin ?? { plugin: 'verifier-basic', config: { ...options.verifier } },
          options.policyPlugin ?? {
            plugin: 'policy-rules',
            config: { default: 'deny', approvers: ['*'], rules: options.rules ?? DefaultRules },
          },
          { plugin: 'support-desk', config: { outbox, slowLookupDelayMs: 5000, slowLookupTimeoutMs: 50, ...options.desk } },
          ...(options.previews === false ? [] : ['previews']),
          ...(options.threads === false ? [] : ['threads']),
          ...meterOf(options),
          ...(options.plugins ?? []),
        ],
      },
    },
  }
}

/** The desk's meter: the one given, or `budgets` when its budgets set tokens or cost. */
export function meterOf(options: Pick<DeskOptions, 'budgets' | 'meterPlugin'>): unknown[] {
  if (options.meterPlugin !== undefined) return options.meterPlugin === null ? [] : [options.meterPlugin]
  return meteredBudgets(options.budgets).length ? ['budgets'] : []
}

/** Index of the first event of `type` (and action, when given); -1 when absent. */
export function indexOf(events: RunEvent[], type: string, actionId?: string): number {
  return events.findIndex((e) => e.type === type && (actionId === undefined || e.actionId === actionId))
}

export const refundAnswer = 'Damaged items can be refunded in full within 30 days of delivery [source: policy/refunds#2].'
