/**
 * @module pass
 * One pass of the loop from a boundary to the next (core/kernel/loop.ts drives passes until the run
 * pauses or ends), as a pipeline: the bounds first (a lost lease, a deferred error, a cancel, a
 * suspend, the deadline and the step budget), then entering the step at the swap gate with its
 * services, the meter's bound and the thread's, then the step's pending actions (core/kernel/actions.ts),
 * then closing the step, or handing the run on, or the progress check and the next step
 * (core/kernel/step.ts). A free function over the run.
 */
import { actOn, actTogether } from './actions.ts'
import { outOfSteps, overBudget } from './budget.ts'
import type { Next } from './flow.ts'
import { meterBound, unmetered } from './meter.ts'
import { finishOpenStep } from './open-step.ts'
import { checkProgress } from './progress.ts'
import { overThreadBudget } from './thread-budget.ts'
import { KernelProducer } from './version.ts'
import { endCancelled, endRun, pauseRun, stop } from './ending.ts'
import { runStep } from './step.ts'
import type { Run } from './run.ts'
import { flow, wait, type Flow } from '../kit/later.ts'

/** One pass from a boundary to the next: at once when nothing on the way had to be waited for (core/kit/later.ts). */
export const pass = (run: Run): Next | Promise<Next> => flow(passing(run))

function* passing(run: Run): Flow<Next> {
  if (run.lost) throw run.lost
  if (run.deferred) throw run.deferred
  // A promise only when there is something to look at (a shared store): otherwise nothing to wait for.
  yield run.lookForCancel()
  if (run.cancelRequest) return yield* wait(endCancelled(run))
  if (run.suspendRequest) return yield* wait(pauseRun(run, 'SUSPENDED', run.suspendRequest.reason))
  const bound = overBudget(run.state.budgets, run.state, Date.now())
  if (bound) return yield* wait(endRun(run, 'STOPPED', bound.code, bound.reason))

  if (!run.inStep) {
    yield run.agent.gate.enter()
    const missing = run.enterStep()
    if (missing) return yield* wait(pauseRun(run, 'SUSPENDED', missing, { code: 'service_missing' }))
  }
  // Tokens and cost are the meter's to judge, with the step's services (core/kernel/meter.ts); a
  // thread's bound over all its turns stays the kernel's, checked after them as it always was.
  const spent = run.services.meter ? yield* wait(meterBound(run)) : unmetered(run)
  if (spent) return yield* wait(stop(run, spent))
  const thread = overThreadBudget(run.state)
  if (thread) return yield* wait(endRun(run, 'STOPPED', thread.code, thread.reason))

  const next = run.state.pending[0]
  if (next) {
    const together = run.agent.options.parallelTools && run.state.pending.length > 1 ? yield* actTogether(run) : undefined
    const after = together ?? (yield* actOn(run, run.state.actions[next]))
    // The step's last action settled: close the step in this pass rather than another trip round.
    if (after === 'halt' || run.state.pending.length || !run.state.stepOpen || run.cancelRequest) return after
  }

  if (run.state.stepOpen) {
    // A run taken over from the log may stop inside a step whose decision was not yet acted on.
    const owed = finishOpenStep(run)
    if (owed) return yield* wait(owed)
    run.rec.record('step/end', { actions: run.state.stepActions }, KernelProducer, run.ids)
    // A plugin swap waits at this boundary: what happened under the old version is on record first.
    if (run.agent.gate.swapWaiting) yield run.flush()
    run.leaveStep()
    return 'continue'
  }

  // A tool of the step that just ended handed the run to another agent: stop driving here; the
  // runtime passes the run on (AgentRuntime.acceptHandoff records run/handoff and drives it).
  if (run.state.handoff) {
    yield run.flush()
    // A cancel that came meanwhile wins: the run ends here instead of going on elsewhere.
    if (run.cancelRequest) return yield* wait(endCancelled(run))
    return 'halt'
  }
  const steps = outOfSteps(run.state.budgets, run.state)
  if (steps) return yield* wait(endRun(run, 'STOPPED', steps.code, steps.reason))
  if (run.services.progress) {
    const stalled = yield* wait(checkProgress(run, run.services.progress))
    if (stalled) return yield* wait(stop(run, stalled))
  }
  return yield* runStep(run, true)
}
