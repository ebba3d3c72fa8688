/**
 * A preset of one or more agents sketched in a few lines (a scripted model, policy-rules, the support
 * desk, subagents), all on one SQLite file in a temporary folder, and opened as apps the way the CLI
 * opens them: two apps on one file are two processes sharing a store. A test file that uses it
 * registers `afterEach(stopApps)` and `after(removeDirs)`.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { meteredBudgets } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { tempDir } from './temp.ts'

export const allowAll = [{ id: 'all', verdict: 'allow', match: {} }]

const dirs: string[] = []

/** A temporary folder that removeDirs removes. */
export function scratchDir(prefix = 'cordage-preset-'): string {
  const dir = tempDir(prefix)
  dirs.push(dir)
  return dir
}

/** Removes every folder scratchDir made (`after(removeDirs)`). */
export function removeDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

export interface AgentSketch {
  script: unknown[]
  budgets?: Record<string, number>
  subagents?: Record<string, unknown>
  rules?: unknown[]
  verifier?: Record<string, unknown>
  desk?: Record<string, unknown>
  durability?: Record<string, number>
  plugins?: unknown[]
}

/** Writes preset.yml with one agent per sketch, every agent on the same runs.db, and gives its path. */
export function presetFile(agents: Record<string, AgentSketch>, dir = scratchDir()): string {
  // Token and cost budgets need the meter; a child's are capped by its parent's, so every agent gets it.
  const meter = Object.values(agents).some((a) => meteredBudgets(a.budgets).length) ? ['budgets'] : []
  const preset = {
    cordage: 1,
    agents: Object.fromEntries(
      Object.entries(agents).map(([name, a]) => [
        name,
        {
          description: `the ${name} agent`,
          budgets: { maxSteps: 8, ...a.budgets },
          // Whom the preset lets the agent reach: what its subagents tools offer.
          ...(a.subagents
            ? {
                spawns: (a.subagents as { agents?: string[] }).agents ?? [],
                handoffs: (a.subagents as { handoffs?: string[] }).handoffs ?? [],
              }
            : {}),
          ...(a.durability ? { durability: a.durability } : {}),
          model: { plugin: 'model-scripted', config: { script: a.script } },
          plugins: [
            { plugin: 'store-sqlite', config: { path: 'runs.db' } },
            'tools-registry',
            'context-basic',
            { plugin: 'verifier-basic', config: { minCount: 0, ...a.verifier } },
            { plugin: 'policy-rules', config: { default: 'deny', approvers: ['*'], rules: a.rules ?? allowAll } },
            { plugin: 'support-desk', config: { outbox: 'outbox.jsonl', slowLookupDelayMs: 5000, slowLookupTimeoutMs: 10_000, ...a.desk } },
            'previews',
            ...(a.subagents ? [{ plugin: 'subagents', config: a.subagents }] : []),
            ...meter,
            ...(a.plugins ?? []),
          ],
        },
      ]),
    ),
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return file
}

const apps: Cordage[] = []

/** Opens the preset as one app (one process), loading only `agents` when given (as `cordage run --agent`). */
export async function open(file: string, options: { agents?: string[] } = {}): Promise<Cordage> {
  const app = await Cordage.fromPreset(file, { agents: options.agents, onError: () => {} })
  apps.push(app)
  return app
}

/** Stops one app now (its process ends), so that stopApps does not stop it again. */
export async function close(app: Cordage): Promise<void> {
  await app.stop()
  apps.splice(apps.indexOf(app), 1)
}

/** Stops every app still open (`afterEach(stopApps)`). */
export async function stopApps(): Promise<void> {
  for (const app of apps.splice(0)) await app.stop()
}
