/**
 * A plugin's own slice of run state (`RunState.slices`), read by the plugin's name. Slices are keyed
 * by plugin name, not version, so a slice outlives an upgrade; a plugin that changes what it keeps
 * reads the old shape too, or says in its changelog what a run started under an older version loses.
 * An update (`SliceUpdate`) is checked before the kernel records it and again when a run replays: it
 * is recorded and replayed as it is, so it must be plain JSON, small, and say what it changes.
 */
import type { RunState } from '../contracts/state.ts'
import type { SliceUpdate } from '../contracts/data.ts'
import type { Tool, ToolResult } from '../contracts/services/tools.ts'
import { CordageError } from '../contracts/errors.ts'
import { bad, describe, own, type Checked } from '../contracts/check.ts'
import { jsonProblem } from './hash.ts'

const Empty: Readonly<Record<string, unknown>> = Object.freeze({})

/** The slice `plugin` keeps in this run (empty until its first `slice/update`). */
export function sliceOf(state: Readonly<RunState>, plugin: string): Readonly<Record<string, unknown>> {
  return state.slices?.[plugin] ?? Empty
}

/** The slice a producer (`name@version`) writes to: its name. */
export function sliceName(producer: string): string {
  const at = producer.lastIndexOf('@')
  return at > 0 ? producer.slice(0, at) : producer
}

/** The most bytes of JSON one update may take: a slice is state a plugin consults, not a store. */
export const MaxSliceUpdateBytes = 64 * 1024

const KeyPattern = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/

export function checkSliceUpdate(update: unknown): Checked<SliceUpdate> {
  const o = own(update)
  if (!o) return bad(`a slice update is an object { set?, push? }, got ${describe(update)}`)
  const extra = Object.keys(o).filter((k) => k !== 'set' && k !== 'push')
  if (extra.length) return bad(`a slice update has only set and push, got ${extra.map((k) => `"${k}"`).join(', ')}`)
  if (o.set === undefined && o.push === undefined) return bad('a slice update sets or pushes something, got neither')
  for (const part of ['set', 'push'] as const) {
    if (o[part] === undefined) continue
    const entries = own(o[part])
    if (!entries) return bad(`${part} maps keys to ${part === 'set' ? 'values' : 'lists'}, got ${describe(o[part])}`)
    for (const [key, value] of Object.entries(entries)) {
      if (!KeyPattern.test(key)) return bad(`${part} key ${describe(key)} is not a name (a letter, then up to 63 letters, digits, _ . -)`)
      if (part === 'push' && !Array.isArray(value)) return bad(`push.${key} is a list of values to append, got ${describe(value)}`)
    }
  }
  const problem = jsonProblem(o, 'update')
  if (problem) return bad(problem)
  const text = JSON.stringify(o)
  if (text.length > MaxSliceUpdateBytes)
    return bad(`the update takes ${text.length} bytes of JSON; one update may take ${MaxSliceUpdateBytes}`)
  return { ok: true, value: JSON.parse(text) as SliceUpdate }
}

/**
 * The update a result makes to the slice of the tool's plugin (`ToolResult.state`), checked. The call
 * ran, so a malformed one fails the run (`internal_error`) rather than lose what the plugin meant to keep.
 */
export function resultSlice(result: ToolResult, tool: Pick<Tool, 'name' | 'owner'>): SliceUpdate | undefined {
  if ('reveals' in result)
    throw new CordageError(
      'internal_error',
      `tool "${tool.name}" returned reveals, which tools contract 1.2.0 replaced: return state: { push: { revealed: [names] } } and read it with sliceOf`,
    )
  const { state } = result
  if (state === undefined || state === null) return undefined
  const checked = checkSliceUpdate(state)
  const problem = !tool.owner ? 'the tool has no plugin behind it, so no slice to keep it in' : !checked.ok ? checked.problem : undefined
  if (problem || !checked.ok)
    throw new CordageError(
      'internal_error',
      `tool "${tool.name}" returned state Cordage cannot record (${problem}): ToolResult.state is { set?, push? }`,
    )
  return checked.value
}
