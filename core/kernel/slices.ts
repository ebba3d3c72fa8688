/**
 * @module slices
 * Plugins' own state in a run: one slice per plugin name, changed only by that plugin's `slice/update`
 * events. The kernel records an update once it was checked (core/kit/slices.ts) and holds a slice to
 * its size; the reducer applies it (core/kernel/slice-reducers.ts).
 */
import type { SliceUpdate } from '../contracts/data.ts'
import { MaxSliceBytes, sliceName, sliceOf, updatedSlice } from '../kit/slices.ts'
import type { EventIds } from './recorder.ts'
import type { Run } from './run.ts'

/** Record a checked update of `producer`'s slice, or say why not: the slice would outgrow {@link MaxSliceBytes}. */
export function recordSlice(run: Run, producer: string, update: SliceUpdate, ids: EventIds): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(updatedSlice(sliceOf(run.state, sliceName(producer)), update)))
  if (bytes > MaxSliceBytes)
    return `${producer} would keep ${bytes} bytes in its slice of run state; a slice may take ${MaxSliceBytes}: keep less, or set a key instead of pushing to it`
  run.rec.record('slice/update', update, producer, ids)
}
