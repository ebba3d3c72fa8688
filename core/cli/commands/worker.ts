/**
 * @module cli/commands/worker
 * `cordage worker`: drive the runs that need a driver (submitted, or whose worker died) until stopped,
 * printing every run's events.
 */
import { CordageError } from '../../contracts/errors.ts'
import { reportError } from '../errors.ts'
import { ExitCodes } from '../exit-codes.ts'
import { follow, live } from '../live.ts'
import { openEvery } from '../open.ts'
import type { Handler } from '../output.ts'

export const worker: Handler = async (args, io) => {
  const { flags } = args
  const at = { command: 'worker', flags, json: !!flags.json }
  const poll = flags.poll === undefined ? 500 : Number(flags.poll)
  if (!Number.isInteger(poll) || poll < 10)
    throw new CordageError('invalid_input', `--poll must be a whole number of milliseconds ≥ 10, got ${JSON.stringify(flags.poll)}`)
  const app = await openEvery(io, flags, 'worker')
  const agents = app.agentNames().map((n) => app.agent(n))
  const view = live(io, flags)
  const out = view.io
  follow(app, view, () => undefined, true)
  const stop = new AbortController()
  const onSignal = () => {
    out.err('stopping: the runs in progress go on to their next pause or end')
    stop.abort()
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  let driven = 0
  // Runs whose call waits on what has ended without waking them (a child whose process stopped first) go on here.
  const { waitSweep } = await import('../../host/waits.ts')
  const sweeps = agents.map((agent) =>
    waitSweep(
      agent,
      (error) => reportError(out, error, at),
      (runId) => app.forRun(agent.name, runId),
    ),
  )
  try {
    while (!stop.signal.aborted) {
      let found = false
      for (const sweep of sweeps) {
        const woken = await sweep()
        driven += woken
        found ||= woken > 0
      }
      for (const agent of agents) {
        let handle
        try {
          handle = await agent.driveNext()
        } catch (error) {
          // A run whose stored log is damaged is reported and passed over; the others go on.
          if (!CordageError.is(error, 'store_corrupt')) throw error
          reportError(out, error, at)
          found = true
          continue
        }
        if (!handle) continue
        found = true
        driven++
        const state = await handle.done
        out.err(`run ${state.runId} ${state.status}${state.failureCode ? ` (${state.failureCode})` : ''}`)
      }
      if (!found && flags.once) break
      if (!found) await new Promise((r) => setTimeout(r, poll))
    }
    // Runtimes pinned for one run (onDrift: pin) are released as their runs pause or end (on the turn
    // after): this says none is left behind.
    await new Promise((r) => setImmediate(r))
    if (!flags.json)
      out.err(`worker ${agents[0]?.options.worker ?? ''} drove ${driven} run(s); ${app.pinnedRuntimes()} pinned runtime(s) loaded`)
    return ExitCodes.ok
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    view.close()
    await app.stop()
  }
}
