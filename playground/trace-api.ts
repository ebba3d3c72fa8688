/**
 * @module playground/trace-api
 * The trace view's routes: a run's spans (playground/trace.ts), one step's detail from the log
 * (playground/step-detail.ts), and the context that step sent to the model, rebuilt through the agent's
 * context service (playground/step-context.ts). Reads only; behind the token like every /api route.
 */
import type { ServerResponse } from 'node:http'
import { CordageError } from 'cordage'
import { HttpError, locate, sendJson, type ApiContext } from './api.ts'
import { rebuildContext } from './step-context.ts'
import { stepDetail } from './step-detail.ts'
import { traceOf } from './trace.ts'

/** s1, s2, ...: what the kernel names steps. Anything else is refused before the log is read. */
const StepId = /^s[1-9][0-9]{0,8}$/

export const traceHandlers = {
  /** `GET /api/runs/RUN/trace`: the spans, the run's status and usage, and the server's clock (open spans grow to it). */
  async trace(ctx: ApiContext, res: ServerResponse, runId: string) {
    const agent = await locate(ctx.app, runId)
    const trace = traceOf(await agent.store().read(runId))
    sendJson(res, 200, { ...trace, runId, now: Date.now() })
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
  },
}

function checkStep(stepId: string): void {
  if (!StepId.test(stepId))
    throw new HttpError(
      400,
      'invalid_input',
      `a step id is s followed by its number (s1, s2, ...), not ${JSON.stringify(stepId.slice(0, 40))}`,
    )
}
