/**
 * @module events
 * The event catalogue. Run events are the durable record of a run (appended to the store, then
 * dispatched to listeners); plugin events describe the plugin runtime and are not stored.
 * docs/reference/events.md has one section per event; test/docs.test.ts keeps the two in step.
 */
import type { Code, ErrorKind } from './errors.ts'
import type { TranscriptEntry } from './state.ts'
import type {
  ApprovalGrant,
  ApprovalScope,
  ArtifactRef,
  Budgets,
  Constraints,
  Decision,
  Evidence,
  GuardStage,
  ModelReasoning,
  ParentLink,
  PreviewOutcome,
  Reservation,
  SliceUpdate,
  TerminalStatus,
  ThreadLink,
  Usage,
  WaitingChild,
  WaitCondition,
  Verdict as PolicyVerdict,
  WaitingStatus,
} from './data.ts'

/**
 * Version of the envelope and payload shapes below. Bump on any incompatible change; the reducer keeps
 * reading older events (core/kernel/state.ts).
 * - 2: plugins keep their own state in slices (`slice/update`). A schema-1 `tool/end`'s `reveals` and
 *   `step/no-progress` are read as updates of their producer's slice (`revealed`, `interventions`).
 */
export const EventSchemaVersion = 2

/** Fields every run event carries. */
export interface Envelope {
  /** Per run, starting at 1, without gaps. */
  seq: number
  /** Milliseconds since the epoch, when the event was recorded. */
  time: number
  runId: string
  /** Set on every event of a run that is a turn of a thread (run/start `thread`). */
  threadId?: string
  turnId?: string
  stepId?: string
  actionId?: string
  /** Seq of the event that led to this one. */
  causation?: number
  /** {@link EventSchemaVersion} at the time of writing. */
  schema: number
  /** name@version of the plugin that produced the event (`kernel@x.y.z` for the loop itself). */
  producer: string
}

/** What a run was started with instead of its preset's (recorded in run/start). */
/** Budgets a resume may set (run/resumed `budgets`): positive figures, replacing the run's own. */
export interface ResumeBudgets {
  maxTokens?: number
  maxCostUsd?: number
}

export interface RunOverrides {
  /** The model plugin `cordage run --model` put in place of the preset's: `name@version`. */
  model?: string
}

