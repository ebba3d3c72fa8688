/**
 * @module snapshot
 * When the driver stores a snapshot of state with a flush (core/kernel/loop.ts): a load replays the
 * events after the last snapshot, and a snapshot costs as much as the state is big.
 */

/**
 * A snapshot is due once the store's `snapshotEvery` events have passed since the last one, and a tenth
 * of the run's events. A snapshot costs as much as the state is big, and the state grows with the run:
 * at a fixed spacing, a long run would spend more on snapshots at each step than the step before. Spaced
 * by a share of the run, their cost per event stays the same however long the run, and a load replays
 * at most `snapshotEvery` events, or a tenth of the run, after its snapshot.
 */
export function snapshotDue(lastSeq: number, lastSnapshot: number, every: number | undefined): boolean {
  const since = lastSeq - lastSnapshot
  return !!every && since >= every && since >= lastSeq * SnapshotShare
}

/** The share of a run's events between two of its snapshots, at least (see {@link snapshotDue}). */
export const SnapshotShare = 0.1
