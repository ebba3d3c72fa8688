/**
 * @module contracts/data
 * The plain data the kernel, the event log and the service contracts share: what a model decided, what
 * a run used, statuses, budgets, approvals and tickets. Types only, and a leaf: it imports nothing, so
 * every contract can name these without importing another contract (no cycle of types).
 */

/** One tool call proposed by the model. The kernel gives it a stable action id; `callId` is the provider's. */
export interface ProposedCall {
  name: string
  args: unknown
  /** The provider's own id for the call, kept so an adapter can pair results with calls. */
  callId?: string
  /** Set by an adapter when the arguments did not parse (for example truncated JSON); `args` is then the raw text. */
  argsError?: string
}

/** What the model decided for this step. */
export type Decision =
  | { kind: 'tool_calls'; calls: ProposedCall[]; text?: string }
  | { kind: 'final'; text: string }
  | { kind: 'ask_user'; question: string }

/**
 * What a provider needs back, unchanged, with the assistant message it came with: Anthropic's signed
 * thinking and redacted thinking blocks, for example. Opaque to the kernel and to context plugins: it
 * is recorded with the answer and carried on the assistant message; only the adapter that names itself
 * in `provider` reads `blocks`, and every other adapter ignores the field. Plain JSON. Since `model`
 * and `context` 1.2.0.
 */
export interface ModelReasoning {
  /** Which wire format the blocks are in, for example `anthropic`. */
  provider: string
  blocks: unknown[]
}

export interface Usage {
  inputTokens: number
  outputTokens: number
  /** Cost in US dollars, as computed by the adapter from its price table; 0 when unknown. */
  costUsd: number
}

export type Verdict = 'allow' | 'ask' | 'deny'

/** A piece of evidence: what supports the answer and where it came from. */
export interface Evidence {
  /** For example `citation`, `test`, `receipt`. */
  kind: string
  /** What it points at, for example `policy/refunds#2`. */
  ref: string
  /** Seq of the event that produced it, when it comes from the run log. */
  seq?: number
}

/** Who started a child run. `depth` is 1 for a child of a top-level run. */
export interface ParentLink {
  runId: string
  actionId: string
  agent: string
  depth: number
}

/**
 * The child run a run waits on: a tool call of the run (spawn_agent) started it, and it waits for a
 * person (an approval, an answer, a reconciliation, a resume). Set on the parent's run/paused.
 */
/**
 * A condition outside a run that one of its tool calls waits on (ToolResult.waitsFor): `kind` names its
 * owner (core/contracts/services/waits.ts); the other fields are the owner's reference to it, flat and
 * plain. A child run is kind `child`, whose fields are those of {@link WaitingChild}.
 */
export interface WaitCondition {
  kind: string
  [field: string]: string | number | boolean
}

export interface WaitingChild {
  runId: string
  agent: string
  /** The child's action that waits, when it waits on one. */
  actionId?: string
}

export type GuardStage = 'tool_input' | 'tool_output' | 'answer'

export type RunStatus =
  | 'CREATED'
  | 'RUNNING'
  | 'WAITING_APPROVAL'
  | 'WAITING_USER'
  | 'WAITING_RECONCILIATION'
  | 'SUSPENDED'
  | 'CANCELLING'
  | 'COMPLETED'
  | 'FAILED'
  | 'FAILED_VERIFICATION'
  | 'STOPPED'
  | 'CANCELLED'

export type WaitingStatus = 'WAITING_APPROVAL' | 'WAITING_USER' | 'WAITING_RECONCILIATION' | 'SUSPENDED'

export type TerminalStatus = 'COMPLETED' | 'FAILED' | 'FAILED_VERIFICATION' | 'STOPPED' | 'CANCELLED'

export interface Budgets {
  /** Model calls per run. The run stops with `max_steps` before call maxSteps + 1. */
  maxSteps: number
  /** Wall-clock milliseconds from run start (waiting for approval counts). */
  deadlineMs?: number
  /** Input plus output tokens over the whole run. */
  maxTokens?: number
  /** US dollars over the whole run, from the model adapter's cost figures. */
  maxCostUsd?: number
  /** Times a repairable verification failure is fed back to the model before the run fails. */
  maxRepairs: number
  /** Bounds over the whole thread, for a run that is a turn of one (see {@link ThreadLink}). */
  thread?: ThreadBudgets
}

export interface BudgetState {
  steps: number
  /** Steps of child runs (subagents). */
  nestedSteps?: number
  usage: Usage
  deadline?: number
}

/** A test on one argument: a glob string, an exact number/boolean, or an object of comparisons. */
export type ArgMatcher =
  | string
  | number
  | boolean
  | {
      equals?: unknown
      regex?: string
      in?: unknown[]
      gt?: number
      gte?: number
      lt?: number
      lte?: number
      exists?: boolean
    }

/** Argument path (dots for nesting) → test; every test must pass. */
export type ArgsPattern = Record<string, ArgMatcher>

export type ApprovalScope = 'once' | 'run' | 'grant'

/** Which arguments a grant covers: exactly these (by hash), those matching a pattern, or any. */
export type GrantArgs = { hash: string } | { pattern: ArgsPattern } | 'any'

