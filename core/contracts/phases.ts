/**
 * @module contracts/phases
 * Every point of a run where a plugin may change what happens next, in run order, each with its payload
 * and its mode. Run events (core/contracts/events.ts) report what happened; phases come before it:
 * `tool/before-end` may rewrite a result, the guardrail screens it, `tool/shape-result` may keep it apart
 * as an artifact, and only then is `tool/end` recorded.
 *
 * - `notify`: handlers are told; nothing they return counts.
 * - `serial`: each handler may return a replacement of the value (or nothing, to keep it), which the
 *   next handler sees; the kernel checks the final value before it acts on it.
 * - `bail`: the first handler that answers `{ refuse: reason }` stops the phase, and the kernel acts on
 *   the refusal; nothing else a handler returns counts.
 *
 * A plugin handles a phase with `ctx.on(name, handler)`, so the handler goes when the plugin is
 * unplugged or swapped. The kernel runs the handlers of the run's agent only, in plugin order, each
 * bounded in time (`serviceTimeouts.phases`, the run's deadline, cancellation). Fail closed: a handler
 * that throws, overruns or returns a value the phase's check refuses refuses where the phase can refuse
 * (`phase_failed` as the reason), else the run fails with `phase_failed`.
 *
 * @example
 * // A domain rule: no refund above 500 without a ticket id, whatever policy says (docs/concepts/architecture.md).
 * ctx.on('tool/before-decide', ({ tool, args }) =>
 *   tool === 'refund' && args.amount > 500 && !args.ticketId ? { refuse: 'refunds above 500 need a ticket id' } : undefined)
 */
import type { PreviewOutcome } from './data.ts'
import type { ToolView } from './services/tools.ts'
import type { ContextMessage } from './services/context.ts'
import type { Budgets, ThreadLink } from './data.ts'
import type { Code } from './errors.ts'
import type { RunEventMap } from './events.ts'
import type { RunState } from './state.ts'

export type PhaseMode = 'notify' | 'serial' | 'bail'

/** A bail handler's answer that stops its phase. */
export interface Refusal {
  refuse: string
}

/** What a handler gets besides the value: whose run it is, and a read-only view of its state. */
export interface PhaseInfo {
  runId: string
  agent: string
  state: Readonly<RunState>
  /** Aborted when the run is cancelled: work a handler started should stop. */
  signal: AbortSignal
  /** How long the handler may take (`serviceTimeouts.phases`): slow work it does must answer within it. */
  timeoutMs: number
}

/** The step's tools as the model is about to be shown them. */
export interface ShownTools {
  /** One view per visible tool, in the tools service's order: a handler may change what a view says, not which tools there are. */
  views: ToolView[]
}

/**
 * What the model is about to be shown this step: the context service's projection, compacted when it
 * was over the threshold. A handler may answer with other messages (a house rule added, a name
 * masked) and their token estimate; the kernel checks them as it checks a projection, records the
 * count in `step/context`, and the model reads them. The tools shown are `tools/before-show`'s.
 */
export interface ModelContext {
  messages: ContextMessage[]
  /** The estimate of `messages`' tokens; a handler that changes them says what they come to. */
  tokens: number
}

/** A proposed call about to be judged (before the guardrail and policy see it). */
export interface ProposedCall {
  actionId: string
  tool: string
  /** The call's arguments as the tool's schema parsed them. */
  args: unknown
  argsHash: string
  /** The model asked for the call's preview only (`dry_run`). */
  dryRun?: boolean
}

/**
 * A call policy answered `ask`, as its `tool/decision` recorded it. A handler may answer it with the
 * grant that covers it: a copy with `grantId` set. The kernel then checks that grant itself (this
 * run's, or standing in the store; active; for this agent, tool, arguments, policy and tool version;
 * given by one of `approvers`) and approves the call on record as `grant:ID`; otherwise a person is asked.
 */
export interface AskedCall extends ProposedCall {
  verdict: 'ask'
  ruleId: string
  reason: string
  /** Who the decision lets approve the call (unset: anyone). */
  approvers?: string[]
  policyVersion: string
  /** name@version of the plugin that registered the tool, when known. */
  toolVersion?: string
  /** The id of the grant (`ApprovalGrant.id`) that covers the call: the one thing a handler may set. */
  grantId?: string
}

