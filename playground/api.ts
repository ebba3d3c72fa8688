/**
 * @module playground/api
 * The JSON API under /api: what the page calls, and what a script can call too. Request bodies are
 * checked with zod; every refusal is a 4xx with `{ error: { code, message } }`, where `code` is a
 * Cordage error code (docs/reference/errors.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { z } from 'zod'
import { CordageError, isTerminal, type AgentRuntime, type RunSummary } from 'cordage'
import type { Cordage } from 'cordage/host'
import type { DevReloader } from 'cordage/host'
import { compare } from './compare.ts'
import type { EvalReports } from './eval-report.ts'
import { describeAgents } from './graph.ts'
import type { PluginFeed } from './feed.ts'
import { cursorOf, openSse } from './sse.ts'

export interface ApiContext {
  app: Cordage
  feed: PluginFeed
  /** The hot reloader when the playground watches plugin folders (`--watch`). */
  reloader?: DevReloader
  /** Report an error of a run driven in the background (the default prints it). */
  onError(error: unknown): void
  /** Started with `readOnly`: the routes that change something answer 403 (checked in server.ts). */
  readOnly?: boolean
  /** The latest eval report of the working directory, and the tickets of its link (playground/eval-report.ts). */
  evalReports: EvalReports
}

/** An HTTP error with a Cordage code. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues?: unknown,
  ) {
    super(message)
  }
}

const name = z.string().min(1).max(200)
const Bodies = {
  start: z.object({ agent: name, task: z.string().trim().min(1, 'a task is a non-empty string').max(10_000).optional() }).strict(),
  decide: z
    .object({
      actionId: name.optional(),
      by: z.string().trim().min(1, 'say who decides: by is a non-empty name').max(200),
      reason: z.string().max(2000).optional(),
    })
    .strict(),
  compare: z
    .object({
      runId: name,
      plugin: name,
      a: z.object({ version: name, config: z.record(z.string(), z.unknown()).optional() }).strict(),
      b: z.object({ version: name, config: z.record(z.string(), z.unknown()).optional() }).strict(),
    })
    .strict(),
  swap: z
    .object({
      plugin: name,
      version: name.optional(),
      config: z.record(z.string(), z.unknown()).optional(),
      by: z.string().trim().min(1, 'by is a non-empty name (or leave it out: playground)').max(200).default('playground'),
    })
    .strict(),
}

/** Check a request body; a 400 lists every problem with its path. */
export function check<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body)
  if (result.success) return result.data
  const issues = result.error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message }))
  throw new HttpError(
    400,
    'invalid_input',
    `the request body is not valid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  )
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}

export const handlers = {
  async agents(ctx: ApiContext, res: ServerResponse) {
    sendJson(res, 200, {
      preset: ctx.app.preset.shown,
      agents: await describeAgents(ctx.app, ctx.reloader),
      watch: watching(ctx.reloader),
      readOnly: !!ctx.readOnly,
    })
  },

  async runs(ctx: ApiContext, res: ServerResponse, url: URL) {
    const agent = url.searchParams.get('agent') ?? undefined
    const runs: RunSummary[] = []
    const seen = new Set<string>()
    // Several agents may share one store: list each run once.
    for (const n of ctx.app.agentNames()) {
      if (agent && n !== agent) continue
      for (const run of await ctx.app.agent(n).store().list({ limit: 200 })) {
        if (seen.has(run.runId)) continue
        seen.add(run.runId)
        runs.push(run)
      }
    }
    runs.sort((a, b) => b.createdAt - a.createdAt)
    sendJson(res, 200, { runs })
  },

  async run(ctx: ApiContext, res: ServerResponse, runId: string) {
    const agent = await locate(ctx.app, runId)
    const state = await agent.load(runId)
    const actionId = state.status === 'WAITING_APPROVAL' ? state.waiting?.actionId : undefined
    const action = actionId ? state.actions[actionId] : undefined
    const pending =
      action?.status === 'awaiting_approval'
        ? {
            actionId: action.id,
            tool: action.tool,
            args: action.args,
            reason: action.decision?.reason,
            ruleId: action.decision?.ruleId,
            approvers: action.decision?.approvers,
            // What the call would do, as recorded with the request (rendered by public/preview.js).
            preview: action.preview,
            dryRun: action.dryRun,
          }
        : undefined
    sendJson(res, 200, {
      runId,
      agent: agent.name,
      status: state.status,
      failureCode: state.failureCode,
      reason: state.reason,
      answer: state.answer,
      steps: state.steps,
      usage: state.usage,
      lastSeq: state.lastSeq,
      plugins: state.plugins,
      waiting: state.waiting,
      pending,
      drivenHere: agent.running().includes(runId),
    })
  },

  async events(ctx: ApiContext, res: ServerResponse, url: URL, runId: string, req: IncomingMessage) {
    const after = cursorOf(req, url)
    const agent = await locate(ctx.app, runId)
    sendJson(res, 200, { runId, events: await agent.store().read(runId, { after }) })
  },

  /** The run's events after the cursor, then each new one as it becomes durable; `end` after run/end. */
  async stream(ctx: ApiContext, res: ServerResponse, url: URL, runId: string, req: IncomingMessage) {
    const after = cursorOf(req, url)
    const agent = await locate(ctx.app, runId)
    const sse = openSse(req, res)
    try {
      for await (const event of agent.follow(runId, { after, signal: sse.signal })) sse.send('run-event', event, event.seq)
      if (sse.open && isTerminal((await agent.load(runId)).status)) sse.send('end', { runId })
    } catch (error) {
      if (sse.open) sse.send('failure', { code: CordageError.is(error) ? error.code : 'internal_error', message: (error as Error).message })
    } finally {
      sse.close()
    }
  },

  async start(ctx: ApiContext, res: ServerResponse, body: unknown) {
    const { agent: agentName, task } = check(Bodies.start, body)
    const agent = ctx.app.agent(agentName)
    if (task === undefined && !agent.defaultTask)
      throw new HttpError(400, 'invalid_input', `agent "${agentName}" has no task in the preset; give a task`)
    const handle = agent.start(task)
    background(ctx, handle.done)
    sendJson(res, 202, { runId: handle.runId, agent: agent.name })
  },

  async decide(ctx: ApiContext, res: ServerResponse, runId: string, approved: boolean, body: unknown) {
    const { actionId: given, by, reason } = check(Bodies.decide, body)
    const agent = await locate(ctx.app, runId)
    let actionId = given
    if (!actionId) {
      const state = await agent.load(runId)
      actionId = state.status === 'WAITING_APPROVAL' ? state.waiting?.actionId : undefined
      if (!actionId)
        throw new HttpError(
          409,
          'run_not_waiting',
          `run ${runId} is ${state.status} and waits for no approval; nothing to ${approved ? 'approve' : 'reject'}`,
        )
    }
    const handle = approved ? await agent.approve(runId, actionId, { by, reason }) : await agent.reject(runId, actionId, { by, reason })
    background(ctx, handle.done)
    sendJson(res, 202, { runId, actionId, approved, by })
  },

  async compare(ctx: ApiContext, res: ServerResponse, body: unknown) {
    const request = check(Bodies.compare, body)
    const agent = await locate(ctx.app, request.runId)
    const recorded = await agent.store().read(request.runId)
    sendJson(res, 200, await compare(ctx.app, { ...request, agent: agent.name }, recorded))
  },

  /**
   * Swap a plugin of a live agent. Each attempt that reaches the host, done or failed, goes into the
   * plugin feed as `plugin/swapped` with who asked (`by`) and `via: 'playground'`, right after the
   * `plugin/disposed` and `plugin/loaded` (or `plugin/failed`) of the swap itself: a policy, guardrail
   * or verifier changed from the page is never changed silently.
   */
  async swap(ctx: ApiContext, res: ServerResponse, agentName: string, body: unknown) {
    const { plugin, version, config, by } = check(Bodies.swap, body)
    if (version === undefined && config === undefined)
      throw new HttpError(400, 'invalid_input', 'give the version to swap to, or a new config, or both')
    const asked = {
      ...(version !== undefined ? { requested: version } : {}),
      ...(config !== undefined ? { config: structuredClone(config) } : {}),
    }
    let result: { from: string; to: string }
    try {
      result = await ctx.app.swap(agentName, plugin, { version, config })
    } catch (error) {
      const serving = servingVersion(ctx.app, agentName, plugin)
      // An agent or plugin that does not exist changed nothing: that is a bad request, not a swap.
      if (serving !== undefined) {
        const code = CordageError.is(error) ? error.code : 'internal_error'
        ctx.feed.push('plugin/swapped', {
          agent: agentName,
          name: plugin,
          version: serving,
          ok: false,
          code,
          message: (error as Error)?.message ?? String(error),
          by,
          via: 'playground',
          ...asked,
        })
      }
      throw error
    }
    ctx.feed.push('plugin/swapped', {
      agent: agentName,
      name: plugin,
      version: servingVersion(ctx.app, agentName, plugin),
      ok: true,
      from: result.from,
      to: result.to,
      by,
      via: 'playground',
      ...asked,
    })
    sendJson(res, 200, { ...result, by })
  },

  async pluginEvents(ctx: ApiContext, res: ServerResponse, url: URL, req: IncomingMessage) {
    sendJson(res, 200, { events: ctx.feed.after(cursorOf(req, url)) })
  },

  async pluginStream(ctx: ApiContext, res: ServerResponse, url: URL, req: IncomingMessage) {
    const after = cursorOf(req, url)
    const sse = openSse(req, res)
    let cursor = after
    const send = (entry: { id: number }) => {
      if (entry.id <= cursor) return
      cursor = entry.id
      sse.send('plugin-event', entry, entry.id)
    }
    const stop = ctx.feed.subscribe(send)
    for (const entry of ctx.feed.after(after)) send(entry)
    sse.signal.addEventListener('abort', stop, { once: true })
  },
}

/**
 * The agent that drives a run: the one its run/start (or last handoff) names. Several agents may share
 * a store, so finding the run in a store is not enough.
 */
export async function locate(app: Cordage, runId: string): Promise<AgentRuntime> {
  for (const n of app.agentNames()) {
    let owner: string
    try {
      owner = (await app.agent(n).load(runId)).agent
    } catch (error) {
      if (CordageError.is(error, 'run_not_found')) continue
      throw error
    }
    if (owner && app.agentNames().includes(owner)) return app.agent(owner)
    throw new CordageError('agent_not_found', `run ${runId} belongs to agent "${owner}", which is not in preset ${app.preset.shown}`)
  }
  throw new CordageError('run_not_found', `no run ${runId} in the stores of preset ${app.preset.shown}`)
}

/** The version of `plugin` an agent runs now; undefined when there is no such agent or plugin. */
function servingVersion(app: Cordage, agent: string, plugin: string): string | undefined {
  try {
    return app.pluginsOf(agent)[plugin]
  } catch {
    return undefined
  }
}

/** What hot reload watches: each plugin folder with the agents that run a plugin from it; null when it is off. */
function watching(reloader: DevReloader | undefined) {
  if (!reloader) return null
  return { folders: [...reloader.folders.values()].map((f) => ({ dir: f.dir, origin: f.entry.origin, users: f.users })) }
}

/** A run driven on after the response was sent: its failure is reported, never an unhandled rejection. */
function background(ctx: ApiContext, done: Promise<unknown>): void {
  done.catch((error) => ctx.onError(error))
}
