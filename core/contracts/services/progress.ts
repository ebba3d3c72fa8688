/**
 * @module services/progress
 * The `progress` contract (optional service): loop control beyond the budgets. Before each new step the
 * kernel asks whether the run is still getting somewhere. A run that repeats itself, oscillates, or
 * stops producing new evidence burns tokens without moving: the service can have the model re-plan,
 * ask the user, or stop the run with `no_progress`.
 */
import type { SliceUpdate } from '../data.ts'
import type { RunState } from '../state.ts'

/**
 * 2.0.0 (issue 28): the service keeps its own history in its slice of run state (a verdict's `state`,
 * handed back as `slice`); the kernel's `state.interventions` is gone.
 */
export const ProgressContract = '2.0.0'

/** What a detector found: its name, why, and the thresholds it used (recorded with the decision). */
export interface Stall {
  detector: string
  reason: string
  thresholds: Record<string, number>
}

export type ProgressVerdict = (
  | { kind: 'continue' }
  /** Tell the model (the text becomes harness feedback in its context) and go on. */
  | (Stall & { kind: 'feedback'; text: string })
  /** Pause WAITING_USER with this question. */
  | (Stall & { kind: 'ask'; question: string })
  /** End the run STOPPED with `no_progress`. */
  | (Stall & { kind: 'stop' })
) & {
  /**
   * What the service keeps of this decision in its slice of run state (`sliceOf(state, name)`), to
   * escalate from next time: recorded in `slice/update` before the decision's own event.
   */
  state?: SliceUpdate
}

export interface ProgressCheck {
  state: Readonly<RunState>
  /** The service's own slice of run state (`RunState.slices[its plugin]`): what its verdicts kept with `state`. */
  slice: Readonly<Record<string, unknown>>
}

export interface ProgressService {
  /**
   * Judge the run between two steps.
   *
   * Contract: reads run state, changes nothing; deterministic for the same state (a resumed run gets
   * the same answer). A service keeps its past decisions in its own slice (a verdict's `state`), so a
   * detector can escalate (feedback first, then stop) and ignore what came before its last intervention. A throw fails the run with
   * `internal_error`.
   */
  check(input: ProgressCheck): ProgressVerdict | Promise<ProgressVerdict>
}

declare module 'cordis' {
  interface Context {
    progress: ProgressService
  }
}
