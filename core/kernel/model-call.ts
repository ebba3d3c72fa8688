/**
 * @module model-call
 * One model call of a step: the request recorded, streamed pieces passed on as previews (scrubbed of
 * secrets, only when someone listens), the answer checked and copied to plain data, and failures
 * classified: retried with backoff (the provider's Retry-After wins when longer) while the deadline
 * allows, else the run ends with the error's code. Free functions over the run.
 */
import { classify, CordageError } from '../contracts/errors.ts'
import type { ContextMessage } from '../contracts/services/context.ts'
import { checkResponse, type ModelResponse, type ModelService } from '../contracts/services/model.ts'
import type { ToolView } from '../contracts/services/tools.ts'
import { scrubbedDeltas } from '../kit/scrubbed-deltas.ts'
import type { ServiceEntry } from './cordis.ts'
import { plainResponse } from '../contracts/checks/model.ts'
import { KernelProducer } from './version.ts'
import type { Run } from './run.ts'
import { wait, type Flow } from '../kit/later.ts'
import type { Stop } from './flow.ts'

const StepStartEvents = ['step/start', 'step/context', 'step/model-request'] as const

export function* callModel(
  run: Run,
  model: ServiceEntry<ModelService>,
  messages: ContextMessage[],
  tools: ToolView[],
  index: number,
): Flow<ModelResponse | Stop> {
  const ids = run.ids
  const { attempts, backoffMs } = run.agent.options.modelRetry
  for (let attempt = 1; ; attempt++) {
    const request = run.rec.record(
      'step/model-request',
      { model: model.provider, messages: messages.length, tools: run.visible.names, attempt },
      KernelProducer,
      ids,
    )
    // Not a durability point (a model call has no effect to protect), but whoever watches steps begin
    // should see them begin, not only once the model has answered.
    if (run.agent.dispatch.watched(StepStartEvents)) yield run.flush()
    const signal = modelSignal(run)
    // Streamed pieces go to listeners as previews, scrubbed like the record, only if someone listens: nothing here is durable.
    const base = { runId: run.runId, stepId: ids.stepId!, attempt, producer: model.provider }
    const onDelta = run.agent.streaming() ? scrubbedDeltas(run.agent.scrubber, (d) => run.agent.streamDelta({ ...base, ...d })) : undefined
    try {
      const asked = { runId: run.runId, stepId: ids.stepId!, stepIndex: index, messages, tools, signal: signal.signal, onDelta }
      const answer = model.value.respond(asked)
      // Not a promise is not a model answer (the contract's): it fails as any broken model does, streamed or not.
      if (typeof answer?.then !== 'function') throw new TypeError(`respond() of ${model.provider} gave ${typeof answer}, not a promise`)
      const response = yield* wait(onDelta ? answer.finally(() => onDelta.end()) : answer)
      const problem = checkResponse(response)
      if (problem) throw new CordageError('model_invalid_response', problem)
      // Plain data from here on: the record, the hash, policy and the tool see one value.
      return withoutSecretReasoning(run, plainResponse(response))
    } catch (error) {
      if (run.lost) throw run.lost
      if (run.cancelRequest) return { cancelled: true }
      if (signal.deadlineHit)
        return { end: 'STOPPED', code: 'deadline_exceeded', reason: `deadline passed during the model call of step ${index}` }
      const { code, kind, message } = classify(error, 'model_permanent')
      const backoff = code === 'model_transient' && attempt < attempts ? retryWait(error, backoffMs, attempt) : undefined
      // A wait that would outlast the deadline is no retry: the run stops rather than sleep past it.
      const pastDeadline = backoff !== undefined && run.state.deadline !== undefined && Date.now() + backoff >= run.state.deadline
      const retryInMs = pastDeadline ? undefined : backoff
      run.rec.record(
        'step/model-error',
        { errorClass: kind, code, message, attempt, retryInMs },
        model.provider,
        run.idsOf(undefined, request.seq),
      )
      if (pastDeadline)
        return { end: 'STOPPED', code: 'deadline_exceeded', reason: `the deadline passes before the model can be asked again (${message})` }
      if (retryInMs === undefined) return { end: 'FAILED', code, reason: message }
      yield* wait(sleep(retryInMs, run.signal))
    } finally {
      signal.dispose()
    }
  }
}

/**
 * The answer without its reasoning when that holds a secret. The record scrubs secrets like everywhere
 * else, but reasoning goes back to the provider as recorded, and a scrubbed thinking block no longer
 * matches its signature: the provider would refuse that request and every later one that carries it.
 * Left out, it is missing only where the provider needs it back next (a tool call), and the adapter
 * says so; the secret never reaches the log.
 */
function withoutSecretReasoning(run: Run, response: ModelResponse): ModelResponse {
  const reasoning = response.reasoning
  if (!reasoning || !run.agent.scrubber.active) return response
  if (JSON.stringify(run.agent.scrubber.scrub(reasoning)) === JSON.stringify(reasoning)) return response
  const { reasoning: _, ...rest } = response
  return rest
}

/**
 * The abort signal for one model call: the run's own signal (cancellation), plus the deadline when the
 * run has one. Without a deadline nothing is allocated: signals and listeners cost microseconds a step.
 */
function modelSignal(run: Run): { signal: AbortSignal; deadlineHit: boolean; dispose(): void } {
  if (run.state.deadline === undefined) return { signal: run.signal, deadlineHit: false, dispose() {} }
  const controller = new AbortController()
  const state = { signal: controller.signal, deadlineHit: false, dispose: () => {} }
  const onCancel = () => controller.abort(run.signal.reason)
  run.signal.addEventListener('abort', onCancel, { once: true })
  const timer = setTimeout(
    () => {
      state.deadlineHit = true
      controller.abort(new CordageError('deadline_exceeded'))
    },
    Math.max(0, run.state.deadline - Date.now()),
  )
  state.dispose = () => {
    clearTimeout(timer)
    run.signal.removeEventListener('abort', onCancel)
  }
  return state
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
  })
}

/**
 * How long to wait before asking the model again: the backoff (doubled per attempt, jittered), or the
 * provider's own hint (Retry-After) when it asks for longer, up to a minute.
 */
function retryWait(error: unknown, backoffMs: number, attempt: number): number {
  const hint = CordageError.is(error) ? Number((error.data as { retryAfterMs?: number } | undefined)?.retryAfterMs) : NaN
  const backoff = Math.round(backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()))
  return Math.max(backoff, Number.isFinite(hint) ? Math.min(hint, 60_000) : 0)
}
