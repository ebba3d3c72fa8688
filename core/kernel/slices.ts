/**
 * @module slices
 * Plugins' own state in a run: one slice per plugin name, changed only by that plugin's `slice/update`
 * events. The kernel checks an update before it records it (core/kit/slices.ts), holds a slice to its
 * size, and applies a recorded update the same way on replay (a stored row is checked again), so no
 * plugin code is needed to rebuild a run's slices.
 */
import { CordageError } from '../contracts/errors.ts'
import type { SliceUpdate } from '../contracts/data.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { RunState } from '../contracts/state.ts'
import { freezeData } from '../kit/freeze.ts'
import { checkSliceUpdate, MaxSliceBytes, sliceName, sliceOf, updatedSlice } from '../kit/slices.ts'
import type { EventIds } from './recorder.ts'
import type { Run } from './run.ts'

/** Record a checked update of `producer`'s slice, or say why not: the slice would outgrow {@link MaxSliceBytes}. */
export function recordSlice(run: Run, producer: string, update: SliceUpdate, ids: EventIds): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(updatedSlice(sliceOf(run.state, sliceName(producer)), update)))
  if (bytes > MaxSliceBytes)
    return `${producer} would keep ${bytes} bytes in its slice of run state; a slice may take ${MaxSliceBytes}: keep less, or set a key instead of pushing to it`
  run.rec.record('slice/update', update, producer, ids)
}

/** Apply a recorded `slice/update` to the slice of its producer. */
export function applySliceEvent(state: RunState, event: RunEvent<'slice/update'>): void {
  const checked = checkSliceUpdate(event.data, true)
  if (!checked.ok) throw new CordageError('invalid_event', `event seq ${event.seq} (slice/update): ${checked.problem}`)
  applySlice(state, sliceName(event.producer), checked.value)
}

export function applySlice(state: RunState, name: string, update: SliceUpdate): void {
  state.slices = { ...state.slices, [name]: freezeData(updatedSlice(sliceOf(state, name), update)) }
}
