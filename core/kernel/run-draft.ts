/**
 * @module run-draft
 * What run/start will record, once the `run/before-start` handlers had their say (core/contracts/phases.ts).
 * A run asked to join a thread gets its link, the history it sees and the claim its first append makes
 * from a plugin (plugins/threads); the kernel acts only on the copy that passed the check
 * (core/contracts/checks/run-draft.ts), and records nothing before it. A refusal is thrown with its code;
 * a thread that no handler linked is `feature_unsupported`, naming the plugin to add.
 */
import { checkRunDraft } from '../contracts/checks/run-draft.ts'
import { CordageError } from '../contracts/errors.ts'
import type { RunDraft } from '../contracts/phases.ts'
import { deepFreeze } from '../kit/freeze.ts'
import { parseThreadId } from '../kit/thread-ids.ts'
import { intercepted, serial } from './phases.ts'
import type { Run } from './run.ts'

/** Whether a start asks the run/before-start handlers. Throws at once for a thread that is malformed, or that no handler could link. */
export function draftHandled(run: Run, thread: string | undefined): boolean {
  if (thread !== undefined) parseThreadId(thread)
  const handled = intercepted(run, 'run/before-start')
  if (thread !== undefined && !handled) throw unsupported(run.agent.name, [])
  return handled
}

/** `draft` as the handlers leave it, checked; throws their refusal, or `phase_failed` for an answer the check refuses. */
export async function draftRun(run: Run, draft: RunDraft): Promise<RunDraft> {
  if (!draftHandled(run, draft.threadAsked)) return draft
  const agent = run.agent.name
  // Handlers see a frozen copy, and the copy of the last answer that passed is what is recorded: no
  // handler reaches the kernel's budgets, or changes an answer after it was checked.
  const shown = deepFreeze(structuredClone(draft))
  let last = draft
  const answer = await serial(run, 'run/before-start', shown, (value) => {
    const checked = checkRunDraft(value, draft, agent)
    if (!checked.ok) return checked.problem
    if (last.refused && !checked.value.refused) return `a refusal (${last.refused.code}) cannot be withdrawn`
    last = checked.value
    return undefined
  })
  const final = answer === shown ? draft : last
  if (final.refused) throw new CordageError(final.refused.code, final.refused.message)
  if (final.threadAsked !== undefined && !final.thread) throw unsupported(agent, run.agent.dispatch.handlers('run/before-start'))
  return final
}

function unsupported(agent: string, handlers: { provider: string }[]): CordageError {
  const providers = handlers.map((h) => h.provider).join(', ')
  const left = handlers.length ? ` (the run/before-start handlers of ${providers} left the thread link unset)` : ''
  return new CordageError('feature_unsupported', `thread runs need the threads plugin: add \`- threads\` to agents.${agent}.plugins${left}`)
}
