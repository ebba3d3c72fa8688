/**
 * @module playground/threads-api
 * The chat view's routes: threads, each a series of runs, one run per turn (the turn's run sees the
 * thread's earlier turns; docs/concepts/threads.md). Listing and reading a thread are reads; starting a
 * thread and adding a turn start a run, so they take the same token, JSON-only bodies and read-only
 * rule as `POST /api/runs` (checked in server.ts before these handlers run).
 *
 * - `GET /api/threads[?agent=NAME&limit=N]`: the threads of the preset's stores, newest first.
 * - `GET /api/threads/ID`: the thread and its turns, each with its run id, status, failure code, task,
 *   answer and, while it waits for a person, what it waits for.
 * - `POST /api/threads` `{ agent, task, thread? }`: turn 1 of a new thread (an id is made when none is given).
 * - `POST /api/threads/ID/turns` `{ task, agent? }`: the next turn (the thread's agent by default).
 *
 * A start answers once the turn's run/start is durable, or with the kernel's refusal: `thread_busy`
 * (the previous turn has not ended), `thread_closed`, `thread_budget_exceeded` and
 * `thread_spending_unknown` (what the previous turn spent cannot be read) are 409, `thread_not_found`
 * 404, `feature_unsupported` (a store that keeps no threads) 501: playground/http-status.ts.
 */
import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { z } from 'zod'
import { CordageError, isTerminal, type AgentRuntime, type RunHandle, type ThreadSummary, type ThreadTurn } from 'cordage'
import { check, HttpError, sendJson, type ApiContext } from './api.ts'
import { statusOf } from './http-status.ts'

/** The largest `?limit=` of the thread list. */
export const MaxThreadLimit = 500
/** How long a start may take to become durable before the request gives up waiting (the turn may still start). */
const AcceptMs = 60_000

/** Letters, digits and `._:-`, starting with a letter or digit: safe in a URL path, a log line and a file name. */
const ThreadId = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/
const threadId = z.string().regex(ThreadId, 'a thread id is 1 to 128 letters, digits and . _ : - (starting with a letter or digit)')
const agentName = z.string().min(1).max(200)
const task = z.string().trim().min(1, 'the message is a non-empty string').max(10_000, 'the message is at most 10,000 characters')

const Bodies = {
  start: z.object({ agent: agentName, task, thread: threadId.optional() }).strict(),
  turn: z.object({ task, agent: agentName.optional() }).strict(),
}

export const threadHandlers = {
  async list(ctx: ApiContext, res: ServerResponse, url: URL) {
    const agent = url.searchParams.get('agent') ?? undefined
    const limit = listLimit(url.searchParams.get('limit'))
    if (agent !== undefined) ctx.app.agent(agent) // agent_not_found (404) for a name not in the preset
    const threads: ThreadSummary[] = []
    const seen = new Set<string>()
    const unsupported: string[] = []
    // Several agents may share one store: list each thread once.
    for (const n of ctx.app.agentNames()) {
      const store = ctx.app.agent(n).store()
      if (!store.threads) {
        unsupported.push(n)
        continue
      }
      for (const t of await store.threads({ ...(agent ? { agent } : {}), limit })) {
        if (seen.has(t.threadId)) continue
        seen.add(t.threadId)
        threads.push(t)
      }
    }
    threads.sort((a, b) => b.updatedAt - a.updatedAt)
    sendJson(res, 200, { threads: threads.slice(0, limit), unsupported })
  },

  async get(ctx: ApiContext, res: ServerResponse, id: string) {
    checkId(id)
    const { agent, thread } = await findThread(ctx, id)
    const turns = await agent.store().threadTurns!(id)
    sendJson(res, 200, { thread, turns: await Promise.all(turns.map((t) => describeTurn(ctx, agent, t))) })
  },

  async start(ctx: ApiContext, res: ServerResponse, body: unknown) {
    const { agent: name, task, thread: given } = check(Bodies.start, body)
    const agent = ctx.app.agent(name)
    supports(agent)
    const id = given ?? `th-${randomBytes(9).toString('base64url')}`
    const existing = await agent.store().thread!(id)
    if (existing)
      throw new HttpError(
        409,
        'invalid_input',
        `thread ${id} exists already (${existing.turns} turn(s)); add the next turn with POST /api/threads/${id}/turns`,
      )
    await startTurn(ctx, res, agent, id, task, 1)
  },

  async turn(ctx: ApiContext, res: ServerResponse, id: string, body: unknown) {
    checkId(id)
    const { task, agent: name } = check(Bodies.turn, body)
    const found = await findThread(ctx, id, name)
    const agent = name ? ctx.app.agent(name) : found.agent
    const { thread } = found
    if (thread.closed)
      throw new HttpError(
        409,
        'thread_closed',
        `thread ${id} was closed by ${thread.closed.by}${thread.closed.reason ? ` (${thread.closed.reason})` : ''}: it takes no more turns; start a new thread`,
      )
    // The kernel refuses a busy thread too (in the same transaction as the turn); asking first gives a
    // clearer message, naming the turn and what it waits for.
    if (!isTerminal(thread.lastStatus))
      throw new HttpError(
        409,
        'thread_busy',
        `turn ${thread.turns} of thread ${id} (run ${thread.lastRunId}) is ${thread.lastStatus}: it has not ended, so the thread takes no next message yet${waitingHint(thread.lastStatus)}`,
      )
    await startTurn(ctx, res, agent, id, task, thread.turns + 1)
  },
}

