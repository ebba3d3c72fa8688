/**
 * @module ending
 * Pausing and ending a run: the checkpoint made durable before anyone is asked anything, every open
 * action closed with the run's code when it ends (an action that started is reported as an unknown
 * effect, never as not run), and the last events flushed.
 */
import { classify, CordageError, Codes, type Code } from '../contracts/errors.ts'
import type { TerminalStatus, WaitingStatus } from '../contracts/data.ts'
import type { Next, PauseDetail, Stop } from './flow.ts'
import type { Run } from './run.ts'
import { KernelProducer } from './version.ts'
import { cancelWaitOf } from './waits.ts'
import { recordedWait } from '../contracts/services/waits.ts'

/** The checkpoint a run waiting in each status records. */
const Checkpoints = {
  WAITING_APPROVAL: 'approval',
  WAITING_USER: 'user',
  WAITING_RECONCILIATION: 'reconciliation',
  SUSPENDED: 'suspend',
} as const

/** Act on what a stage asked of the run (core/kernel/flow.ts). */
export function stop(run: Run, s: Stop): Promise<Next> {
  if ('pause' in s) return pauseRun(run, s.pause, s.reason, s.detail)
  if ('cancelled' in s) return endCancelled(run)
  return endRun(run, s.end, s.code, s.reason, s.answer)
}

/** Act on a stage's answer where undefined means go on. */
export const stopOrGoOn = (run: Run, s: Stop | undefined): Promise<Next> | Next => (s ? stop(run, s) : 'continue')

export async function pauseRun(
  run: Run,
  status: WaitingStatus,
  reason: string,
  { actionId, approval, code, on }: PauseDetail = {},
): Promise<Next> {
  const ids = run.ids
  run.rec.record(
    'run/checkpoint',
    { reason: Checkpoints[status], pending: [...run.state.pending], steps: run.state.steps, usage: { ...run.state.usage } },
    KernelProducer,
    ids,
  )
  // The checkpoint is durable before anyone is asked anything.
  await run.flush()
  if (approval) run.rec.record('tool/approval-requested', approval, KernelProducer, run.idsOf(actionId, run.state.lastSeq))
  run.rec.record('run/paused', { status, reason, actionId, code, ...(on ? recordedWait(on) : {}) }, KernelProducer, ids)
  await run.flush()
  // A cancel that came while the run was pausing on a condition no longer reaches it through the call's
  // signal (the call has returned), and nothing else would act on it: the run does not stay waiting.
  // The condition is cancelled, then the run ends CANCELLED, as a cancel of the waiting run would do.
  if (on && run.cancelRequest && !run.lost) {
    await cancelWaitOf(run.agent.ctx, run)
    return endCancelled(run)
  }
  return 'halt'
}

export async function endCancelled(run: Run): Promise<Next> {
  const request = run.cancelRequest!
  if (run.state.status !== 'CANCELLING') {
    run.rec.record('run/cancel-requested', { by: request.by, reason: request.reason, requestedAt: request.at }, KernelProducer, run.ids)
  }
  return endRun(run, 'CANCELLED', 'cancelled', request.reason ?? `cancelled by ${request.by}`)
}

export async function endRun(
  run: Run,
  status: TerminalStatus,
  failureCode: Code | undefined,
  reason?: string,
  answer?: string,
): Promise<Next> {
  // A cancel asked elsewhere before the end is on record is accepted: the run ends CANCELLED instead.
  if (status !== 'CANCELLED' && !run.cancelRequest && !run.lost) {
    await run.lookForCancel()
    if (run.cancelRequest) return endCancelled(run)
  }
  const ids = run.ids
  // Every proposed action is closed: those the run never got to end with the run's own code.
  const ended = `the run ended ${status}${failureCode ? ` (${failureCode})` : ''}`
  for (const id of [...run.state.pending]) {
    const action = run.state.actions[id]
    // One that started has an unknown outcome (a neighbour in its wave ended the run first): say so, in
    // run/end too, rather than pretend it never ran. Its ledger intent stays pending.
    const started = action.status === 'running'
    if (started) run.noteEffect('unknown', { actionId: id, tool: action.tool, key: action.key ?? `${run.runId}/${id}` })
    const code: Code = started ? 'unknown_effect' : (failureCode ?? 'cancelled')
    const observation = started
      ? `Outcome unknown: ${ended} before it was settled (idempotency key ${action.key}).`
      : `Not run: ${ended} first.`
    run.rec.record(
      'tool/error',
      { tool: action.tool, errorClass: Codes[code].kind, code, message: observation, observation },
      KernelProducer,
      run.idsOf(id, (started ? action.error?.seq : action.requestedSeq) ?? action.proposedSeq),
    )
  }
  if (run.state.stepOpen) run.rec.record('step/end', { actions: run.state.stepActions }, KernelProducer, ids)
  if (run.state.turns) run.rec.record('turn/end', { answer }, KernelProducer, { turnId: ids.turnId })
  const effects = run.noted.committed.length || run.noted.unknown.length ? run.noted : undefined
  run.rec.record(
    'run/end',
    {
      status,
      failureCode,
      reason,
      answer,
      usage: { ...run.state.usage },
      steps: run.state.steps,
      nestedSteps: run.state.nestedSteps || undefined,
      effects,
    },
    KernelProducer,
    { turnId: ids.turnId },
  )
  await run.flush()
  return 'halt'
}

/**
 * Something broke outside the run's own rules (a plugin threw, the store refused, a service did not
 * answer in time). End the run if we still can: STOPPED for a deadline, CANCELLED when cancellation
 * was asked for, else FAILED with the error's code (`service_timeout`, `verdict_invalid`, ...).
 */
export async function crash(run: Run, error: unknown): Promise<void> {
  // Another writer owns the log now: writing anything more would be wrong.
  if (CordageError.is(error, 'seq_conflict') || CordageError.is(error, 'lease_lost') || run.lost || run.state.status === 'FAILED')
    throw run.lost ?? error
  const { code, kind, message } = classify(error, 'internal_error')
  try {
    if (run.state.status === 'RUNNING' || run.state.status === 'CANCELLING') {
      if (run.cancelRequest) await endCancelled(run)
      else await endRun(run, kind === 'budget_exhausted' ? 'STOPPED' : 'FAILED', code, message)
      return
    }
  } catch {
    // the store itself failed: nothing more can be recorded; the caller gets the original error
  }
  throw error
}
