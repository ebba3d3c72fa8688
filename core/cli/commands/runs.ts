/**
 * @module cli/commands/runs
 * `cordage runs`: the runs in the stores of a preset, newest first, with what a waiting run waits on.
 */
import { CordageError } from '../../contracts/errors.ts'
import type { Cordage } from '../../host/app.ts'
import { isWaiting, Transitions, type RunStatus } from '../../kernel/status.ts'
import { ExitCodes } from '../exit-codes.ts'
import { formatSummary, formatWaiting } from '../format.ts'
import { knownAgent, open } from '../open.ts'
import type { Handler } from '../output.ts'
import { listThreads } from './thread.ts'

export const runs: Handler = async ({ flags }, io) => {
  // Reading runs starts only the stores: no tool servers, no model keys needed.
  const app = await open(io, flags, 'stores')
  try {
    knownAgent(app, flags.agent as string | undefined)
    if (flags.threads) return await listThreads(app, flags, io)
    const status = flags.status as RunStatus | undefined
    if (status !== undefined && !Object.hasOwn(Transitions, status)) {
      throw new CordageError(
        'invalid_input',
        `--status must be one of ${Object.keys(Transitions).join(', ')}, got ${JSON.stringify(status)}`,
      )
    }
    const seen = new Map<string, ReturnType<typeof formatSummary>>()
    const rows = []
    const only = flags.agent as string | undefined
    // Agents may share one store, and a handoff moves a run to another agent: --agent is the agent a
    // run belongs to (its summary's), looked for in every store of the preset, not the store it is in.
    for (const name of app.agentNames()) {
      for (const run of await app.agent(name).store().list({ status, agent: only })) {
        if (seen.has(run.runId) || (only !== undefined && run.agent !== only)) continue
        seen.set(run.runId, '')
        // A waiting run says what it waits on, and whose child it is: the chain of a pending approval.
        const state = isWaiting(run.status) ? await app.agent(name).load(run.runId) : undefined
        rows.push(state ? { ...run, waiting: state.waiting, parent: state.parent } : run)
      }
    }
    rows.sort((a, b) => b.createdAt - a.createdAt)
    if (flags.json) for (const run of rows) io.out(JSON.stringify(run))
    else if (rows.length === 0) io.err(`no runs in the store of ${app.preset.shown}${storeHint(app)}`)
    else for (const run of rows) io.out(formatSummary(run) + ('waiting' in run ? formatWaiting(run, flags) : ''))
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}

function storeHint(app: Cordage): string {
  const stores = app
    .agentNames()
    .map((n) => app.pluginsOf(n))
    .filter((p) => p['store-memory'])
  return stores.length ? ' (store-memory keeps runs only while the process that made them lives)' : ''
}