/** Route /api/threads…; `only` is server.ts's method and read-only check, `body` its JSON body reader. */
export async function threadRoute(
  ctx: ApiContext,
  res: ServerResponse,
  url: URL,
  parts: string[],
  method: string,
  only: (method: string) => void,
  body: () => Promise<unknown>,
): Promise<boolean> {
  const [id, action, ...rest] = parts
  if (rest.length) return false
  try {
    if (!id) {
      if (method === 'POST') {
        only('POST')
        await threadHandlers.start(ctx, res, await body())
      } else {
        only('GET')
        await threadHandlers.list(ctx, res, url)
      }
      return true
    }
    if (!action) {
      only('GET')
      await threadHandlers.get(ctx, res, id)
      return true
    }
    if (action === 'turns') {
      only('POST')
      await threadHandlers.turn(ctx, res, id, await body())
      return true
    }
    return false
  } catch (error) {
    // Messages quote what was sent (an id, a key): never as markup, even to a client that renders it.
    if (CordageError.is(error)) throw new HttpError(statusOf(error), error.code, inert(error.message))
    if (error instanceof HttpError) throw new HttpError(error.status, error.code, inert(error.message), inertIssues(error.issues))
    throw error
  }
}

function inertIssues(issues: unknown): unknown {
  if (!Array.isArray(issues)) return issues
  return issues.map((i: { path?: unknown; message?: unknown }) => ({ path: inert(String(i.path)), message: inert(String(i.message)) }))
}

/** `<`, `>` and `&` as JSON escapes: a message that quotes input cannot become markup anywhere it lands. */
export function inert(text: string): string {
  return text.replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * Start the turn's run and answer when its run/start is durable (202), or with the kernel's refusal.
 * A refusal comes as the handle's `done` rejecting before anything was recorded; the follower of the
 * run sees its first event once it is in the store.
 */
async function startTurn(ctx: ApiContext, res: ServerResponse, agent: AgentRuntime, id: string, task: string, expected: number) {
  const handle = agent.start(task, { thread: id })
  await accepted(ctx, agent, handle)
  const turns = await agent.store().threadTurns!(id)
  const turn = turns.find((t) => t.runId === handle.runId)?.turn ?? expected
  sendJson(res, 202, { threadId: id, turn, runId: handle.runId, agent: agent.name })
}

async function accepted(ctx: ApiContext, agent: AgentRuntime, handle: RunHandle): Promise<void> {
  const abort = new AbortController()
  let answered = false
  // Errors after the answer are the background run's (reported, as POST /api/runs does); before it, the refusal.
  const settled = handle.done.then(
    () => undefined,
    (error) => {
      if (answered) ctx.onError(error)
      else throw error
    },
  )
  settled.catch(() => {}) // awaited below when it matters
  const durable = (async () => {
    for await (const _ of agent.follow(handle.runId, { signal: abort.signal })) return
  })().catch(() => settled) // not in the store and no longer driven here: the refusal tells why
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () =>
        fail(
          new HttpError(
            504,
            'service_timeout',
            `the turn (run ${handle.runId}) was handed to agent "${agent.name}" but not recorded within ${AcceptMs / 1000} s; look at the thread again in a moment`,
          ),
        ),
      AcceptMs,
    )
  })
  try {
    await Promise.race([durable, settled, late])
  } finally {
    answered = true
    clearTimeout(timer)
    abort.abort()
  }
}

