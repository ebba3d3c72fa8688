/**
 * The script: a list of entries expanded by `repeat` into one answer per step. The answer for a step
 * depends only on the step index, so a run resumed in another process continues where it left off.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parse } from 'yaml'
import { CordageError, type Decision } from 'cordage'
import type { ScriptEntry } from './manifest.ts'

export function loadScript(inline: ScriptEntry[], file: string | undefined, baseDir: string): ScriptEntry[] {
  if (inline.length || !file) return inline
  const path = resolve(baseDir, file)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new CordageError('plugin_config_invalid', `model-scripted: cannot read script file ${path}: ${(error as Error).message}`, {
      cause: error,
    })
  }
  const data = parse(text)
  const list = Array.isArray(data) ? data : data?.script
  if (!Array.isArray(list))
    throw new CordageError('plugin_config_invalid', `model-scripted: ${path} must hold a list of entries (or a "script:" key with one)`)
  return list
}

/** Expand `repeat`, and check that each entry says exactly one thing. */
export function expand(entries: ScriptEntry[]): ScriptEntry[] {
  const out: ScriptEntry[] = []
  entries.forEach((entry, i) => {
    const kinds = (['tool', 'calls', 'final', 'ask'] as const).filter((k) => entry[k] !== undefined)
    if (kinds.length !== 1) {
      throw new CordageError(
        'plugin_config_invalid',
        `model-scripted: script[${i}] must have exactly one of tool, calls, final, ask (found ${kinds.join(', ') || 'none'})`,
      )
    }
    for (let n = 0; n < (entry.repeat ?? 1); n++) out.push(entry)
  })
  return out
}

export function decisionOf(entry: ScriptEntry): Decision {
  if (entry.final !== undefined) return { kind: 'final', text: entry.final }
  if (entry.ask !== undefined) return { kind: 'ask_user', question: entry.ask }
  const calls = entry.calls ?? [{ tool: entry.tool!, args: entry.args }]
  return { kind: 'tool_calls', calls: calls.map((c, i) => ({ name: c.tool, args: c.args ?? {}, callId: `call_${i + 1}` })) }
}
