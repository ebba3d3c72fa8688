/**
 * @module cli/commands/thread
 * Threads on the command line: `cordage thread ID` prints a thread's turns; `cordage cancel --thread ID`
 * closes it (cancelling its turn that has not ended); {@link threadAgent} finds the agent a thread
 * belongs to, for `cordage run --thread`.
 */
import { CordageError } from '../../contracts/errors.ts'
import type { ThreadSummary, ThreadTurn } from '../../contracts/services/store.ts'
import type { Cordage } from '../../host/app.ts'
import type { AgentRuntime } from '../../kernel/agent.ts'
import { parseThreadId } from '../../kit/thread-ids.ts'
import type { RunState } from '../../kernel/state.ts'
import { ExitCodes } from '../exit-codes.ts'
import { finish } from '../live.ts'
import { hint, shellQuote } from '../hints.ts'
import { knownAgent, open, pickAgent, startAgent } from '../open.ts'
import type { Handler, Output } from '../output.ts'
import type { Parsed } from '../args.ts'

/** How much of an answer a turn's line shows. */
const AnswerChars = 80

export const thread: Handler = async ({ positionals, flags }, io) => {
  const id = parseThreadId(positionals[0])
  const app = await open(io, flags, 'stores')
  try {
    knownAgent(app, flags.agent as string | undefined)
    const found = await findThread(app, id, flags.agent as string | undefined)
    if (!found)
      throw new CordageError(
        'thread_not_found',
        `no thread ${id} in the stores of ${app.preset.shown}; start one: ${hint('run', [], flags, `--thread ${shellQuote(id)} --task "..."`)}`,
      )
    const { agent, summary } = found
    const turns = await Promise.all(
      (await agent.store().threadTurns!(id)).map(async (t) => ({
        ...t,
        answer: answerOf(await agent.load(t.runId).catch(() => undefined)),
      })),
    )
    if (flags.json) io.out(JSON.stringify({ ...summary, turns }))
    else {
      const closed = summary.closed
        ? `closed by ${summary.closed.by} at ${new Date(summary.closed.at).toISOString()}${summary.closed.reason ? `: ${summary.closed.reason}` : ''}`
        : 'open'
      io.out(`thread ${id}  agent ${summary.agent}  ${turns.length} turn(s)  ${closed}`)
      for (const t of turns) io.out(turnLine(t))
    }
    return ExitCodes.ok
  } finally {
    await app.stop()
  }
}

/** `cordage runs --threads`: the threads of the preset's stores, most recently updated first. */
export async function listThreads(app: Cordage, flags: Parsed['flags'], io: Output): Promise<number> {
  const seen = new Set<string>()
  const rows: ThreadSummary[] = []
  for (const name of app.agentNames()) {
    if (flags.agent && name !== flags.agent) continue
    const store = app.agent(name).store()
    if (typeof store.threads !== 'function') continue
    for (const t of await store.threads({ agent: name })) {
      if (seen.has(t.threadId)) continue
      seen.add(t.threadId)
      rows.push(t)
    }
  }
  rows.sort((a, b) => b.updatedAt - a.updatedAt)
  if (flags.json) for (const t of rows) io.out(JSON.stringify(t))
  else if (rows.length === 0) io.err(`no threads in the stores of ${app.preset.shown}`)
  else
    for (const t of rows)
      io.out(
        `${t.threadId}  ${String(t.turns).padStart(3)} turn(s)  last ${t.lastRunId} ${t.lastStatus.padEnd(22)} ${t.agent.padEnd(12)} ${new Date(t.updatedAt).toISOString()}${t.closed ? `  closed by ${t.closed.by}` : ''}`,
      )
  return ExitCodes.ok
}

/** `cordage cancel --thread ID`: close the thread, and cancel its turn that has not ended. */
export async function cancelThread(args: Parsed, io: Output): Promise<number> {
  const id = parseThreadId(args.flags.thread)
  if (args.positionals.length)
    throw new CordageError(
      'invalid_input',
      `give a run or --thread, not both: cordage cancel --thread ${id} closes the thread and cancels its turn going on`,
    )
  const app = await open(io, args.flags, 'on demand')
  try {
    const found = await findThread(app, id, args.flags.agent as string | undefined)
    if (!found) throw new CordageError('thread_not_found', `no thread ${id} in the stores of ${app.preset.shown}`)
    const by = (args.flags.by as string | undefined) ?? 'cli'
    const agent = await startAgent(app, found.agent)
    const state = await agent.closeThread(id, { by, reason: args.flags.reason as string | undefined })
    io.err(`thread ${id} closed: it takes no more turns`)
    return state ? finish(state, io, args.flags) : ExitCodes.ok
  } finally {
    await app.stop()
  }
}

/**
 * The agent that adds the next turn of thread `id`: the one it belongs to when it exists (refused
 * when --agent names another), else --agent or the preset's first agent.
 */
export async function threadAgent(app: Cordage, id: string, name: string | undefined): Promise<AgentRuntime> {
  parseThreadId(id)
  const found = await findThread(app, id, undefined)
  if (!found) return pickAgent(app, name)
  if (name !== undefined && name !== found.summary.agent)
    throw new CordageError('invalid_input', `thread ${id} belongs to agent "${found.summary.agent}", not --agent ${name}`)
  return found.agent
}

async function findThread(
  app: Cordage,
  id: string,
  name: string | undefined,
): Promise<{ agent: AgentRuntime; summary: ThreadSummary } | undefined> {
  let unsupported = 0
  const names = name ? [name] : app.agentNames()
  for (const n of names) {
    const agent = app.agent(n)
    const store = agent.store()
    if (typeof store.thread !== 'function' || typeof store.threadTurns !== 'function') {
      unsupported++
      continue
    }
    const summary = await store.thread(id)
    // Several agents may share a store: the thread's own agent adds its turns when the preset has it.
    if (summary) return { agent: !name && app.agentNames().includes(summary.agent) ? app.agent(summary.agent) : agent, summary }
  }
  if (unsupported === names.length)
    throw new CordageError(
      'feature_unsupported',
      `no store of ${app.preset.shown} keeps threads (store contract 2.3.0): use store-sqlite or store-postgres`,
    )
  return undefined
}

function answerOf(state: RunState | undefined): string | undefined {
  const answer = state?.answer
  if (answer === undefined) return undefined
  const flat = answer.replace(/\s+/g, ' ')
  return flat.length > AnswerChars ? `${flat.slice(0, AnswerChars - 1)}…` : flat
}

function turnLine(t: ThreadTurn & { answer?: string }): string {
  const task = JSON.stringify(t.task.length > 50 ? `${t.task.slice(0, 49)}…` : t.task)
  return `  t${t.turn}  ${t.runId}  ${t.status.padEnd(22)} ${(t.failureCode ?? '').padEnd(22)} ${task}${t.answer !== undefined ? `  → ${JSON.stringify(t.answer)}` : ''}`
}
