/**
 * @module key-race
 * Two runs may start a call under the same idempotency key at once; the store lets one tool/start in
 * and refuses the batch of the other (`key_taken`). The loser drops the refused tool/start events it
 * had buffered, writes what else the batch held, and rebuilds its state from the store, which is the
 * truth: what it decided before the refusal is stale (`reloaded`), and its actions are looked at again.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunState } from '../contracts/state.ts'
import { replay, replayFrom } from './state.ts'
import type { Run } from './run.ts'

/** Drop the last `starts` buffered events (each a refused tool/start), flush the rest, then reload state from the store. */
export async function recoverLostKeyRace(run: Run, starts: number): Promise<void> {
  for (let i = 0; i < starts; i++) {
    const dropped = run.rec.dropLast()
    if (dropped?.type !== 'tool/start')
      throw new CordageError('internal_error', `expected the refused tool/start at the end of the batch, found ${dropped?.type}`)
  }
  await run.flush()
  run.reloaded = true
  const stored = await run.store().loadRun(run.runId)
  const fresh = replayFrom(run.runId, stored.snapshot, stored.events) ?? replay(run.runId, await run.store().load(run.runId))
  for (const key of Object.keys(run.state) as (keyof RunState)[]) delete run.state[key]
  Object.assign(run.state, fresh)
  run.rec.reset()
}
