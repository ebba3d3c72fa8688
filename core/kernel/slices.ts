/**
 * @module slices
 * Plugins' own state in a run: one slice per plugin name, changed only by that plugin's `slice/update`
 * events. The kernel checks an update before it records it and applies it the same way on replay
 * (a stored row is checked again), so no plugin code is needed to rebuild a run's slices.
 */
import { CordageError } from '../contracts/errors.ts'
import type { SliceUpdate } from '../contracts/data.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { RunState } from '../contracts/state.ts'
import { freezeData } from '../kit/freeze.ts'
import { checkSliceUpdate, sliceName } from '../kit/slices.ts'

/** Apply a recorded `slice/update` to the slice of its producer. */
export function applySliceEvent(state: RunState, event: RunEvent<'slice/update'>): void {
  const checked = checkSliceUpdate(event.data)
  if (!checked.ok) throw new CordageError('invalid_event', `event seq ${event.seq} (slice/update): ${checked.problem}`)
  applySlice(state, sliceName(event.producer), checked.value)
}

/** `set` replaces keys, `push` appends to a list (a key that held no list starts one). */
export function applySlice(state: RunState, name: string, update: SliceUpdate): void {
  const slice: Record<string, unknown> = { ...state.slices?.[name] }
  for (const [key, value] of Object.entries(update.set ?? {})) slice[key] = value
  for (const [key, values] of Object.entries(update.push ?? {})) {
    const was = slice[key]
    slice[key] = [...(Array.isArray(was) ? was : []), ...values]
  }
  state.slices = { ...state.slices, [name]: freezeData(slice) }
}
