/**
 * @module cli/verify-thread-command
 * `cordage verify --thread ID`: a thread's membership (cli/verify-thread.ts: its turns against the
 * chained run/start of every run of the store), then each turn's run as `verify RUN` checks it (its
 * log, its artifacts). Exit 0 intact, 1 damaged (`store_corrupt`), 2 usage (`thread_not_found`).
 */
import { CordageError } from '../contracts/errors.ts'
import type { HistoryCheck, StoreService } from '../contracts/services/store.ts'
import type { Cordage } from '../host/app.ts'
import type { Parsed } from './args.ts'
import { reportError } from './errors.ts'
import { ExitCodes } from './exit-codes.ts'
import type { Output } from './output.ts'
import { cannotCheck, problemAt, verifyRun, type RunVerdict } from './verify-run.ts'
import { checkThread, type ThreadCheck, type ThreadProblem } from './verify-thread.ts'

/** `verify --thread ID`: the thread's membership, then each turn's run. */
export async function verifyThread(app: Cordage, threadId: string, flags: Parsed['flags'], io: Output): Promise<number> {
  const found = await findThread(app, threadId)
  if (!found)
    throw new CordageError(
      'thread_not_found',
      `no thread ${threadId} in the stores of ${app.preset.shown}, and no run there says it is a turn of one`,
    )
  const { agent, store, thread } = found
  const problems: ThreadProblem[] = [...thread.problems]
  const turns: ({ turn: number; runId: string } & ReturnType<typeof turnSummary>)[] = []
  for (const t of thread.turns) {
    if (!store.verify) throw cannotCheck(app, agent, `thread ${threadId}`)
    let history: HistoryCheck
    try {
      history = await store.verify(t.runId)
    } catch (error) {
      if (!CordageError.is(error, 'run_not_found')) throw error
      problems.push({ turn: t.turn, runId: t.runId, problem: `the store lists run ${t.runId} as turn ${t.turn}, but has no events of it` })
      continue
    }
    const verdict = await verifyRun(store, history, { membership: false })
    turns.push({ ...t, ...turnSummary(verdict) })
    for (const p of verdict.problems)
      problems.push({ turn: t.turn, runId: t.runId, problem: `run ${t.runId}: NOT INTACT${problemAt(p)}: ${p.problem}` })
  }
  problems.sort((a, b) => (a.turn ?? Number.MAX_SAFE_INTEGER) - (b.turn ?? Number.MAX_SAFE_INTEGER))
  if (flags.json) io.out(JSON.stringify(threadJson(thread, agent, turns, problems)))
  else for (const line of describeThread(thread, turns, problems)) io.out(line)
  const first = problems[0]
  if (!first) return ExitCodes.ok
  reportError(io, threadDamaged(threadId, first), { command: 'verify', flags, json: !!flags.json })
  return ExitCodes.failed
}

/** The first agent's store that knows the thread (its rows, or a run that says it is a turn of it). */
async function findThread(
  app: Cordage,
  threadId: string,
): Promise<{ agent: string; store: StoreService; thread: ThreadCheck } | undefined> {
  const seen = new Set<StoreService>()
  let threaded = 0
  for (const name of app.agentNames()) {
    const store = app.agent(name).store()
    if (seen.has(store)) continue
    seen.add(store)
    if (typeof store.threadTurns !== 'function' || typeof store.thread !== 'function') continue
    threaded++
    const thread = await checkThread(store, threadId)
    if (thread) return { agent: name, store, thread }
  }
  if (!threaded)
    throw new CordageError(
      'feature_unsupported',
      `no store of ${app.preset.shown} keeps threads (store contract 2.3.0): use store-sqlite or store-postgres`,
    )
  return undefined
}

function turnSummary(v: RunVerdict) {
  const { events, chained, keyed, head, unchainedUpTo } = v.history
  return {
    events,
    chained,
    keyed,
    ...(head && !v.history.firstBad ? { head } : {}),
    ...(unchainedUpTo ? { unchainedUpTo } : {}),
    artifacts: v.artifacts.length,
    intact: !v.problems.length,
  }
}

function threadJson(thread: ThreadCheck, agent: string, turns: unknown[], problems: ThreadProblem[]) {
  return {
    threadId: thread.threadId,
    ...(thread.agent ? { agent: thread.agent } : {}),
    ...(thread.closed ? { closed: thread.closed } : {}),
    store: agent,
    turns,
    runsRead: thread.runsRead,
    intact: !problems.length,
    ...(problems.length ? { firstBad: problems[0], problems } : {}),
  }
}

function describeThread(
  thread: ThreadCheck,
  turns: ({ turn: number; runId: string } & ReturnType<typeof turnSummary>)[],
  problems: ThreadProblem[],
): string[] {
  const id = thread.threadId
  const atTurn = (p: ThreadProblem) => (p.turn !== undefined ? ` at turn ${p.turn}` : '')
  if (problems.length) {
    const [first, ...more] = problems
    return [
      `thread ${id}: NOT INTACT${atTurn(first)}: ${first.problem}`,
      ...more.map((p) => `  also${atTurn(p)}: ${p.problem}`),
      `  the store lists ${thread.turns.length} turn(s). Do not add turns or resume them until you know why; if the store was damaged or edited, restore it from a backup`,
    ]
  }
  const closed = thread.closed ? `closed by ${thread.closed.by} (a close is a row of the store, not chained)` : 'open'
  return [
    `thread ${id}: intact: ${thread.turns.length} turn(s), each the run whose chained run/start names it and the turn before, and no other run of the store (${thread.runsRead} read) says it is one`,
    `  agent ${thread.agent}, ${closed}`,
    ...turns.map(
      (t) =>
        `  t${t.turn} ${t.runId}: ${t.chained && !t.unchainedUpTo ? 'intact' : 'intact, not chained throughout'}: ${t.events} event(s)${t.artifacts ? `, ${t.artifacts} artifact(s)` : ''}${t.head ? `, head ${t.head}` : ''}`,
    ),
  ]
}

/** `store_corrupt` for a thread: `data: { threadId, turn?, runId?, problem }`. */
function threadDamaged(threadId: string, p: ThreadProblem): CordageError {
  return new CordageError(
    'store_corrupt',
    `thread ${threadId}${p.turn !== undefined ? `, turn ${p.turn}` : ''}: ${p.problem}. The thread's rows in the store, or its runs, were damaged or edited after they were written: cordage verify --thread ${threadId} lists each problem; restore the store from a backup`,
    { data: { threadId, ...p } },
  )
}