/** Payloads of run events, by type. */
export interface RunEventMap {
  /** Fired once, first, when a run is created. */
  'run/start': {
    agent: string
    task: string
    /** Every plugin of the agent: name → version. */
    plugins: Record<string, string>
    /** Content hash of each plugin's folder (host/plugin-hash.ts): name → `sha256:…`. Absent in runs recorded before hashes were. */
    hashes?: Record<string, string>
    /** Which plugin provides each service: service → name@version. */
    services: Record<string, string>
    budgets: Budgets
    /** Absolute deadline in epoch milliseconds, when the agent has one. */
    deadline?: number
    /** Set on a child run (a subagent): the run and action that started it. */
    parent?: ParentLink
    /** What the run was started with instead of the preset's; absent when nothing was overridden (and in older runs). */
    overrides?: RunOverrides
    /** Set when the run is a turn of a thread: which thread, which turn, the turn before and what the thread used before it. */
    thread?: ThreadLink
  }
  /**
   * What a turn of a thread sees of the turns before it, recorded once, after run/start and before
   * turn/start: the previous turn's transcript (itself holding the turns before it). Entries of earlier
   * turns carry `turn` and their action ids are prefixed with it (`t1.s1.a1`), so they never collide with
   * this run's. `shortened` counts earlier turns kept only as the user's message and the answer, to
   * bound the record (plugins/threads `historyBytes`; the kernel records at most MaxHistoryBytes, 256 KB of
   * JSON, core/contracts/phases.ts); `dropped` counts the oldest turns
   * left out when even that does not fit. The compactor shrinks the projection further when needed.
   */
  'thread/history': { from: string; turns: number; entries: TranscriptEntry[]; shortened?: number; dropped?: number }
  /** A durable resume point, recorded before the run waits for anything outside it. */
  'run/checkpoint': { reason: 'approval' | 'user' | 'suspend' | 'reconciliation'; pending: string[]; steps: number; usage: Usage }
  /** The run stopped driving and waits (for approval, the user, reconciliation, or a resume). `code` says why, where a code applies. */
  /**
   * `waitsOn`: the run's call `actionId` waits on a condition outside the run (ToolResult.waitsFor; since
   * waits 1.0.0). `child`: the condition is a child run that waits for a person, recorded in this field
   * as since issue 17 (never in `waitsOn`).
   */
  'run/paused': { status: WaitingStatus; reason: string; actionId?: string; code?: Code; child?: WaitingChild; waitsOn?: WaitCondition }
  /**
   * The run drives again after a wait. `budgets`: token and cost bounds raised (or set) on resume, for a
   * run suspended because a reservation did not fit (`cordage resume --max-tokens --max-cost`); from here
   * on they replace the run's own.
   */
  'run/resumed': { from: WaitingStatus; by: string; input?: string; budgets?: ResumeBudgets }
  /** Cancellation was requested (at `requestedAt`, possibly in another process); the run is CANCELLING until run/end. */
  'run/cancel-requested': { by: string; reason?: string; requestedAt: number }
  /** A worker took over a run whose previous owner stopped (its lease expired) and drives it from the log. */
  'run/recovered': { worker: string; token: number; previous?: string }
  /**
   * Another agent drives the run from here on: a tool of the step before asked for it (ToolResult.handoff).
   * `plugins`, `hashes` (their content hashes, host/plugin-hash.ts) and `services` are the new agent's,
   * so later drift checks compare with them. `hashes` is absent in runs recorded before it was.
   */
  'run/handoff': {
    from: string
    to: string
    reason?: string
    plugins: Record<string, string>
    hashes?: Record<string, string>
    services: Record<string, string>
  }
  /**
   * The agent's plugins differ (in version, or in content at one version) from those the run started
   * with; `decision` says what was done about it, and each change says what was decided for that plugin.
   */
  'run/version-drift': {
    changes: {
      plugin: string
      from?: string
      to?: string
      fromHash?: string
      toHash?: string
      decision?: 'refused' | 'accepted' | 'pinned'
      note?: string
    }[]
    /** `refused` when any change was refused; `pinned` when every changed plugin runs at its recorded version; else `accepted`. */
    decision: 'refused' | 'accepted' | 'pinned'
    /** Who gave the command. A refusal is the harness's, not theirs: their command was not carried out. */
    by: string
    /** The command that would continue the run (`worker`: a worker taking it over); absent in events recorded before it was kept. */
    command?: 'approve' | 'reject' | 'reconcile' | 'resume' | 'worker'
  }
  /**
   * Fired once, last. For a CANCELLED run, `effects` lists side effects that committed after the cancel
   * was requested, and those whose outcome is unknown: cancelling is not "nothing happened".
   */
  'run/end': {
    /** Steps of child runs (subagents), when there were any; `steps` counts this run's own. */
    nestedSteps?: number
    status: TerminalStatus
    failureCode?: Code
    reason?: string
    answer?: string
    usage: Usage
    steps: number
    effects?: {
      committed: { actionId: string; tool: string; receipt?: unknown }[]
      unknown: { actionId: string; tool: string; key: string }[]
    }
  }
  'turn/start': { input: string }
  'turn/end': { answer?: string }
  'step/start': { index: number }
  /**
   * The projection for this step was assembled. A summary: the projection itself is rebuilt from state
   * (each message carries the seq it came from), so the log grows with events, not with copies of context.
   */
  'step/context': { messages: number; tokens: number; tools: string[] }
  'step/model-request': { model: string; messages: number; tools: string[]; attempt: number }
  /** A model request failed; `retryInMs` is set when the kernel will retry. */
  'step/model-error': { errorClass: ErrorKind; code: Code; message: string; attempt: number; retryInMs?: number }
  /** The model's decision, persisted before the kernel acts on it. */
  'step/model-response': {
    decision: Decision
    usage: Usage
    model?: string
    /** What goes back to the provider with this answer (its signed thinking blocks, for example); scrubbed like the rest. */
    reasoning?: ModelReasoning
  }
  'step/end': { actions: number }
  /**
   * A plugin changed its own slice of run state (`RunState.slices[name]`, name from `producer`): what
   * a tool returned in `ToolResult.state`, or a progress verdict in `state`. Checked before it is recorded.
   */
  'slice/update': SliceUpdate
  /** The progress service judged the run stalled, before a new step; `response` says what happens now. */
  'step/no-progress': {
    detector: string
    response: 'feedback' | 'ask' | 'stop'
    reason: string
    thresholds: Record<string, number>
    text?: string
  }
  /** The projection was over the compactor's threshold: the compactor is asked to shrink it. */
  'compaction/start': { strategy: string; tokens: number; limit: number }
  /**
   * The compactor answered. `rejected` says why its result was not used (the step then sees the whole
   * projection); otherwise `after` is what the model sees, `summarised` the seqs now only summarised.
   * With `extends`, those are the seqs summarised in addition to the ones of the compaction/end at that
   * seq (itself maybe extending an earlier one): a summary reused or extended step after step is
   * recorded by what it adds, not by every seq it stands for again.
   */
  /**
   * Budget set aside before calls start: a model call, or every call of a wave at once (so parallel
   * calls and subagents cannot overshoot). `available` is what the run's (and thread's) budgets left
   * before these reservations, counting those still open.
   */
  'budget/reserved': { reservations: Reservation[]; available: { tokens?: number; costUsd?: number } }
  /** A reservation was settled with what the call actually cost (the reservation's unused part goes back to the pool). */
  'budget/settled': { reservation: Reservation; actual: { tokens: number; costUsd: number } }
  'compaction/end': {
    strategy: string
    before: number
    after: number
    summarised: number[]
    extends?: number
    kept: number
    usage?: Usage
    rejected?: string
  }
  /**
   * `argsError` is set when the model's arguments did not parse; the call then ends with invalid_arguments.
   * `dryRun` when the model asked for the call's preview (`dry_run: true`, removed from `args`): policy
   * decides it as a read, and the tool's `preview` runs instead of the tool.
   */
  'tool/proposed': { tool: string; args: unknown; argsHash: string; callId?: string; argsError?: string; dryRun?: boolean }
  /** `toolVersion` is the plugin that registered the tool; a decision holds only for that version. */
  'tool/decision': {
    verdict: PolicyVerdict
    ruleId: string
    policyVersion: string
    reason: string
    approvers?: string[]
    toolVersion?: string
    /** Limits the policy attached to an allow; the tool gets them in `io.constraints`. */
    constraints?: Constraints
  }
  'tool/approval-requested': {
    tool: string
    args: unknown
    argsHash: string
    policyVersion: string
    ruleId: string
    reason: string
    approvers?: string[]
    toolVersion?: string
    /** What the call would do, computed before the request (or why there is no preview). */
    preview?: PreviewOutcome
  }
  /**
   * `scope` says how far the approval reaches: this call (`once`), the rest of the run (`run`), or a
   * standing grant across runs (`grant`); `grant` is the grant it created. When a grant approved the
   * call without asking anyone, `by` is `grant:<id>` and `grantId` names it.
   */
  'tool/approval-decided': {
    approved: boolean
    by: string
    reason?: string
    scope?: ApprovalScope
    grant?: ApprovalGrant
    grantId?: string
    /**
     * Set on an approval given together with an accepted drift that changed the policy (or the tool's
     * plugin) since the decision that asked: the versions it was given under. The action is decided again
     * under them, and an `ask` there is answered by this approval, if the new decision lets `by` approve.
     */
    policyVersion?: string
    toolVersion?: string
  }
  'tool/start': {
    tool: string
    attempt: number
    ticket: string
    idempotencyKey: string
    argsHash: string
    policyVersion: string
    timeoutMs: number
  }
  /** `deduplicated` when the effect was already done under the same idempotency key (by that run and action): the tool did not run again. */
  'tool/end': {
    tool: string
    attempt: number
    /** The raw result; absent when it is an `artifact`, the redacted form when `redacted`. */
    output?: unknown
    observation: string
    receipt?: unknown
    durationMs: number
    deduplicated?: { runId: string; actionId: string }
    /** Schema 1 only: tool names the call made visible, read as a push to the producer's slice (`revealed`). */
    reveals?: string[]
    /** Spent in a nested run on the run's behalf (counted in the run's budgets). */
    usage?: { inputTokens: number; outputTokens: number; costUsd: number; steps?: number }
    /** The run goes to this agent once the step is over. */
    handoff?: { agent: string; reason?: string }
    /** The raw result was larger than the tool's threshold: it is stored as this artifact and `output` is left out. */
    artifact?: ArtifactRef
    /**
     * A guardrail redacted the result: `output` holds what the model and people may see, not the raw
     * result; `audit` is the raw result as an audit-only artifact, when the preset keeps it.
     */
    redacted?: { guard: string; audit?: ArtifactRef }
    /** The call was a dry run: `output` is the tool's Preview (as the guardrail let it through), and nothing was done. */
    dryRun?: boolean
  }
  /**
   * An action whose effect was unknown (its call started and no outcome was recorded) was settled: by
   * the tool's `reconcile`, or by a person. Committed closes the action with a result; not committed
   * sends it back to be run again under the same idempotency key.
   */
  'tool/reconciled': {
    tool: string
    key: string
    committed: boolean
    by: string
    receipt?: unknown
    output?: unknown
    /** The guardrail redacted or withheld the tool's `output`: it holds what it let through. */
    redacted?: { guard: string }
  }
  /**
   * The action ended without a result. After tool/start it closes the call; without one, the call never
   * started (unknown tool, invalid arguments, denied, rejected, or the run ended first). Every
   * tool/proposed is closed by exactly one tool/end, tool/error or committed tool/reconciled, not
   * counting a tool/error with `willRetry` (another attempt follows) or `unknown` (a side-effecting call
   * ended without an outcome: the action stays open until it is settled).
   * `stack` (the first lines) is set when the tool threw something other than a CordageError: a bug,
   * for the developer; the model sees only `observation`.
   */
  'tool/error': {
    tool: string
    attempt?: number
    errorClass: ErrorKind
    code: Code
    message: string
    observation: string
    durationMs?: number
    willRetry?: boolean
    unknown?: boolean
    stack?: string
    /** The guardrail redacted or withheld the message (and `stack`, `observation` with it): they hold what it let through. */
    redacted?: { guard: string }
    /** The action was a dry run: nothing was done, whatever ended it. */
    dryRun?: boolean
  }
  /**
   * A guardrail stopped or cleaned content (core/contracts/services/guardrail.ts). At `tool_input` and
   * `tool_output` it carries the action's ids; what follows says what became of the content: a
   * tool/error `guardrail_blocked` (input), the tool/end with the cleaned observation (output), or a
   * verify/end `guardrail_blocked` / the verified cleaned answer (answer).
   */
  'guard/tripped': { stage: GuardStage; guard: string; action: 'block' | 'redact'; reason: string; guardVersion: string }
  'verify/start': { answer: string }
  /** `repair` is true when the kernel feeds the reason back to the model for another try. */
  /** `feedback` is what the model is told when it may repair (`reason` stays in the record only, for a sealed check). */
  'verify/end': { ok: boolean; code?: Code; reason?: string; feedback?: string; repair?: boolean; evidence: Evidence[] }
}