export interface ApprovalGrant {
  id: string
  scope: 'run' | 'grant'
  agent: string
  tool: string
  args: GrantArgs
  policyVersion: string
  /** name@version of the plugin that registered the tool, when known. */
  toolVersion?: string
  by: string
  reason?: string
  createdAt: number
  expiresAt?: number
  revokedAt?: number
  revokedBy?: string
  revokeReason?: string
  /** The approval it was given with. */
  source: { runId: string; actionId: string }
}

export interface ApprovalGrantQuery {
  agent?: string
  tool?: string
  /** Include revoked and expired grants. */
  inactive?: boolean
  now?: number
}

export interface Ticket {
  readonly id: string
  readonly runId: string
  readonly actionId: string
  readonly tool: string
  readonly argsHash: string
  readonly policyVersion: string
  /** Epoch milliseconds after which the ticket is refused. */
  readonly expiresAt: number
  /**
   * The identity of the tool definition the loop resolved and judged (core/kernel/tool.ts), when the tool was
   * built with defineTool: only that definition's invoke accepts the ticket, not another object that
   * forwards to it under the same name.
   */
  readonly target?: object
}

export interface Grant {
  runId: string
  actionId: string
  tool: string
  argsHash: string
  policyVersion: string
  /** Lifetime in milliseconds; default 60 s, long enough for retries of one attempt, short enough to be useless later. */
  ttlMs?: number
  /** See {@link Ticket.target}. */
  target?: object
}

export interface CallBinding {
  runId: string
  actionId: string
  tool: string
  args: unknown
  /** The identity of the definition redeeming the ticket (defineTool passes its own); undefined otherwise. */
  target?: object
}

/**
 * A run that is one turn of a thread (a conversation of many turns; decision 0017: a thread is a
 * series of runs, one per turn). Recorded in run/start; turn ids are `t${turn}` without gaps across
 * the thread, and events of the run carry `threadId`.
 */
export interface ThreadLink {
  id: string
  /** 1 for the thread's first turn. */
  turn: number
  /** The run of the turn before, whose transcript this turn sees (absent for turn 1). */
  previousRunId?: string
  /** What the thread's earlier turns used; the thread's budgets count it with this run's usage. */
  usedBefore: Usage
}

/** Bounds over a whole thread (every turn of it); checked at the same boundaries as the run's own. */
export interface ThreadBudgets {
  /** Turns the thread may have; starting turn maxTurns + 1 is refused. */
  maxTurns?: number
  maxTokens?: number
  maxCostUsd?: number
}

/** Who may read a piece of stored event data. `model`: what the model saw; `ui`: people using the CLI and playground; `audit`: the audit view only. */
export type Visibility = 'model' | 'ui' | 'audit'

/**
 * A stored blob, addressed by content: `ref` is `artifact:sha256:<64 hex>` for visibility `ui` (the
 * default) and `audit:sha256:<64 hex>` for visibility `audit`. The ref is the store's key, so a store
 * keeps one blob per visibility and content, and a ref alone says which view may show it. Events and
 * observations carry this, never the bytes. `visibility` `audit` marks raw content a guardrail
 * redacted (kept only when the preset allows it, and shown only in the audit view).
 */
export interface ArtifactRef {
  ref: string
  sha256: string
  bytes: number
  mediaType: string
  visibility?: 'ui' | 'audit'
}

/** What a side-effecting call would do, computed by the tool's `preview` without doing it. */
export interface Preview {
  /** One line, for a person: what the call would do. */
  summary: string
  /** A unified diff, when the call changes text (the playground renders it as a diff). */
  diff?: string
  /** The record it would write. Plain JSON. */
  record?: unknown
  /** The amount it would move. */
  amount?: { value: number; currency: string }
}

/**
 * What came of asking for a preview: recorded with an approval request, shown to whoever decides.
 * `redacted` names the guard when the guardrail redacted or withheld the preview (or the failed
 * preview's message): what is recorded is what it let through.
 */
export type PreviewOutcome =
  | { status: 'ok'; preview: Preview; durationMs: number; redacted?: { guard: string } }
  /** The tool declares no `preview`. */
  | { status: 'unavailable' }
  /** The preview threw, timed out or answered something that is not a Preview (`code` from the error table). */
  | { status: 'failed'; code: string; message: string; redacted?: { guard: string } }

/**
 * Limits a policy may attach to an `allow` (a constrained allow). The tool gets them in `io.constraints`
 * and must declare in `enforces` that it can hold each one it is given, or the call is refused with
 * `constraint_unenforceable`. `timeLimitMs` the kernel enforces itself (it shortens the call's timeout).
 */
export interface Constraints {
  /** The largest amount the call may move (in the tool's own unit). */
  maxAmount?: number
  /** Paths the call may touch must start with this. */
  pathPrefix?: string
  /** The call must finish within this many milliseconds. */
  timeLimitMs?: number
}

/**
 * A change a plugin makes to its own slice of run state (`RunState.slices[plugin]`), recorded as
 * `slice/update` under the plugin's name: `set` replaces keys, `push` appends to lists, `add` appends
 * the values a list does not hold yet (compared as JSON). The update carries the values themselves, so
 * a run's slices replay from its log without the plugin's code.
 */
export interface SliceUpdate {
  set?: Record<string, unknown>
  push?: Record<string, unknown[]>
  add?: Record<string, unknown[]>
}

/** Budget set aside before a model or tool call runs, settled with what it actually cost after. */
export interface Reservation {
  /** The action it is for; absent for a model call. */
  actionId?: string
  kind: 'model' | 'tool'
  tokens: number
  costUsd: number
}
