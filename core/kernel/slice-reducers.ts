/**
 * @module slice-reducers
 * What a recorded `slice/update` changes in run state: the slice of its producer, as cordage/kit's
 * updatedSlice says. A stored row is checked again (its shape), so no plugin code is needed to rebuild
 * a run's slices. Recording one is core/kernel/slices.ts.
 */
import { CordageError } from '../contracts/errors.ts'
import type { SliceUpdate } from '../contracts/data.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { RunState } from '../contracts/state.ts'
import { freezeData } from '../kit/freeze.ts'
import { checkSliceUpdate, sliceName, sliceOf, updatedSlice } from '../kit/slices.ts'

/** Apply a recorded `slice/update` to the slice of its producer. */
export function applySliceEvent(state: RunState, event: RunEvent<'slice/update'>): void {
  const checked = checkSliceUpdate(event.data, true)
  if (!checked.ok) throw new CordageError('invalid_event', `event seq ${event.seq} (slice/update): ${checked.problem}`)
  applySlice(state, sliceName(event.producer), checked.value)
}

export function applySlice(state: RunState, name: string, update: SliceUpdate): void {
  state.slices = { ...state.slices, [name]: freezeData(updatedSlice(sliceOf(state, name), update)) }
}
