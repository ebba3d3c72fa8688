/**
 * @module progress
 * Before each new step, the progress service (a loop guard) may see that the run goes round in
 * circles: the loop records what it saw (step/no-progress) and goes on with feedback for the model,
 * asks the user, or stops. Its answer is checked strictly; a failure or a malformed verdict ends the
 * run (fail closed).
 */
import type { ProgressService, ProgressVerdict } from '../contracts/services/progress.ts'
import { isControl } from './control.ts'
import type { ServiceEntry } from './cordis.ts'
import { checkProgressVerdict } from '../contracts/checks/progress.ts'
import { own } from '../contracts/check.ts'
import { checkSliceUpdate, sliceName, sliceOf } from '../kit/slices.ts'
import { recordSlice } from './slices.ts'
import type { Stop } from './flow.ts'
import type { Run } from './run.ts'

/** Ask the progress service about the run before a new step; undefined means go on (with feedback, if it gave any). */
export async function checkProgress(run: Run, progress: ServiceEntry<ProgressService>): Promise<Stop | undefined> {
  let answer: unknown
  try {
    answer = await run.ask('progress', progress.provider, () =>
      progress.value.check({ state: run.view, slice: sliceOf(run.view, sliceName(progress.provider)) }),
    )
  } catch (error) {
    if (isControl(error)) throw error
    return {
      end: 'FAILED',
      code: 'internal_error',
      reason: `progress service ${progress.provider} failed: ${(error as Error)?.message ?? error}`,
    }
  }
  // Read once: the verdict and the state it keeps are checked from the same copy.
  const copy = own(answer)
  const checked = checkProgressVerdict(copy ?? answer)
  const kept = checked.ok && copy?.state !== undefined ? checkSliceUpdate(copy.state) : undefined
  const ids = { turnId: run.ids.turnId }
  const problem = !checked.ok
    ? checked.problem
    : kept && (kept.ok ? recordSlice(run, progress.provider, kept.value, ids) : `state: ${kept.problem}`)
  if (problem || !checked.ok)
    return {
      end: 'FAILED',
      code: 'verdict_invalid',
      reason: `progress service ${progress.provider} answered something that is not a verdict: ${problem}`,
    }
  const verdict: ProgressVerdict = checked.value
  if (verdict.kind === 'continue') return undefined
  const { detector, reason, thresholds } = verdict
  const text = verdict.kind === 'feedback' ? verdict.text : undefined
  run.rec.record('step/no-progress', { detector, response: verdict.kind, reason, thresholds, text }, progress.provider, ids)
  if (verdict.kind === 'ask') return { pause: 'WAITING_USER', reason: verdict.question, detail: { code: 'no_progress' } }
  if (verdict.kind === 'stop') return { end: 'STOPPED', code: 'no_progress', reason: `${detector}: ${reason}` }
  return undefined
}
