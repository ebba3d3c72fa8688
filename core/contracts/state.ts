/**
 * @module contracts/state
 * The shape of run state, as every service reads it (read-only): a reduction of the run's events that
 * the kernel alone computes (core/kernel/state.ts). Types only; it names the shared data of
 * {@link module:contracts/data} and the error codes, and no service contract.
 */
import type { Code } from './errors.ts'
import type {
  ApprovalGrant,
  ApprovalScope,
  Budgets,
  Decision,
  ModelReasoning,
  ParentLink,
  PreviewOutcome,
  RunStatus,
  ThreadLink,
  Constraints,
  Reservation,
  Usage,
  Verdict,
  WaitingChild,
  WaitCondition,
} from './data.ts'

export type ActionStatus =
  | 'proposed'
  | 'allowed'
  | 'denied'
  | 'awaiting_approval'
  | 'approved'
  | 'rejected'
  | 'running'
  | 'succeeded'
  | 'failed'

export interface ActionState {
  id: string
  stepId: string
  tool: string
  args: unknown
  argsHash: string
  callId?: string
  argsError?: string
  /** The model asked for the call's preview (tool/proposed `dryRun`): only the tool's `preview` runs. */
  dryRun?: boolean
  /** Seq of the tool/proposed event. */
  proposedSeq: number
  status: ActionStatus
  decision?: {
    verdict: Verdict
    ruleId: string
    policyVersion: string
    reason: string
    approvers?: string[]
    toolVersion?: string
    /** Limits the policy attached to its allow (tool/decision `constraints`): the call runs under these, as recorded. */
    constraints?: Constraints
    seq: number
  }
  approval?: {
    approved: boolean
    by: string
    reason?: string
    scope?: ApprovalScope
    grantId?: string
    /** The versions it was given under, when an accepted drift had changed them (tool/approval-decided). */
    policyVersion?: string
    toolVersion?: string
    seq: number
  }
  /** Seq of tool/approval-requested, when approval was asked. */
  requestedSeq?: number
  /** The preview recorded with the approval request (what whoever decides is shown). */
  preview?: PreviewOutcome
  /** The idempotency key of its calls (from tool/start). */
  key?: string
  attempts: number
  result?: { observation: string; seq: number }
  error?: { code: Code; message: string; seq: number }
}

/**
 * The conversation as the run lived it, with the seq each entry came from. Context plugins project it.
 * Entries from earlier turns of a thread (thread/history) carry `turn` (`t1`, ...), their `seq` is that
 * of the thread/history event, and their action ids are prefixed with the turn (`t1.s1.a1`).
 */
export type TranscriptEntry =
  | { kind: 'user'; text: string; seq: number; turn?: string }
  | { kind: 'assistant'; decision: Decision; actionIds: readonly string[]; seq: number; reasoning?: ModelReasoning; turn?: string }
  /** `dryRun`: the text is a preview of a call that did not happen (it shows what was asked, not what a system returned: never evidence). */
  | { kind: 'observation'; actionId: string; tool: string; text: string; ok: boolean; seq: number; turn?: string; dryRun?: boolean }
  | { kind: 'feedback'; text: string; seq: number; turn?: string }

export interface RunState {
  runId: string
  agent: string
  task: string
  status: RunStatus
  failureCode?: Code
  reason?: string
  answer?: string
  lastSeq: number
  createdAt: number
  updatedAt: number
  budgets: Budgets
  deadline?: number
  /** The plugins the run runs on: those of run/start, then of run/handoff, updated by each accepted drift. */
  plugins: Record<string, string>
  /** Content hashes of those plugins, when recorded (run/start `hashes`, accepted drifts). */
  hashes?: Record<string, string>
  services: Record<string, string>
  /** Turns started so far; the current turn id is `t${turns}`. */
  turns: number
  /** Steps started so far (the step budget counts these); the current step id is `s${steps}`. */
  steps: number
  /** A step was started and not yet ended. */
  stepOpen: boolean
  /** Actions the model proposed in the current (or last) step. */
  stepActions: number
  /** What the model decided in the open step; unset until its answer is on record. */
  stepDecision?: 'tool_calls' | 'final' | 'ask_user'
  /** The open step's final answer was verified, or its question was put to the user. */
  stepSettled: boolean
  usage: Usage
  /** Approvals given for the rest of this run (scope `run`), oldest first. */
  grants: ApprovalGrant[]
  /**
   * What plugins keep in the run, by plugin name: each slice changes only by that plugin's own
   * `slice/update` events (a tool's `ToolResult.state`, a progress verdict's `state`), so it replays
   * with the run. Absent until the first. Read one with `sliceOf(state, name)`.
   */
  slices?: Record<string, Readonly<Record<string, unknown>>>
  repairs: number
  /** Steps of child runs (subagents), counted against this run's step budget. */
  nestedSteps: number
  /** Set on a child run: who started it. */
  parent?: ParentLink
  /** Set on a run that is a turn of a thread (run/start `thread`). */
  thread?: ThreadLink
  /** References of the artifacts this run's calls produced (tool/end `artifact` and `redacted.audit`), in order; absent until the first. */
  artifacts?: string[]
  /**
   * Budget set aside for calls in flight (budget/reserved), released when each is settled
   * (budget/settled) or its action ends; absent when none was ever made. Counted as spent by the
   * budget checks, so calls side by side cannot overshoot together (the meter: core/kernel/meter.ts).
   */
  reservations?: Reservation[]
  /** A tool asked to hand the run to another agent; cleared by run/handoff. */
  handoff?: { to: string; reason?: string; seq: number }
  transcript: TranscriptEntry[]
  actions: Record<string, ActionState>
  /** Actions of the current step that have not been settled yet, in the order the model proposed them. */
  pending: string[]
  /** What the run waits for while paused. */
  waiting?: {
    status: RunStatus
    actionId?: string
    reason: string
    code?: Code
    /** The condition outside the run that call `actionId` waits on (run/paused `waitsOn`, or `child` as kind `child`). */
    on?: WaitCondition
    /** When that condition is a child run: the child (run/paused `child`). */
    child?: WaitingChild
  }
  cancel?: { by: string; at: number; reason?: string }
}
