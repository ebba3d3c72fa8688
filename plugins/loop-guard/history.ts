/**
 * What the detectors look at: the run's settled actions since the last intervention, each reduced to
 * a fingerprint of what was called and what came back. Reads run state only, so a resumed run is
 * judged exactly as the run that was interrupted.
 */
import { hashArgs, type RunState } from 'cordage'

export interface Attempt {
  /** The step it belongs to (1-based). */
  step: number
  /** Tool and arguments: the same call. */
  call: string
  /** Call and outcome (an error code, or the hash of what it returned): the same call, the same result. */
  fingerprint: string
  /** Hash of a successful observation: evidence, new or not. */
  evidence?: string
}

/** A decision the guard made, kept in its slice of run state (`interventions`) so it can escalate next time. */
export interface Intervention {
  detector: string
  response: 'feedback' | 'ask' | 'stop'
  /** The steps the run had started when it was made: what came before is judged already. */
  afterStep: number
}

/** The guard's past decisions in this run, from its slice, oldest first; an entry in another shape is skipped. */
export function interventionsIn(slice: Readonly<Record<string, unknown>>): Intervention[] {
  const kept = slice.interventions
  if (!Array.isArray(kept)) return []
  return kept.filter(
    (i): i is Intervention => typeof i?.detector === 'string' && typeof i.response === 'string' && Number.isInteger(i.afterStep),
  )
}

/** Settled actions after the last intervention of `detector` (or of any detector, when none is given). */
export function attemptsSince(state: Readonly<RunState>, past: readonly Intervention[], detector?: string): Attempt[] {
  const last = [...past].reverse().find((i) => detector === undefined || i.detector === detector)
  const from = Math.max(last?.afterStep ?? 0, lastUserInputStep(state))
  const out: Attempt[] = []
  for (const entry of state.transcript) {
    if (entry.kind !== 'observation') continue
    const action = state.actions[entry.actionId]
    const step = Number(action.stepId.slice(1))
    if (step <= from) continue
    const call = `${action.tool}:${action.argsHash}`
    const outcome = entry.ok ? `ok:${hashArgs(entry.text)}` : `error:${action.error?.code ?? 'failed'}`
    out.push({ step, call, fingerprint: `${call}→${outcome}`, evidence: entry.ok ? hashArgs(entry.text) : undefined })
  }
  return out
}

/** The step count when the user last said something: what came before was a different situation. */
function lastUserInputStep(state: Readonly<RunState>): number {
  const lastUser = [...state.transcript].reverse().find((t) => t.kind === 'user')
  if (!lastUser) return 0
  const before = state.transcript.filter((t) => t.kind === 'assistant' && t.seq < lastUser.seq).length
  return before
}

/** Evidence seen before step `step` (any time in the run: finding it again is not progress). */
export function evidenceBefore(state: Readonly<RunState>, step: number): Set<string> {
  const seen = new Set<string>()
  for (const entry of state.transcript) {
    if (entry.kind !== 'observation' || !entry.ok) continue
    if (Number(state.actions[entry.actionId].stepId.slice(1)) >= step) continue
    seen.add(hashArgs(entry.text))
  }
  return seen
}
