/**
 * @module cli/verify-run
 * Everything `cordage verify` checks of one run, given the store's check of its log (the store's
 * optional `verify`): when the log holds, the artifacts its events name (cli/verify-artifacts.ts) and,
 * asked for, its membership of a thread (cli/verify-thread.ts). The log comes first: what is checked
 * against the events is only as good as they are.
 */
import { CordageError } from '../contracts/errors.ts'
import type { HistoryCheck, StoreService } from '../contracts/services/store.ts'
import type { Cordage } from '../host/app.ts'
import { checkArtifacts, type CheckedArtifact, type RunProblem } from './verify-artifacts.ts'
import { checkMembership, type ThreadClaim } from './verify-thread.ts'

export interface RunVerdict {
  history: HistoryCheck
  artifacts: CheckedArtifact[]
  unnamedArtifacts: { ref: string; actionId?: string }[]
  thread?: ThreadClaim
  /** Every problem found, the log's first, then by seq (those without one last). */
  problems: RunProblem[]
}

export async function verifyRun(store: StoreService, history: HistoryCheck, options: { membership: boolean }): Promise<RunVerdict> {
  const verdict: RunVerdict = { history, artifacts: [], unnamedArtifacts: [], problems: [] }
  if (history.firstBad) {
    verdict.problems.push(history.firstBad)
    return verdict
  }
  let events
  try {
    events = await store.load(history.runId)
  } catch (error) {
    // Changed since the store's check (another writer, or an edit in between): as damaged as it says.
    if (!CordageError.is(error, 'store_corrupt')) throw error
    const data = error.data as { seq?: unknown; problem?: unknown } | undefined
    verdict.problems.push({
      ...(typeof data?.seq === 'number' ? { seq: data.seq } : {}),
      problem: typeof data?.problem === 'string' ? data.problem : error.message,
    })
    return verdict
  }
  const artifacts = await checkArtifacts(store, history.runId, events)
  verdict.artifacts = artifacts.named
  verdict.unnamedArtifacts = artifacts.unnamed
  const problems = [...artifacts.problems]
  if (options.membership) {
    const member = await checkMembership(store, history.runId, events)
    if (member.thread) verdict.thread = member.thread
    problems.push(...member.problems)
  } else if (events[0]?.type === 'run/start' && events[0].data.thread) {
    const { id, turn, previousRunId } = events[0].data.thread
    verdict.thread = { id, turn, ...(previousRunId ? { previousRunId } : {}) }
  }
  problems.sort((a, b) => (a.seq ?? Number.MAX_SAFE_INTEGER) - (b.seq ?? Number.MAX_SAFE_INTEGER))
  verdict.problems = problems
  return verdict
}

/**
 * The error of a run whose log holds but whose artifacts or thread rows do not: `store_corrupt`, with
 * `data: { runId, seq?, ref?, problem }`.
 */
export function runDamaged(runId: string, p: RunProblem): CordageError {
  return new CordageError(
    'store_corrupt',
    `run ${runId}${p.seq !== undefined ? `, seq ${p.seq}` : ''}: ${p.problem}. What the store keeps beside the run's log was damaged or edited after it was written: do not trust it; cordage verify ${runId} lists each problem; restore the store from a backup`,
    { data: { runId, ...p } },
  )
}

/** ` at seq N` for a problem that has a seq. */
export const problemAt = (p: RunProblem) => (p.seq !== undefined ? ` at seq ${p.seq}` : '')

/** A store that has a run (or a thread's runs) but no `verify`: a usage error naming its plugin. */
export function cannotCheck(app: Cordage, agent: string, what: string): CordageError {
  const plugin =
    Object.entries(app.pluginsOf(agent))
      .map(([n, v]) => `${n}@${v}`)
      .find((p) => /store/.test(p)) ?? 'its store'
  return new CordageError(
    'invalid_input',
    `${what} is in the store of agent "${agent}" (${plugin}), which cannot check a run's history (the store contract's optional verify, since 2.2.0)`,
  )
}
