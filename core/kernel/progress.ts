/**
 * @module progress
 * Before each new step, the progress service (a loop guard) may see that the run goes round in
 * circles: the loop records what it saw (step/no-progress) and goes on with feedback for the model,
 * asks the user, or stops. Its answer is checked strictly; a failure or a malformed verdict ends the
 * run (fail closed).
 */
import type { Code } from '../contracts/errors.ts'
import type { ProgressService, ProgressVerdict } from '../contracts/services/progress.ts'
import type { RunState } from '../contracts/state.ts'
import type { TerminalStatus, WaitingStatus } from '../contracts/data.ts'
import { isControl } from './control.ts'
import type { ServiceEntry } from './cordis.ts'
import type { Checkpoint, Next, PauseDetail } from './effects.ts'
import type { TimedService } from './loop-host.ts'
import type { EventIds, Recorder } from './recorder.ts'
import { checkProgressVerdict } from '../contracts/checks/progress.ts'

/** What asking about progress needs of the run. */
export interface ProgressPort {
  readonly view: Readonly<RunState>
  readonly rec: Recorder
  readonly ids: EventIds
  ask<T>(service: TimedService, provider: string, call: () => T | Promise<T>): T | Promise<T>
  pause(status: WaitingStatus, reason: string, checkpoint: Checkpoint, detail?: PauseDetail): Promise<Next>
  end(status: TerminalStatus, failureCode: Code | undefined, reason?: string, answer?: string): Promise<Next>
}

/** Ask the progress service about the run before a new step; undefined means go on (with feedback, if it gave any). */
export async function checkProgress(run: ProgressPort, progress: ServiceEntry<ProgressService>): Promise<Next | undefined> {
  let answer: unknown
  try {
    answer = await run.ask('progress', progress.provider, () => progress.value.check({ state: run.view }))
  } catch (error) {
    if (isControl(error)) throw error
    return run.end('FAILED', 'internal_error', `progress service ${progress.provider} failed: ${(error as Error)?.message ?? error}`)
  }
  const checked = checkProgressVerdict(answer)
  if (!checked.ok)
    return run.end(
      'FAILED',
      'verdict_invalid',
      `progress service ${progress.provider} answered something that is not a verdict: ${checked.problem}`,
    )
  const verdict: ProgressVerdict = checked.value
  if (verdict.kind === 'continue') return undefined
  const { detector, reason, thresholds } = verdict
  const text = verdict.kind === 'feedback' ? verdict.text : undefined
  run.rec.record('step/no-progress', { detector, response: verdict.kind, reason, thresholds, text }, progress.provider, {
    turnId: run.ids.turnId,
  })
  if (verdict.kind === 'ask') return run.pause('WAITING_USER', verdict.question, 'user', { code: 'no_progress' })
  if (verdict.kind === 'stop') return run.end('STOPPED', 'no_progress', `${detector}: ${reason}`)
  return undefined
}
