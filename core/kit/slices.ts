/**
 * A plugin's own slice of run state (`RunState.slices`), read by the plugin's name. Slices are keyed
 * by plugin name, not version, so a slice outlives an upgrade; a plugin that changes what it keeps
 * reads the old shape too, or says in its changelog what a run started under an older version loses.
 * An update (`SliceUpdate`) is checked before the kernel records it and again when a run replays: it
 * is recorded and replayed as it is, so it must be plain JSON, small, and say what it changes. A slice
 * as a whole is held to {@link MaxSliceBytes}.
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
  return state.slices && Object.hasOwn(state.slices, plugin) ? state.slices[plugin] : Empty
}

/** The slice a producer (`name@version`) writes to: its name. */
export function sliceName(producer: string): string {
  const at = producer.lastIndexOf('@')
  return at > 0 ? producer.slice(0, at) : producer
}

/** The most bytes of JSON (UTF-8) one update may take: a slice is state a plugin consults, not a store. */
export const MaxSliceUpdateBytes = 64 * 1024
/** The most bytes of JSON (UTF-8) a whole slice may take: an update that would pass it is refused. */
export const MaxSliceBytes = 256 * 1024

const KeyPattern = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/
const Parts = ['set', 'push', 'add'] as const

/**
 * An update as the kernel records it: the JSON copy of what was handed over, checked. `stored`: a
 * recorded update read back (replay), whose keys the recorder may have scrubbed: its shape alone is
 * checked, not its key names or size, which were checked when it was recorded.
 */
export function checkSliceUpdate(update: unknown, stored = false): Checked<SliceUpdate> {
  const problem = stored ? undefined : jsonProblem(update, 'update')
  if (problem) return bad(problem)
  const text = stored ? '' : JSON.stringify(update)
  const bytes = Buffer.byteLength(text)
  if (bytes > MaxSliceUpdateBytes) return bad(`the update takes ${bytes} bytes of JSON; one update may take ${MaxSliceUpdateBytes}`)
  // The JSON copy is what is recorded: what a toJSON or a later change of the original makes of it does not count.
  const copy: unknown = stored ? update : JSON.parse(text)
  const o = own(copy)
  if (!o) return bad(`a slice update is an object { set?, push?, add? }, got ${describe(update)}`)
  const extra = Object.keys(o).filter((k) => !(Parts as readonly string[]).includes(k))
  if (extra.length) return bad(`a slice update has only set, push and add, got ${extra.map((k) => `"${k}"`).join(', ')}`)
  let keys = 0
  for (const part of Parts) {
    if (o[part] === undefined) continue
    const entries = own(o[part])
    if (!entries) return bad(`${part} maps keys to ${part === 'set' ? 'values' : 'lists'}, got ${describe(o[part])}`)
    for (const [key, value] of Object.entries(entries)) {
      keys++
      if (!stored && !KeyPattern.test(key))
        return bad(`${part} key ${describe(key)} is not a name (a letter, then up to 63 letters, digits, _ . -)`)
      if (part !== 'set' && !Array.isArray(value)) return bad(`${part}.${key} is a list of values to append, got ${describe(value)}`)
    }
  }
  if (!keys) return bad('a slice update changes something: set, push or add at least one key')
  return { ok: true, value: copy as SliceUpdate }
}

/**
 * The update a result makes to the slice of the tool's plugin (`ToolResult.state`), checked. The call
 * ran, so a malformed one fails the run (`internal_error`) rather than lose what the plugin meant to keep.
 */
export function resultSlice(result: ToolResult, tool: Pick<Tool, 'name' | 'owner'>): SliceUpdate | undefined {
  if ('reveals' in result)
    throw new CordageError(
      'internal_error',
      `tool "${tool.name}" returned reveals, which tools contract 1.2.0 replaced: return state: { add: { revealed: [names] } } and read it with sliceOf`,
    )
  const { state } = result
  if (state === undefined || state === null) return undefined
  const checked = checkSliceUpdate(state)
  const problem = !tool.owner ? 'the tool has no plugin behind it, so no slice to keep it in' : !checked.ok ? checked.problem : undefined
  if (problem || !checked.ok)
    throw new CordageError(
      'internal_error',
      `tool "${tool.name}" returned state Cordage cannot record (${problem}): ToolResult.state is { set?, push?, add? }`,
    )
  return checked.value
}

/**
 * The slice as an update leaves it (a new object; neither is changed): `set` replaces keys, `push`
 * appends to a list, `add` appends what the list lacks, compared as JSON (a key that held no list starts
 * one). The kernel's reducer applies recorded updates with it.
 */
export function updatedSlice(slice: Readonly<Record<string, unknown>>, update: SliceUpdate): Record<string, unknown> {
  const next: Record<string, unknown> = { ...slice }
  for (const [key, value] of Object.entries(update.set ?? {})) next[key] = value
  const list = (key: string) => (Array.isArray(next[key]) ? (next[key] as unknown[]) : [])
  for (const [key, values] of Object.entries(update.push ?? {})) next[key] = [...list(key), ...values]
  for (const [key, values] of Object.entries(update.add ?? {})) {
    const out = [...list(key)]
    const held = new Set(out.map((v) => JSON.stringify(v)))
    for (const v of values) {
      const text = JSON.stringify(v)
      if (!held.has(text)) out.push(v)
      held.add(text)
    }
    next[key] = out
  }
  return next
}
