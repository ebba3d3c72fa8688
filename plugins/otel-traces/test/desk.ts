/**
 * The support desk with otel-traces, for this plugin's tests: a run that looks a policy up twice (the
 * first time for a topic that does not exist, so that tool fails), records a follow-up that policy
 * sends for approval, and answers with a citation once approved.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import { Cordage, PluginCatalog } from 'cordage/host'
import { deskPreset, refundAnswer, tempDir, type DeskOptions } from '../../../test/helpers.ts'
import { createOtelTraces } from '../index.ts'

export const Script: DeskOptions['script'] = [
  { tool: 'lookup_policy', args: { topic: 'warranty-on-the-moon' } },
  { tool: 'lookup_policy', args: { topic: 'refunds' } },
  { tool: 'record_followup', args: { ticketId: 'T-1', note: 'Refund approved.' } },
  { final: refundAnswer },
]

export const Rules = [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
]

export const Usage = { inputTokens: 120, outputTokens: 30, costUsd: 0.0002 }

/** A preset file for the desk with otel-traces configured as given; the store is SQLite, so a second app can resume. */
export function deskFile(otel: Record<string, unknown>, script: DeskOptions['script'] = Script, dir = tempDir('cordage-otel-')): string {
  const preset = deskPreset(
    {
      script,
      model: { usage: Usage },
      rules: Rules,
      storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      plugins: [{ plugin: 'otel-traces', config: otel }],
    },
    'outbox.jsonl',
  )
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return file
}

/** The built-in catalogue, with otel-traces sending to `exporter`: what only code can do, never a preset. */
export async function catalogWith(exporter: SpanExporter): Promise<PluginCatalog> {
  const scanned = await PluginCatalog.scan(undefined, { project: false })
  const catalog = new PluginCatalog()
  for (const entry of scanned.entries())
    catalog.add(entry.manifest.name === 'otel-traces' ? { ...entry, module: createOtelTraces({ exporter }) } : entry)
  return catalog
}

export interface Opened {
  app: Cordage
  lines: string[]
  errors: unknown[]
}

export async function open(file: string, catalog?: PluginCatalog): Promise<Opened> {
  const lines: string[] = []
  const errors: unknown[] = []
  const app = await Cordage.fromPreset(file, {
    ...(catalog ? { catalog } : {}),
    log: (line) => lines.push(line),
    onError: (e) => errors.push(e),
  })
  return { app, lines, errors }
}

/** Wait (a bounded number of turns of the event loop, then fail) until `ready` holds. */
export async function until(ready: () => boolean, what: string, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (ready()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`gave up waiting for ${what}`)
}
