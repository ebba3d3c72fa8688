/**
 * @module playground/trace-api
 * The trace view's routes: a run's spans (playground/trace.ts), one step's detail from the log
 * (playground/step-detail.ts), and the context that step sent to the model, rebuilt through the agent's
 * context service (playground/step-context.ts). Reads only; behind the token like every /api route.
 *
 * A long run has tens of thousands of spans, and the page asks again as events stream in: the trace is
 * capped (`?limit=`, DefaultSpanLimit by default) and kept per run keyed by its last seq, so asking
 * about an unchanged run costs one one-event read. The context rebuild runs a plugin's `assemble` in
 * this process: refused under `readOnly` (a synchronous plugin cannot be stopped by a timeout), and one
 * at a time per server (429 while one is under way).
 */
import type { ServerResponse } from 'node:http'
import { CordageError } from 'cordage'
import { HttpError, locate, sendJson, type ApiContext } from './api.ts'
import { rebuildContext } from './step-context.ts'
import { stepDetail } from './step-detail.ts'
import { capTrace, DefaultSpanLimit, traceOf, type Trace } from './trace.ts'

/** The largest `?limit=` a request may ask for. */
export const MaxSpanLimit = 20_000
/** Runs whose trace a server keeps (the least recently asked is dropped first). */
const CachedTraces = 16

interface Cached {
  lastSeq: number
  limit: number
  trace: Trace
}
/** Per server (its ApiContext): the traces computed, and whether a context rebuild is under way. */
const caches = new WeakMap<ApiContext, Map<string, Cached>>()
const rebuilding = new WeakSet<ApiContext>()

/** s1, s2, ...: what the kernel names steps. Anything else is refused before the log is read. */
const StepId = /^s[1-9][0-9]{0,8}$/

export const traceHandlers = {
  /**
   * `GET /api/runs/RUN/trace[?limit=N]`: the spans (at most N), the run's status and usage, the server's clock
   * (open spans grow to it), and `cached`: whether the trace was kept from an earlier request (no event since).
   */
  async trace(ctx: ApiContext, res: ServerResponse, runId: string, url?: URL) {
    const limit = spanLimit(url?.searchParams.get('limit') ?? null)
    const agent = await locate(ctx.app, runId)
    const store = agent.store()
    let cache = caches.get(ctx)
    if (!cache) caches.set(ctx, (cache = new Map()))
    const hit = cache.get(runId)
    let trace: Trace
    let cached = false
    // Seqs only grow: no event after the one the trace was computed through means it is still right.
    if (hit && hit.limit === limit && (await store.read(runId, { after: hit.lastSeq, limit: 1 })).length === 0) {
      trace = hit.trace
      cached = true
    } else {
      trace = capTrace(traceOf(await store.read(runId)), limit)
    }
    // Most recently asked last: the first key is the one to drop.
    cache.delete(runId)
    cache.set(runId, { lastSeq: trace.lastSeq, limit, trace })
    while (cache.size > CachedTraces) cache.delete(cache.keys().next().value!)
    sendJson(res, 200, { ...trace, runId, now: Date.now(), cached })
  },

  /** `GET /api/runs/RUN/steps/STEP`: what the log holds about the step. */
  async step(ctx: ApiContext, res: ServerResponse, runId: string, stepId: string) {
    checkStep(stepId)
    const agent = await locate(ctx.app, runId)
    const events = await agent.store().read(runId)
    try {
      sendJson(res, 200, stepDetail(events, stepId))
    } catch (error) {
      if (CordageError.is(error, 'invalid_input')) throw new HttpError(404, 'invalid_input', `run ${runId}: ${error.message}`)
      throw error
    }
  },

  /**
   * `GET /api/runs/RUN/steps/STEP/context`: the projection the step sent to the model, rebuilt by the
   * context service of the agent that drove the step; 404 when the step has not assembled one, 409 when
   * it cannot be rebuilt here (that agent is not in the preset, or has no context service).
   */
  async context(ctx: ApiContext, res: ServerResponse, runId: string, stepId: string) {
    checkStep(stepId)
    if (ctx.readOnly)
      throw new HttpError(
        403,
        'permission_denied',
        "this playground is read-only (started with --read-only): rebuilding a step's context runs the context plugin's code in this process, and a timeout cannot stop a plugin that never yields, so it is refused; start the playground without --read-only to see what the model saw",
      )
    if (rebuilding.has(ctx))
      throw new HttpError(
        429,
        'rate_limited',
        "another step's context is being rebuilt on this playground (one at a time: each is a full replay of the run and a context plugin call); ask again when it is done",
      )
    rebuilding.add(ctx)
    try {
      await rebuildRoute(ctx, res, runId, stepId)
    } finally {
      rebuilding.delete(ctx)
    }
  },
}

async function rebuildRoute(ctx: ApiContext, res: ServerResponse, runId: string, stepId: string): Promise<void> {
  const owner = await locate(ctx.app, runId)
  const events = await owner.store().read(runId)
  const detail = (() => {
    try {
      return stepDetail(events, stepId)
    } catch (error) {
      if (CordageError.is(error, 'invalid_input')) throw new HttpError(404, 'invalid_input', `run ${runId}: ${error.message}`)
      throw error
    }
  })()
  if (!ctx.app.agentNames().includes(detail.agent))
    throw new HttpError(
      409,
      'invalid_input',
      `step ${stepId} was driven by agent "${detail.agent}", which is not in this preset: its context service is not here to rebuild what the model saw`,
    )
  let rebuilt: Awaited<ReturnType<typeof rebuildContext>>
  try {
    rebuilt = await rebuildContext(ctx.app.agent(detail.agent), events, stepId)
  } catch (error) {
    throw new HttpError(409, 'internal_error', `the context of step ${stepId} could not be rebuilt: ${(error as Error).message}`)
  }
  if (!rebuilt)
    throw new HttpError(404, 'invalid_input', `step ${stepId} of run ${runId} has not assembled its context yet (no step/context)`)
  sendJson(res, 200, rebuilt)
}

function spanLimit(raw: string | null): number {
  if (raw === null) return DefaultSpanLimit
  const n = Number(raw)
  if (!/^[1-9][0-9]*$/.test(raw) || n > MaxSpanLimit)
    throw new HttpError(
      400,
      'invalid_input',
      `limit is how many spans to return, a whole number from 1 to ${MaxSpanLimit}, not ${JSON.stringify(raw.slice(0, 40))}`,
    )
  return n
}

function checkStep(stepId: string): void {
  if (!StepId.test(stepId))
    throw new HttpError(
      400,
      'invalid_input',
      `a step id is s followed by its number (s1, s2, ...), not ${JSON.stringify(stepId.slice(0, 40))}`,
    )
}
