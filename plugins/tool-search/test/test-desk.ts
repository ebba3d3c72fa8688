/**
 * The support desk with a chosen `tools` provider, for this plugin's scenario tests: a real preset in a
 * temporary folder, loaded by the host with the built-in plugins and the scripted model. Modelled on
 * test/helpers.ts (whose preset always uses tools-registry), with a read-only policy fixture so the
 * scenarios depend on the policy contract, not on one policy plugin's config.
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stringify } from 'yaml'
import { readService, type AgentRuntime, type RunEvent, type RunState, type ToolView } from 'cordage'
import { BuiltinPluginsDir, Cordage, PluginCatalog } from 'cordage/host'
import { tempDir } from '../../../test/temp.ts'

export const RefundAnswer = 'Damaged items can be refunded in full within 30 days of delivery [source: policy/refunds#2].'

export const fixture = (name: string) => ({ path: resolve(import.meta.dirname, 'fixtures', name) })

export interface DeskOptions {
  script: unknown[]
  /** The preset entry of the `tools` provider; tool-search with no config by default. */
  tools?: unknown
  /** store-memory by default. */
  store?: unknown
  plugins?: unknown[]
  contextTokens?: number
  dir?: string
}

export interface Desk {
  app: Cordage
  agent: AgentRuntime
  dir: string
  presetFile: string
  events(runId: string): Promise<RunEvent[]>
  /** What the scripted model was shown, per request. */
  requests(): { stepIndex: number; tools: ToolView[]; messages: { role: string; text: string }[] }[]
  stop(): Promise<void>
}

export function writeDeskPreset(options: DeskOptions): { dir: string; presetFile: string } {
  const dir = options.dir ?? tempDir('tool-search-')
  const presetFile = join(dir, 'preset.yml')
  writeFileSync(
    presetFile,
    stringify({
      cordage: 1,
      agents: {
        support: {
          task: 'What is the refund window for damaged items?',
          budgets: { maxSteps: 10 },
          ...(options.contextTokens ? { contextTokens: options.contextTokens } : {}),
          retry: { attempts: 1, backoffMs: 1 },
          model: { plugin: 'model-scripted', config: { script: options.script } },
          plugins: [
            options.store ?? 'store-memory',
            options.tools ?? 'tool-search',
            'context-basic',
            'verifier-basic',
            fixture('policy-read-only'),
            { plugin: 'support-desk', config: { outbox: 'outbox.jsonl', slowLookupDelayMs: 5000, slowLookupTimeoutMs: 50 } },
            ...(options.plugins ?? []),
          ],
        },
      },
    }),
  )
  return { dir, presetFile }
}

/** The built-in plugins these scenarios name. */
const DeskPlugins = [
  'model-scripted',
  'store-memory',
  'store-sqlite',
  'tool-search',
  'tools-registry',
  'context-basic',
  'verifier-basic',
  'support-desk',
]

/**
 * A catalog of only the plugins the scenarios use, rather than every folder under plugins/: a plugin
 * folder that another change leaves half-built must not fail this plugin's tests.
 */
export async function deskCatalog(): Promise<PluginCatalog> {
  const catalog = new PluginCatalog()
  for (const name of DeskPlugins) await catalog.addFolder(join(BuiltinPluginsDir, name))
  return catalog
}

export async function searchDesk(options: DeskOptions): Promise<Desk> {
  const { dir, presetFile } = writeDeskPreset(options)
  const errors: unknown[] = []
  const app = await Cordage.fromPreset(presetFile, { catalog: await deskCatalog(), onError: (error) => errors.push(error) })
  const agent = app.agent('support')
  return {
    app,
    agent,
    dir,
    presetFile,
    events: (runId) => agent.store().load(runId),
    requests: () => readService<{ requests: ReturnType<Desk['requests']> }>(agent.ctx, 'model')!.value.requests,
    stop: async () => {
      await app.stop()
      await new Promise((r) => setImmediate(r))
      if (errors.length) throw new Error(`the host reported ${errors.length} error(s): ${errors.map(String).join('; ')}`)
    },
  }
}

/** The tools each step's `step/context` recorded, by step id. */
export function toolsByStep(events: RunEvent[]): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const e of events) if (e.type === 'step/context') out[e.stepId!] = [...e.data.tools]
  return out
}

export type { RunState }