export type RunEventType = keyof RunEventMap

/** A run event: the envelope plus `type` and its payload in `data`. */
export type RunEvent<K extends RunEventType = RunEventType> = {
  [P in K]: Envelope & { type: P; data: RunEventMap[P] }
}[K]

/** Every run event type, in catalogue order (used by docs checks and the CLI). */
export const RunEventTypes: readonly RunEventType[] = [
  'run/start',
  'run/checkpoint',
  'run/paused',
  'run/resumed',
  'run/cancel-requested',
  'run/recovered',
  'run/version-drift',
  'run/handoff',
  'run/end',
  'thread/history',
  'turn/start',
  'turn/end',
  'step/start',
  'step/context',
  'step/model-request',
  'step/model-error',
  'step/model-response',
  'step/end',
  'step/no-progress',
  'slice/update',
  'budget/reserved',
  'budget/settled',
  'compaction/start',
  'compaction/end',
  'tool/proposed',
  'tool/decision',
  'tool/approval-requested',
  'tool/approval-decided',
  'tool/start',
  'tool/end',
  'tool/error',
  'tool/reconciled',
  'guard/tripped',
  'verify/start',
  'verify/end',
]

Object.freeze(RunEventTypes)
/** Payload of plugin events (not stored in any run). */
export interface PluginEvent {
  agent: string
  name: string
  version: string
  /** plugin/failed: why. */
  code?: Code
  message?: string
  /** plugin/disposed: why it went away. */
  reason?: 'swap' | 'stop' | 'rollback'
  /** plugin/reloaded: whether the rebuilt version now serves (`version` is the one serving either way). */
  ok?: boolean
  /** plugin/reloaded: the version and bundle hash that served before the reload. */
  from?: { version: string; hash?: string }
  /** plugin/reloaded: the version and bundle hash that was built (absent when the build itself failed). */
  to?: { version: string; hash: string }
  /** plugin/reloaded: the plugin folder that changed. */
  dir?: string
  /** plugin/reloaded: milliseconds from the first file change seen to the new version serving (or the failure). */
  durationMs?: number
  /** plugin/reloaded: a failed reload of a policy, guardrail or verifier left a refusing stand-in (the old version could not be restored). */
  failClosed?: boolean
}

