/**
 * What every node of the check tree is: something that judges the final answer and says, when it
 * fails, what failed, where in the tree, and what to fix. A sealed leaf also says what the model may be
 * told instead (`feedback`), which composites carry up so the diagnostics never reach the model.
 */
import type { Evidence, RunState } from 'cordage'

export interface CheckInput {
  state: Readonly<RunState>
  answer: string
  /** Aborts when the run is cancelled. */
  signal: AbortSignal
}

export interface CheckFailure {
  ok: false
  code: 'missing_evidence' | 'verification_failed'
  /** Where, what failed and what to fix, for the record (and for the model unless `feedback` is set). */
  reason: string
  /** Set when a sealed check is part of the failure: all the model may learn. */
  feedback?: string
  repairable: boolean
  /** What passed before the failure, and what the failing check observed. */
  evidence: Evidence[]
}

export type CheckResult = { ok: true; evidence: Evidence[] } | CheckFailure

export interface Check {
  /** How reasons name the check: `check "tests"`, or its path and kind (`check all[1] (command)`). */
  readonly label: string
  run(input: CheckInput): CheckResult | Promise<CheckResult>
}

/** What a leaf needs to word its failures. */
export interface LeafTraits {
  label: string
  sealed: boolean
  feedback: string
  repairable: boolean
}

export const SealedFeedback = 'A final check failed. Its details are sealed: review your work against the task and try again.'

export function labelOf(kind: string, path: string, name?: string): string {
  if (name) return `check "${name}"`
  return path ? `check ${path} (${kind})` : `${kind} check`
}

/** A leaf's failure: `<label>: <what failed>. <what to fix>`, sealed behind its feedback when configured. */
export function leafFailure(
  leaf: LeafTraits,
  code: CheckFailure['code'],
  what: string,
  fix: string,
  evidence: Evidence[] = [],
): CheckFailure {
  return {
    ok: false,
    code,
    repairable: leaf.repairable,
    evidence,
    reason: `${leaf.label}: ${what}. ${fix}`,
    feedback: leaf.sealed ? leaf.feedback : undefined,
  }
}

/** Seq of the final answer being verified (the newest final decision in the transcript), for evidence. */
export function answerSeq(state: Readonly<RunState>): number | undefined {
  for (let i = state.transcript.length - 1; i >= 0; i--) {
    const entry = state.transcript[i]
    if (entry.kind === 'assistant' && entry.decision.kind === 'final') return entry.seq
  }
  return undefined
}
