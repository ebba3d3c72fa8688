/**
 * @module step
 * One step of the loop, as a pipeline: step/start → what the model sees (core/kernel/context-step.ts)
 * → the meter sets the call's cost aside (core/kernel/meter.ts) → the model call (core/kernel/model-call.ts)
 * → step/model-response, and the meter settles → the decision: the calls it proposes (tool/proposed),
 * a question for the user, or a final answer to verify. Free functions over the run.
 */
import { deepFreeze } from '../kit/freeze.ts'
import { digestArgs, hashAnyway, jsonProblem } from '../kit/hash.ts'
import { projectContext } from './context-step.ts'
import type { Next } from './flow.ts'
import { openReservation, reserveModelCall, settleCall } from './meter.ts'
import { callModel } from './model-call.ts'
import { splitDryRun } from './dry-run.ts'
import { KernelProducer } from './version.ts'
import { pauseRun, stop, stopOrGoOn } from './ending.ts'
import { verifyAnswer } from './verification.ts'
import type { Run } from './run.ts'
import { wait, type Flow } from '../kit/later.ts'
import type { RunEventMap } from '../contracts/events.ts'

/** Run a step: a new one, or (`fresh` false) the open one again, when its model call never got an answer on record. */
export function* runStep(run: Run, fresh: boolean): Flow<Next> {
  const { model } = run.services
  const index = fresh ? run.state.steps + 1 : run.state.steps
  if (fresh) run.rec.record('step/start', { index }, KernelProducer, { turnId: run.ids.turnId, stepId: `s${index}` })
  const ids = run.ids

  const projected = yield* projectContext(run, ids)
  if (!('projection' in projected)) return yield* wait(stop(run, projected))
  const { projection, views } = projected
  // The meter sets the call's cost aside first, or the run suspends before it (core/kernel/meter.ts).
  // Without a meter there is nothing to reserve, nor to wait for; the same after the call.
  const refused = run.services.meter ? yield* wait(reserveModelCall(run, model.value, projection.tokens, index)) : undefined
  if (refused) return yield* wait(stop(run, refused))

  const response = yield* callModel(run, model, projection.messages, views, index)
  if (!('decision' in response)) return yield* wait(stop(run, response))
  const decision = response.decision
  const responded = run.rec.record(
    'step/model-response',
    { decision, usage: response.usage, model: response.model, ...(response.reasoning ? { reasoning: response.reasoning } : {}) },
    model.provider,
    run.idsOf(undefined, run.state.lastSeq),
  )
  const unsettled = run.services.meter ? yield* wait(settleCall(run, openReservation(run.state, 'model'), response.usage)) : undefined
  if (unsettled) throw unsettled

  if (decision.kind === 'tool_calls') {
    decision.calls.forEach((call, i) => {
      // Frozen from here on: the decision, the ticket and the call are about these exact arguments.
      // Scrubbed before they are hashed: the record, the decision and the call see the same arguments.
      // A boolean `dry_run` the model was offered (core/kernel/preview.ts) is taken out: the hash is of the call's own arguments.
      const { args, dryRun } = splitDryRun(deepFreeze(run.rec.scrub(call.args)), run.visible.dryRuns.has(call.name))
      // Arguments that are not plain JSON are refused before anyone judges them (hash.ts, jsonProblem).
      const argsError = call.argsError ?? jsonProblem(args)
      const proposed: RunEventMap['tool/proposed'] = {
        tool: call.name,
        args,
        argsHash: argsError === undefined ? digestArgs(args) : hashAnyway(args),
        callId: call.callId,
        argsError,
      }
      if (dryRun) proposed.dryRun = dryRun
      run.rec.record('tool/proposed', proposed, KernelProducer, run.idsOf(`${ids.stepId}.a${i + 1}`, responded.seq))
    })
    return 'continue'
  }
  if (decision.kind === 'ask_user') return yield* wait(pauseRun(run, 'WAITING_USER', decision.question))
  return yield* wait(stopOrGoOn(run, yield* wait(verifyAnswer(run, decision.text, responded.seq))))
}