/**
 * An authorized call about to run: policy allowed it (or a person approved it), and nothing of it is
 * started yet (no ledger intent, ticket or `tool/start`). A handler may still refuse it, for what only
 * holds now: the desk is closed, the account was frozen after the approval was given.
 */
export interface AuthorizedCall extends ProposedCall {
  /** The policy version it was decided (or approved) under. */
  policyVersion: string
  /** Who approved it, when a person (or a grant, `grant:ID`) did; unset for policy's own allow. */
  approvedBy?: string
}

/**
 * A call whose preview is wanted: before its approval request is recorded, or in place of the call when
 * it is a dry run. A handler answers with the call and its `preview`; the kernel checks that, passes it
 * through the guardrail, and records it with the request or as the dry run's outcome.
 */
export interface PreviewCall extends ProposedCall {
  preview?: PreviewOutcome
}

/** A call's result about to be recorded in `tool/end`: what the store keeps and what the model reads. */
export interface ShapedResult {
  actionId: string
  tool: string
  /** The raw result, kept in the store. JSON. */
  output: unknown
  /** What the model reads next. */
  observation: string
}

/**
 * The run's final answer, as the guardrail let it through, about to be judged by the verifier. A
 * handler may refuse it with a reason: the verifier is not asked, `verify/end` records the refusal
 * (`phase_refused`, repairable), and the model may answer again within the repair budget. Nothing a
 * handler answers can complete a run: only the verifier's recorded pass does.
 */
export interface FinalAnswer {
  answer: string
}

/** What a run joining a thread claims with its first append (`AppendOptions.thread`): the store makes turns gap-free. */
export interface ThreadClaim {
  id: string
  turn: number
  agent: string
}

/**
 * The codes a `run/before-start` handler may refuse a start with (`refused`): those of a thread that
 * cannot take the run now, and of what was asked or configured wrong. Any other code is `phase_failed`.
 */
export const StartRefusalCodes: readonly Code[] = Object.freeze([
  'invalid_input',
  'feature_unsupported',
  'thread_busy',
  'thread_closed',
  'thread_budget_exceeded',
  'thread_spending_unknown',
])

/** The most bytes of JSON the entries of a `thread/history` may take: the kernel records no more. */
export const MaxHistoryBytes = 256 * 1024

/**
 * What `run/start` is about to record, before anything of the run is: `task`, `budgets` and
 * `threadAsked` are the caller's and stay as they are. For a run asked to join a thread, a handler
 * (plugins/threads) fills in `thread`, `history` (turns after the first) and `claim`, or refuses the
 * start (`refused`, nothing is recorded). Checked by the kernel (core/contracts/checks/run-draft.ts).
 */
export interface RunDraft {
  task: string
  budgets: Budgets
  /** The thread the run was asked to join (`StartOptions.thread`, `--thread`), as given. */
  threadAsked?: string
  /** The run's place in the thread, recorded in run/start. */
  thread?: ThreadLink
  /** What the turn sees of the turns before it, recorded in thread/history right after run/start. */
  history?: RunEventMap['thread/history']
  claim?: ThreadClaim
  /** The run does not start: thrown with this code. A later handler cannot withdraw it. */
  refused?: { code: Code; message: string }
}

/**
 * A call's result as the guardrail let it through, about to be recorded in `tool/end`: inline, or kept
 * apart as an artifact (docs/concepts/artifacts.md). A handler reads the content and answers with what
 * the model reads and whether the content is kept apart; it never changes the content. The kernel
 * stores what it asks for with its own writer and names it in `tool/end` (ref, sha256, size).
 */
export interface ResultShape {
  actionId: string
  tool: string
  /**
   * The result as the guardrail let it through (redacted, or the notice of a withheld one), secrets
   * scrubbed, as an artifact would hold it: a string as it is, anything else as its JSON text.
   */
  content: string
  /** `content` is the JSON of a value (not a string result). */
  json: boolean
  /** What the model reads: the tool's own observation, or the result rendered; as the guardrail let it through. */
  observation: string
  /** `observation` is the tool's own (else it is the result rendered). */
  ownObservation: boolean
  /** The tool's own threshold (`Tool.artifactAboveBytes`), when it declares one. */
  artifactAboveBytes?: number
  /** The guard that redacted the result, or withheld it (`withheld`: content is then its notice). */
  redacted?: { guard: string; withheld: boolean }
  /** The answer: keep `content` apart as an artifact of this media type; `tool/end` names it and carries no output. */
  artifact?: { mediaType: string }
  /** The answer: keep the raw result apart too, audit-only. Only for a redacted result; the kernel alone holds it. */
  keepRaw?: boolean
}

