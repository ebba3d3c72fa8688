/**
 * For this folder's tests: the support-desk preset of test/helpers.ts with a chosen context provider in
 * place of context-basic (supportDesk() always uses context-basic), written to a temporary folder and
 * loaded through the host, like any preset.
 */
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stringify } from 'yaml'
import { readService, type AgentRuntime, type CordageError, type RunEvent } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { deskPreset, tempDir, type DeskOptions } from '../../../test/helpers.ts'
import type { ScriptedModel } from '../../model-scripted/index.ts'

export interface Desk {
  app: Cordage
  agent: AgentRuntime
  events(runId: string): Promise<RunEvent[]>
  model(): ScriptedModel
  stop(): Promise<void>
}

export interface DeskWith extends DeskOptions {
  /** The preset entry that replaces context-basic. */
  context?: unknown
  maxSteps?: number
}

/** The preset file, written to a fresh temporary folder. */
export function writePreset(options: DeskWith): string {
  const dir = tempDir('cordage-compaction-')
  const preset = deskPreset(options, 'outbox.jsonl')
  const agent = preset.agents.support
  if (options.maxSteps) agent.budgets.maxSteps = options.maxSteps
  if (options.context) agent.plugins = agent.plugins.map((p) => (p === 'context-basic' ? options.context : p))
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return file
}

/** The error a preset is refused with, or undefined when it loads. */
export async function presetError(options: DeskWith): Promise<CordageError | undefined> {
  try {
    await (await Cordage.fromPreset(writePreset(options))).stop()
    return undefined
  } catch (error) {
    return error as CordageError
  }
}

export async function deskWith(options: DeskWith): Promise<Desk> {
  const file = writePreset(options)
  const errors: unknown[] = []
  const app = await Cordage.fromPreset(file, { onError: (error) => errors.push(error) })
  const runtime = app.agent('support')
  return {
    app,
    agent: runtime,
    events: (runId) => runtime.store().load(runId),
    model: () => readService<ScriptedModel>(runtime.ctx, 'model')!.value,
    stop: async () => {
      await app.stop()
      if (errors.length) throw new Error(`the host reported errors: ${errors.map(String).join('; ')}`)
    },
  }
}

/** A fixture plugin of test/fixtures/plugins, as a preset entry. */
export const fixture = (name: string) => ({ path: resolve(import.meta.dirname, '../../../test/fixtures/plugins', name) })