export const PluginEventTypes = ['plugin/loaded', 'plugin/disposed', 'plugin/failed', 'plugin/reloaded'] as const

/** Events that preview work in progress: not stored, no envelope, never replayed. */
export const PreviewEventTypes = ['model/delta'] as const

/** A streamed piece of a model answer (preview only: not stored, no seq). */
export interface ModelDeltaEvent {
  runId: string
  stepId: string
  attempt: number
  /** name@version of the model adapter. */
  producer: string
  text?: string
  toolCall?: { index: number; name?: string; argsDelta?: string }
}

type RunEventHandlers = { [K in RunEventType]: (event: RunEvent<K>) => void }

declare module 'cordis' {
  interface Events<C> extends RunEventHandlers {
    /** A plugin was plugged into an agent and is active. */
    'plugin/loaded'(event: PluginEvent): void
    /** A plugin left an agent (swap, stop, or rollback of a failed load). */
    'plugin/disposed'(event: PluginEvent): void
    /** A plugin could not be loaded or crashed while starting. */
    'plugin/failed'(event: PluginEvent): void
    /** `cordage dev` rebuilt a plugin folder and tried to swap it into an agent: ok, or why the old version still serves. */
    'plugin/reloaded'(event: PluginEvent): void
    /** A streamed piece of a model answer as it arrives; preview only (not stored, no seq, never acted on). */
    'model/delta'(event: ModelDeltaEvent): void
  }
}
