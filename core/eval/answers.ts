/**
 * @module eval/answers
 * How the engine answers a run that paused (docs/eval.md, "answers"): the recording's decision on the very
 * call waiting, given again as `replay:NAME` (core/eval/replay.ts); else the case's next answer, given
 * as the eval (`eval`, or `eval:NAME` when the case names someone). Never as a person: an evaluation
 * records no decision nobody gave.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunState } from '../index.ts'
import type { Cordage } from '../host/index.ts'
import type { Answer } from './case.ts'
import { replayedBy, type ReplayLayer } from './replay.ts'

type Runtime = ReturnType<Cordage['agent']>

/** Whether a line of `given` is one of the case's own answers (the others say what was replayed). Kept beside the texts it reads. */
export const isCaseAnswer = (line: string): boolean => /^(approved|rejected|settled|answered the question) /.test(line)

/** How the engine's own answers are recorded: as the eval (`eval`), or the eval answering as NAME (`eval:NAME`), never as NAME. */
const evalBy = (by: string): string => (by === 'eval' ? by : `eval:${by}`)

/**
 * Give the waiting call the recording's decision on it (the same tool and arguments), as
 * `replay:NAME`: the state after it, undefined when the recording holds none (the case's answers
 * decide), or why it was not given (the policy does not let `replay:NAME` decide: the run stays).
 */
export async function replayDecision(
  runtime: Runtime,
  state: RunState,
  replay: ReplayLayer,
  wait: (done: Promise<RunState>) => Promise<RunState>,
  given: string[],
): Promise<RunState | string | undefined> {
  const action = state.status === 'WAITING_APPROVAL' && state.waiting?.actionId ? state.actions[state.waiting.actionId] : undefined
  const recorded = action && replay.decision({ tool: action.tool, argsHash: action.argsHash })
  if (!action || !recorded) return undefined
  const what = `${recorded.by}'s recorded ${recorded.approved ? 'approval' : 'rejection'} of ${action.id} (${action.tool})`
  const by = replayedBy(recorded.by)
  const options = {
    by,
    reason: `recorded ${recorded.approved ? 'approval' : 'rejection'} by ${recorded.by} (${recorded.from})${recorded.reason ? `: ${recorded.reason}` : ''}; replayed, not given again`,
  }
  try {
    const handle = await (recorded.approved
      ? runtime.approve(state.runId, action.id, options)
      : runtime.reject(state.runId, action.id, options))
    given.push(`${what} replayed as ${by}`)
    return wait(handle.done)
  } catch (error) {
    if (!CordageError.is(error) || error.code !== 'approver_not_allowed') throw error
    const approvers = /names its approvers: ([^;]+)/.exec(error.message)?.[1] ?? 'not including it'
    return `${what} was not replayed: the policy names who may decide it (${approvers}), and a replay gives it as ${by}, never as ${recorded.by}; name ${by} among the rule's approvers to let replays through. The run was left waiting`
  }
}

/** Give the next answer to the pause the run is in: the state after it, or why it was not given ('' when no answer is left). */
export async function answer(
  runtime: Runtime,
  state: RunState,
  next: Answer | undefined,
  wait: (done: Promise<RunState>) => Promise<RunState>,
  given: string[],
): Promise<RunState | string> {
  if (!next) return ''
  const actionId = state.waiting?.actionId
  const forThis = !('action' in next) || next.action === undefined || next.action === actionId
  if (state.status === 'WAITING_APPROVAL' && actionId && ('approve' in next || 'reject' in next) && forThis) {
    const by = evalBy(next.by)
    const handle = await ('approve' in next
      ? runtime.approve(state.runId, actionId, { by, reason: next.reason })
      : runtime.reject(state.runId, actionId, { by, reason: next.reason })
    ).catch((error) => {
      if (CordageError.is(error) && error.code === 'approver_not_allowed')
        throw new CordageError(
          'approver_not_allowed',
          `${error.message.split(';')[0]}; an eval never decides as a person: its answer is recorded as ${by}. Name ${by} among the rule's approvers in the case's overlay, or give the person's recorded decision on this call under \`recorded:\` (replayed as replay:NAME, which the approvers must name too)`,
        )
      throw error
    })
    given.push(`${'approve' in next ? 'approved' : 'rejected'} ${actionId} as ${by}`)
    return wait(handle.done)
  }
  if (state.status === 'WAITING_RECONCILIATION' && actionId && 'reconcile' in next) {
    const by = evalBy(next.by)
    given.push(`settled ${actionId} as ${next.reconcile} as ${by}`)
    return wait((await runtime.reconcile(state.runId, actionId, next.reconcile === 'committed', { by })).done)
  }
  if (state.status === 'WAITING_USER' && 'input' in next) {
    given.push(`answered the question with "${next.input}"`)
    return wait((await runtime.resume(state.runId, { input: next.input })).done)
  }
  const kind = Object.keys(next)[0]
  return `the run paused in ${state.status}${actionId ? ` on ${actionId}` : ''}, where the case's next answer (${kind}${'action' in next && next.action ? ` for ${next.action}` : ''}) does not fit: it was left there`
}