/** The thread and the agent whose store holds it (the named one, or the first agent of the preset whose store has it). */
async function findThread(ctx: ApiContext, id: string, name?: string): Promise<{ agent: AgentRuntime; thread: ThreadSummary }> {
  let anySupport = false
  for (const n of name ? [name] : ctx.app.agentNames()) {
    const agent = ctx.app.agent(n)
    const store = agent.store()
    if (!store.thread || !store.threadTurns) continue
    anySupport = true
    const thread = await store.thread(id)
    if (thread) return { agent, thread }
  }
  if (!anySupport)
    throw new CordageError(
      'feature_unsupported',
      name
        ? `the store of agent "${name}" keeps no threads (store contract before 2.3.0)`
        : `no store of preset ${ctx.app.preset.shown} keeps threads (store contract before 2.3.0)`,
    )
  throw new CordageError(
    'thread_not_found',
    `no thread ${id} in the store${name ? ` of agent "${name}"` : `s of preset ${ctx.app.preset.shown}`}; GET /api/threads lists them, POST /api/threads starts one`,
  )
}

function supports(agent: AgentRuntime): void {
  const store = agent.store()
  if (!store.thread || !store.threadTurns)
    throw new CordageError(
      'feature_unsupported',
      `the store of agent "${agent.name}" keeps no threads (store contract before 2.3.0); use store-sqlite, store-postgres or store-memory at a version that does`,
    )
}

/** One turn as the chat shows it: the stored line, and from the run's state its answer and what it waits for. */
async function describeTurn(ctx: ApiContext, agent: AgentRuntime, turn: ThreadTurn) {
  const runtime = ctx.app.agentNames().includes(turn.agent) ? ctx.app.agent(turn.agent) : agent
  const state = await runtime.load(turn.runId)
  const actionId = state.status === 'WAITING_APPROVAL' ? state.waiting?.actionId : undefined
  const action = actionId ? state.actions[actionId] : undefined
  return {
    turn: turn.turn,
    runId: turn.runId,
    agent: turn.agent,
    task: turn.task,
    // The state read now is fresher than the turn's line when the two differ.
    status: state.status,
    failureCode: state.failureCode,
    reason: state.reason,
    answer: state.answer,
    lastSeq: state.lastSeq,
    createdAt: turn.createdAt,
    updatedAt: turn.updatedAt,
    // What a waiting turn waits for: the action to approve (the Run view approves it), a question, a reconciliation.
    waiting: state.waiting
      ? {
          status: state.waiting.status,
          reason: state.waiting.reason,
          actionId: action?.id,
          tool: action?.tool,
          ruleReason: action?.decision?.reason,
        }
      : undefined,
    drivenHere: runtime.running().includes(turn.runId),
  }
}

function waitingHint(status: string): string {
  if (status === 'WAITING_APPROVAL') return '; approve or reject its pending action first'
  if (status === 'WAITING_USER') return '; answer its question first'
  if (status === 'WAITING_RECONCILIATION') return '; reconcile its unknown effect first'
  if (status === 'SUSPENDED') return '; resume or cancel it first'
  return '; wait until it ends'
}

function checkId(id: string): void {
  if (!ThreadId.test(id))
    throw new HttpError(
      400,
      'invalid_input',
      `a thread id is 1 to 128 letters, digits and . _ : - (starting with a letter or digit), not ${JSON.stringify(id.slice(0, 40))}`,
    )
}

function listLimit(raw: string | null): number {
  if (raw === null) return 100
  const n = Number(raw)
  if (!/^[1-9][0-9]*$/.test(raw) || n > MaxThreadLimit)
    throw new HttpError(
      400,
      'invalid_input',
      `limit is how many threads to list, a whole number from 1 to ${MaxThreadLimit}, not ${JSON.stringify(raw.slice(0, 40))}`,
    )
  return n
}
