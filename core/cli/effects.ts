/**
 * @module cli/effects
 * `cordage effects RUN`: the run's entries in the side-effect ledger, one per call with side effects
 * that started (by idempotency key): its action, tool, status, attempts and times, the receipt and
 * what the model was told. So a person or a script can count what a run did to the outside world
 * without reading its events. Read through the store's read methods only (`effectsOf`, or, for a store
 * without that optional method, `effect(key)` for each key the run's actions used); the values were
 * scrubbed of the agents' secrets and passed the guardrail before they were stored. The summary names
 * the run's dry runs, which are never in the ledger. Exit 0, 2 for usage (`run_not_found`).
 */
import { CordageError } from '../contracts/errors.ts'
import type { Cordage } from '../host/app.ts'
import type { Effect, EffectStatus } from '../contracts/services/store.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import { hint } from './hints.ts'
import type { Output } from './output.ts'

const Statuses: EffectStatus[] = ['committed', 'pending', 'failed', 'not_committed']

export async function effects(
  { flags, positionals: [runId] }: Parsed,
  io: Output,
  open: (flags: Parsed['flags']) => Promise<Cordage>,
): Promise<number> {
  const app = await open(flags)
  try {
    const entries = await ledgerOf(app, runId)
    for (const entry of entries) io.out(flags.json ? JSON.stringify(entry) : formatEffect(entry))
    io.err(summary(runId, entries, flags) + dryRunNote(await dryRunsOf(app, runId)))
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}

/** The ledger entries of the run, oldest first, from the first agent's store that has the run. */
async function ledgerOf(app: Cordage, runId: string): Promise<Effect[]> {
  let notFound: unknown
  for (const name of app.agentNames()) {
    const agent = app.agent(name)
    const store = agent.store()
    let entries: Effect[]
    try {
      if (store.effectsOf) {
        entries = await store.effectsOf(runId)
      } else {
        // A store without effectsOf: the keys the run's calls used (tool/start), each looked up.
        const state = await agent.load(runId)
        const keys = [...new Set(Object.values(state.actions).flatMap((a) => (a.key ? [a.key] : [])))]
        const found = await Promise.all(keys.map((key) => store.effect(key)))
        entries = found.filter((e): e is Effect => !!e && e.runId === runId)
      }
    } catch (error) {
      if (!CordageError.is(error, 'run_not_found')) throw error
      notFound = error
      continue
    }
    return entries.sort((a, b) => a.startedAt - b.startedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  }
  throw notFound ?? new CordageError('run_not_found', `no run ${runId} in the stores of ${app.preset.shown}`)
}

/**
 * The run's dry runs: actions whose preview ran instead of the call. None is in the ledger (nothing was
 * done), and the summary says so, so nobody reading this view looks for them as writes or counts them.
 */
async function dryRunsOf(app: Cordage, runId: string): Promise<{ actionId: string; tool: string }[]> {
  for (const name of app.agentNames()) {
    try {
      const state = await app.agent(name).load(runId)
      return Object.values(state.actions)
        .filter((a) => a.dryRun)
        .map((a) => ({ actionId: a.id, tool: a.tool }))
    } catch (error) {
      if (!CordageError.is(error, 'run_not_found')) throw error
    }
  }
  return []
}

function dryRunNote(dryRuns: { actionId: string; tool: string }[]): string {
  if (!dryRuns.length) return ''
  const named = dryRuns.map((d) => `${d.actionId} ${d.tool}`).join(', ')
  return `; ${dryRuns.length} dry run${dryRuns.length === 1 ? '' : 's'} (${named}) not in the ledger: only a preview ran, nothing was done`
}

/** One readable line: key, status, action and tool, attempts, times, receipt and what the model was told. */
export function formatEffect(e: Effect): string {
  const ended = e.endedAt === undefined ? 'not ended' : `${new Date(e.endedAt).toISOString()} (${e.endedAt - e.startedAt} ms)`
  const receipt =
    e.receipt === undefined || e.receipt === null
      ? ''
      : `  receipt ${cut(typeof e.receipt === 'string' ? e.receipt : JSON.stringify(e.receipt), 40)}`
  const observation = e.observation === undefined ? '' : `  ${JSON.stringify(cut(e.observation.replace(/\s+/g, ' '), 70))}`
  return `${e.key}  ${e.status.padEnd(13)} ${e.actionId.padEnd(6)} ${e.tool}  attempts ${e.attempts}  started ${new Date(e.startedAt).toISOString()}  ended ${ended}${receipt}${observation}`
}

function summary(runId: string, entries: Effect[], flags: Parsed['flags']): string {
  if (!entries.length) return `run ${runId}: no ledger entries (no call with side effects started)`
  const counts = Statuses.map((s) => [s, entries.filter((e) => e.status === s).length] as const).filter(([, n]) => n > 0)
  const open = entries.find((e) => e.status === 'pending')
  const pending = open
    ? `; pending: started with no outcome recorded (in flight, or an unknown effect to settle: ${hint('reconcile', [runId, open.actionId], flags, '--committed|--not-committed')})`
    : ''
  return `run ${runId}: ${entries.length} ledger entr${entries.length === 1 ? 'y' : 'ies'}: ${counts.map(([s, n]) => `${n} ${s.replace('_', ' ')}`).join(', ')}${pending}`
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text
}
