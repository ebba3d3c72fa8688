/**
 * @module cli/verify
 * `cordage verify RUN`: asks the store that holds a run to check its stored history (the store's
 * optional `verify`, core/kit/store-kit.ts): every event parses, is numbered 1..n, belongs to the run, and
 * matches its link in the hash chain. When it holds, what the chained events name is checked against
 * what the store keeps beside them: each artifact (cli/verify-artifacts.ts) and the run's place in a
 * thread (cli/verify-thread.ts). Prints what was checked and the head hash (to keep elsewhere as an
 * anchor), or each problem, the first with its seq. `cordage verify --thread ID` checks a thread: its
 * turns against the chained run/start of every run of the store, and each turn's run as above.
 * Exit 0 intact, 1 damaged (`store_corrupt`), 2 usage.
 */
import { CordageError } from '../contracts/errors.ts'
import type { Cordage } from '../host/app.ts'
import type { HistoryCheck, StoreService } from '../contracts/services/store.ts'
import { parseThreadId } from '../kit/thread-ids.ts'
import { storeCorrupt } from '../kit/store-kit.ts'
import type { Parsed } from './args.ts'
import { reportError } from './errors.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'
import { cannotCheck, problemAt, runDamaged, verifyRun, type RunVerdict } from './verify-run.ts'
import { verifyThread } from './verify-thread-command.ts'

export async function verify(
  { flags, positionals: [runId] }: Parsed,
  io: Output,
  open: (flags: Parsed['flags']) => Promise<Cordage>,
): Promise<number> {
  const threadId = flags.thread as string | undefined
  if ((runId === undefined) === (threadId === undefined))
    throw new CordageError(
      'invalid_input',
      `"verify" takes RUN or --thread ID${runId !== undefined ? ', not both' : ''}: cordage verify RUN (a run: its log, its artifacts, its place in a thread) or cordage verify --thread ID (a thread: its turns and each turn's run)`,
    )
  if (threadId !== undefined) parseThreadId(threadId)
  const app = await open(flags)
  try {
    return threadId !== undefined ? await verifyThread(app, threadId, flags, io) : await verifyOneRun(app, runId!, flags, io)
  } finally {
    await app.stop()
  }
}

async function verifyOneRun(app: Cordage, runId: string, flags: Parsed['flags'], io: Output): Promise<number> {
  const { agent, store, check } = await checkRun(app, runId)
  const verdict = await verifyRun(store, check, { membership: true })
  if (flags.json) io.out(JSON.stringify(runJson(verdict, agent)))
  else for (const line of describe(verdict)) io.out(line)
  const first = verdict.problems[0]
  if (!first) return ExitCodes.ok
  const error = check.firstBad ? storeCorrupt(runId, check.firstBad.seq, check.firstBad.problem) : runDamaged(runId, first)
  reportError(io, error, { command: 'verify', flags, json: !!flags.json })
  return ExitCodes.failed
}

function runJson(v: RunVerdict, agent: string) {
  return {
    ...v.history,
    ...(v.problems.length && !v.history.firstBad ? { firstBad: v.problems[0] } : {}),
    agent,
    intact: !v.problems.length,
    ...(v.artifacts.length ? { artifacts: v.artifacts } : {}),
    ...(v.unnamedArtifacts.length ? { unnamedArtifacts: v.unnamedArtifacts } : {}),
    ...(v.thread ? { thread: v.thread } : {}),
    ...(v.problems.length ? { problems: v.problems } : {}),
  }
}

/** The check of the first agent's store that has the run. */
async function checkRun(app: Cordage, runId: string): Promise<{ agent: string; store: StoreService; check: HistoryCheck }> {
  let notFound: unknown
  for (const name of app.agentNames()) {
    const store = app.agent(name).store()
    if (!store.verify) {
      // Only a store that has the run can say it cannot check it.
      try {
        await store.read(runId, { limit: 1 })
      } catch (error) {
        if (CordageError.is(error, 'run_not_found')) {
          notFound = error
          continue
        }
        throw error
      }
      throw cannotCheck(app, name, `run ${runId}`)
    }
    try {
      return { agent: name, store, check: await store.verify(runId) }
    } catch (error) {
      if (!CordageError.is(error, 'run_not_found')) throw error
      notFound = error
    }
  }
  throw notFound ?? new CordageError('run_not_found', `no run ${runId} in the stores of ${app.preset.shown}`)
}

/** Readable lines: what holds, how far the chain reaches, what the events name, and the head. */
function describe(v: RunVerdict): string[] {
  const { runId, events } = v.history
  if (v.problems.length) {
    const [first, ...more] = v.problems
    return [
      `run ${runId}: NOT INTACT${problemAt(first)}: ${first.problem}`,
      ...more.map((p) => `  also${problemAt(p)}: ${p.problem}`),
      `  ${events} event(s) stored. Do not resume the run until you know why; if it was damaged or edited, restore the store from a backup`,
    ]
  }
  const check = v.history
  const numbered = `${events} event(s), numbered 1..${events}, each parsed and of this run`
  const beside = besideLines(v)
  if (!check.chained) {
    return [
      `run ${runId}: intact as far as its store can tell: ${numbered}`,
      '  not chained: this store keeps events as objects, not text, and does not chain them (store-memory)',
      ...beside,
    ]
  }
  const how = check.keyed
    ? 'under the key (HMAC-SHA-256): an edit cannot be chained again without it'
    : '(SHA-256, no key: this detects damage and edits that did not recompute the chain; anyone who can write the store can recompute it, so compare the head with a copy kept elsewhere, or set a key)'
  const unchained = check.unchainedUpTo ?? 0
  const why = 'stored before this store chained events, or their links were removed; checked for numbering and parsing only'
  if (unchained >= events)
    return [
      `run ${runId}: NOT CHAINED: ${numbered}`,
      `  not chained up to seq ${unchained}: ${why}; nothing proves they were not edited`,
      ...beside,
    ]
  const lines = [`run ${runId}: intact: ${numbered}`]
  if (unchained > 0) lines.push(`  not chained up to seq ${unchained}: ${why}`)
  lines.push(`  seq ${unchained + 1}..${events} each chained to the one before ${how}`)
  lines.push(...beside)
  lines.push(`  head ${check.head}`)
  return lines
}

/** What the events name that the store keeps beside them: artifacts, and the run's thread. */
function besideLines(v: RunVerdict): string[] {
  const lines: string[] = []
  if (v.artifacts.length)
    lines.push(
      `  ${v.artifacts.length} artifact(s) named by its events, each stored whole with the sha256, size and media type its event names`,
    )
  if (v.unnamedArtifacts.length)
    lines.push(
      `  ${v.unnamedArtifacts.length} artifact(s) listed under the run that no event names (a crash between storing a result and recording it leaves one), each holding the bytes its ref names`,
    )
  if (v.thread)
    lines.push(
      `  turn ${v.thread.turn} of thread ${v.thread.id}${v.thread.previousRunId ? `, after run ${v.thread.previousRunId}` : ''}: as its run/start says, and as the store lists it`,
    )
  return lines
}
