/**
 * @module worker-command
 * A worker's claim (AgentRuntime.driveNext, `cordage worker`): the oldest run of the agent that needs a
 * driver (submitted, or whose worker died), driven by the runtime the host built for it when the run is
 * pinned (`onDrift: pin`), as a resume would be; a run whose stored log is damaged is passed over from
 * then on.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunHandle } from '../contracts/commands.ts'
import type { HeldRuns } from './held-runs.ts'
import { guardStore } from './store-writer.ts'
import { prepareRun } from './lease.ts'

/**
 * Claim and drive the next run, or undefined when there is none. `portFor` gives the commands of the
 * runtime that should drive the claimed run (this one's when the host has none for it).
 */
export async function driveNext(
  port: HeldRuns,
  damaged: Set<string>,
  portFor: (runId: string) => Promise<HeldRuns>,
): Promise<RunHandle | undefined> {
  const { rt, writer } = port
  const exclude = damaged.size ? [...damaged] : undefined
  const lease = await guardStore(rt.store()).claimNext(rt.options.worker, rt.options.leaseTtlMs, { agents: [rt.name], exclude }, writer!)
  if (!lease) return undefined
  const target = await portFor(lease.runId).catch(async (error) => {
    await guardStore(rt.store()).release(lease, writer!)
    throw error
  })
  const { driver, state } = await prepareRun(target.rt, lease, target.writer).catch((error) => {
    // A runtime built for this run is released: it will not drive it.
    if (target !== port) target.settled()
    // A damaged log is never replayed, and must not stop the runs queued behind it: this runtime
    // passes it over from now on (prepare released its lease), and says so to the caller.
    if (CordageError.is(error, 'store_corrupt')) damaged.add(lease.runId)
    throw error
  })
  return target.withLease(driver, () => target.takeOver(driver, state, lease, {}, 'worker'))
}