/**
 * The phases, in run order. `mode` says how handlers are run; `value` is what they get (and, for a
 * serial phase, what they may return instead).
 */
export interface PhaseTable {
  /** Before run/start is recorded (nothing of the run is yet). **Can modify** the thread fields, or refuse the start. */
  'run/before-start': { mode: 'serial'; value: RunDraft }
  /** Before the step's tools are shown to the model. **Can modify** the views (not which tools there are). */
  'tools/before-show': { mode: 'serial'; value: ShownTools }
  /** Before the step's context is recorded and the model is asked. **Can modify** the messages the model reads. */
  'step/before-model': { mode: 'serial'; value: ModelContext }
  /** After the guardrail passed a proposed call's arguments, before policy decides it. **Can veto.** */
  'tool/before-decide': { mode: 'bail'; value: ProposedCall }
  /** After policy's `ask` was recorded, before the run waits for a person. **Can name** the grant that covers the call. */
  'tool/after-decide': { mode: 'serial'; value: AskedCall }
  /** After policy asked for approval, before the request is recorded; or in place of a dry run's call. **Can answer** the preview. */
  'tool/preview': { mode: 'serial'; value: PreviewCall }
  /** After a call was authorized, before anything of it starts (ledger intent, ticket, `tool/start`). **Can veto.** */
  'tool/before-execute': { mode: 'bail'; value: AuthorizedCall }
  /** After a call returned, before its `tool/end` is recorded. **Can modify** output and observation. */
  'tool/before-end': { mode: 'serial'; value: ShapedResult }
  /** After the guardrail screened the result, before its `tool/end` is recorded. **Can keep it apart** as an artifact. */
  'tool/shape-result': { mode: 'serial'; value: ResultShape }
  /** After the guardrail passed a final answer, before the verifier judges it. **Can veto** (the model may answer again). */
  'verify/before-verdict': { mode: 'bail'; value: FinalAnswer }
}

export type PhaseName = keyof PhaseTable
export type PhaseValue<N extends PhaseName> = PhaseTable[N]['value']

/** The phases in run order, with their modes: for docs, the architecture test and the playground. */
export const Phases: readonly { name: PhaseName; mode: PhaseMode }[] = Object.freeze([
  { name: 'run/before-start', mode: 'serial' },
  { name: 'tools/before-show', mode: 'serial' },
  { name: 'step/before-model', mode: 'serial' },
  { name: 'tool/before-decide', mode: 'bail' },
  { name: 'tool/after-decide', mode: 'serial' },
  { name: 'tool/preview', mode: 'serial' },
  { name: 'tool/before-execute', mode: 'bail' },
  { name: 'tool/before-end', mode: 'serial' },
  { name: 'tool/shape-result', mode: 'serial' },
  { name: 'verify/before-verdict', mode: 'bail' },
])

/** A handler of phase `N`: a serial one may return a replacement, a bail one a refusal. */
export type PhaseHandler<N extends PhaseName> = (
  value: Readonly<PhaseValue<N>>,
  info: PhaseInfo,
) => PhaseTable[N]['mode'] extends 'serial'
  ? PhaseValue<N> | undefined | Promise<PhaseValue<N> | undefined>
  : PhaseTable[N]['mode'] extends 'bail'
    ? Refusal | undefined | Promise<Refusal | undefined>
    : void

declare module 'cordis' {
  interface Events<C> {
    'run/before-start': PhaseHandler<'run/before-start'>
    'tools/before-show': PhaseHandler<'tools/before-show'>
    'step/before-model': PhaseHandler<'step/before-model'>
    'tool/before-decide': PhaseHandler<'tool/before-decide'>
    'tool/after-decide': PhaseHandler<'tool/after-decide'>
    'tool/preview': PhaseHandler<'tool/preview'>
    'tool/before-execute': PhaseHandler<'tool/before-execute'>
    'tool/before-end': PhaseHandler<'tool/before-end'>
    'tool/shape-result': PhaseHandler<'tool/shape-result'>
    'verify/before-verdict': PhaseHandler<'verify/before-verdict'>
  }
}
