/**
 * @module services/tools
 * The `tools` contract: the registry (every installed tool) and the visible set (what the model sees
 * this step). Tools themselves are built with {@link defineTool} in core/kernel/tool.ts, which guards their
 * execution with an authorization ticket, so a registry can hand tools around without handing out the
 * power to run them.
 */
import type { Constraints, Preview, SliceUpdate, Ticket, WaitCondition, WaitingChild, WaitingStatus } from '../data.ts'
import type { RunState } from '../state.ts'

/**
 * 1.1.0: `preview`, `enforces`, `cost`, `artifactAboveBytes`, `io.constraints` (issue 12).
 * 1.2.0: `ToolResult.state` (a plugin's slice of run state) replaces `reveals` (issue 28).
 */
export const ToolsContract = '1.2.0'

/** The constraints a policy may attach to an allow, by name (see {@link Constraints}). */
export type ConstraintName = keyof Constraints

/** What running the tool may change outside the run. */
export type SideEffect = 'none' | 'local' | 'external'

/** The execution contract of a tool: what policy, the ledger and the loop rely on. */
export interface ToolContract {
  sideEffect: SideEffect
  /** Running it twice with the same idempotency key has the effect of running it once. */
  idempotent: boolean
  /** The kernel aborts the call and records `tool_timeout` after this many milliseconds. */
  timeoutMs: number
  /** A hint for policy: this tool wants a human to approve each call. Policy decides. */
  needsApproval: boolean
  /** Extra attempts after a transient failure; used only when the tool is idempotent or has no side effect. */
  retries: number
}

/** A zod-compatible argument schema. The kernel only needs `safeParse`; zod schemas fit as they are. */
export interface ArgSchema<T = unknown> {
  safeParse(
    input: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } }
}

/** What a tool gets besides its arguments. */
export interface ToolIO {
  runId: string
  actionId: string
  /** Stable across retries of the same action: pass it to the system you call so it can deduplicate. */
  idempotencyKey: string
  /** 1 for the first try, 2 for the first retry, ... */
  attempt: number
  /**
   * The run's lease token: it only grows, each time another worker takes the run over. Pass it to the
   * system you write to, with the idempotency key, when that system can keep the highest token it saw
   * per key and refuse writes with a lower one: then a worker that was frozen mid-call (and whose run
   * another worker took over) cannot land a second effect when it thaws. docs/concepts/durability.md, "Fencing".
   * Undefined when the run is not driven under a lease.
   */
  fencingToken?: number
  /** Aborted on timeout and on cancellation. */
  signal: AbortSignal
  /**
   * Limits the policy attached to this call's allow (a constrained allow). The tool must hold each one
   * it declares in `enforces`; the kernel refuses the call before it starts when it is given one it does not.
   */
  constraints?: Readonly<Constraints>
}

/** What a preview gets besides the arguments: no ticket, since a preview must not change anything. */
export interface PreviewIO {
  runId: string
  actionId: string
  /** Aborted when the preview overruns its time limit (the tool's `timeoutMs`) or the run is cancelled. */
  signal: AbortSignal
}

export interface ToolResult {
  /** The raw result, kept in the store. Must be JSON-serialisable. */
  output: unknown
  /** Text for the model. Defaults to the JSON of `output`, shortened. */
  observation?: string
  /** Proof from the target system that an effect committed (an id, a row, a receipt). */
  receipt?: unknown
  /**
   * What the call changes in the run's slice of the plugin that registered the tool
   * (`RunState.slices[plugin]`, read with `sliceOf`): recorded in `slice/update` just before
   * `tool/end`, so it replays with the run. tool-search keeps the tools a search revealed this way.
   */
  state?: SliceUpdate
  /**
   * What the call spent on the run's behalf in a nested run (a subagent): added to the run's usage,
   * and `steps` to its nested steps, so the run's budgets hold across its children.
   */
  usage?: { inputTokens: number; outputTokens: number; costUsd: number; steps?: number }
  /** Hand the run to another agent once this step is over (recorded as run/handoff). */
  handoff?: { agent: string; reason?: string }
  /**
   * The call is not over: it waits on a condition outside the run (`on`, owned through the `waits`
   * service: services/waits.ts), in `status`. No outcome is recorded; the run pauses in that status with
   * `waiting.on` (`reason` says what it waits on: "child run X (agent Y), which is ..."), and once the
   * owner says the condition has ended the call runs again (so the tool must be idempotent). The owner
   * must confirm the condition as this call's own and still going, else the call failed (`tool_failed`).
   * `child: { runId, agent, actionId? }` (issue 17) is the same as `on: { kind: 'child', ... }`.
   */
  waitsFor?: { on: WaitCondition; status: WaitingStatus; reason: string } | { child: WaitingChild; status: WaitingStatus; reason: string }
}

export interface Footprint {
  reads?: string[]
  writes?: string[]
}

/** What the model sees of a tool. */
export interface ToolView {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

/** What a tool's reconcile found out about an effect whose outcome was not recorded. */
export type Reconciled =
  | { committed: true; receipt?: unknown; output?: unknown }
  | { committed: false }
  /** Cannot tell: a person has to settle it. */
  | undefined

export interface Tool extends ToolView, ToolContract {
  /** Runtime check of the arguments, run by the kernel before policy sees them. */
  readonly input: ArgSchema
  /** name@version of the plugin that registered the tool; filled in by the registry. */
  owner?: string
  tags?: string[]
  /**
   * The idempotency key for these (validated) arguments, when the tool knows better than the default
   * (`<runId>/<actionId>`): for example `refund:<orderId>`, so two runs refunding one order make one
   * effect. The kernel prefixes it with the tool name.
   */
  idempotencyKey?(args: unknown): string
  /**
   * Ask the system the tool talks to whether the effect under `key` happened, after a call whose outcome
   * was never recorded (the process died, or the call timed out). Contract: read-only; may throw (taken
   * as "cannot tell").
   */
  reconcile?(key: string, signal: AbortSignal): Promise<Reconciled> | Reconciled
  /**
   * What a call with these (validated) arguments reads and writes, as resource names (file paths, row
   * ids, `crm:customer/42`), for running calls of one step side by side. Two calls may overlap in
   * time unless one writes something the other reads or writes (equal names, or one a `/`-prefix of
   * the other). Without it, a read-only tool is taken to read everything (it runs beside other reads
   * but not beside writes), and a tool with side effects runs alone.
   */
  footprint?(args: unknown): Footprint
  /**
   * What a call with these (validated) arguments would do, without doing it: the record it would write,
   * a diff, an amount. Contract: no side effects, no ticket; may throw (recorded as a failed preview).
   * The previews plugin runs it before a person is asked to approve the call, and instead of the call
   * when the model asks for a dry run (`dry_run: true`); a tool without it says so in the request.
   */
  preview?(args: unknown, io: PreviewIO): Promise<Preview> | Preview
  /** The constraints this tool holds when a policy attaches them (`io.constraints`); default none. */
  enforces?: readonly ConstraintName[]
  /**
   * What one call may cost the run at most (a subagent's budget, a paid API), reserved from the run's
   * budgets before the call starts and settled after. Default: nothing to reserve.
   */
  cost?: { tokens?: number; costUsd?: number }
  /** A raw result whose JSON is larger than this many bytes is stored as an artifact, not in the event (default: the agent's). */
  artifactAboveBytes?: number
  /**
   * Run the tool.
   *
   * Contract: refuses (throws CordageError `ticket_*`) unless `ticket` is a valid, unused ticket for
   * exactly this run, action, tool and arguments. Rejections from the tool body are CordageErrors coded
   * `tool_failed` (feed back to the model), `tool_unavailable` (transient, nothing was sent),
   * `tool_connection_lost` (transient, the effect may have happened) or anything else (treated as
   * `tool_failed`). Must stop promptly when `io.signal` aborts.
   */
  invoke(ticket: Ticket | undefined, args: unknown, io: ToolIO): Promise<ToolResult>
}

export interface VisibleInput {
  state: Readonly<RunState>
}

export interface ToolsService {
  /**
   * Add a tool to the registry for as long as the calling plugin is loaded.
   * Contract: throws if a tool of that name is already registered. Returns a function that removes it.
   */
  register(tool: Tool): () => void
  /** A registered tool by name. */
  get(name: string): Tool | undefined
  /** Every registered tool. */
  list(): Tool[]
  /**
   * The tools the model may call in the next step, a subset of the registry.
   * Contract: synchronous or async, side-effect free; a tool not in this set is `unknown_tool` for the step.
   */
  visible(input: VisibleInput): Tool[] | Promise<Tool[]>
}

declare module 'cordis' {
  interface Context {
    tools: ToolsService
  }
}

/**
 * What {@link defineTool} (core/kernel/tool.ts) builds a tool from: the tool's contract, its schema and
 * its body. The definition is checked before the tool exists (core/contracts/checks/tool.ts).
 */
export interface ToolDefinition<A> {
  /** Letters, digits, `_` and `-`, starting with a letter, at most 64 characters (what providers accept). */
  name: string
  description: string
  /** zod schema (or anything with `safeParse`) for the arguments. */
  input: ArgSchema<A> & { toJSONSchema?(): Record<string, unknown> }
  /** JSON Schema shown to the model; derived from `input` when it is a zod 4 schema. */
  inputSchema?: Record<string, unknown>
  sideEffect: SideEffect
  idempotent?: boolean
  timeoutMs?: number
  needsApproval?: boolean
  retries?: number
  tags?: string[]
  /** A result whose JSON is larger than this many bytes is stored as an artifact (default: the agent's). */
  artifactAboveBytes?: number
  /**
   * The tool body. Receives validated arguments. Throw CordageError `tool_failed` with a message the
   * model can act on for bad input, `tool_unavailable` when what it calls is down.
   */
  run(args: A, io: ToolIO): Promise<ToolResult> | ToolResult
  /** Derive the idempotency key from the arguments (see Tool.idempotencyKey). */
  idempotencyKey?(args: A): string
  /** Find out whether an unrecorded effect happened (see Tool.reconcile). */
  reconcile?: Tool['reconcile']
  /** What a call reads and writes, so calls of one step can run side by side (see Tool.footprint). */
  footprint?(args: A): Footprint
  /** What a call would do, without doing it (see Tool.preview); gets the arguments as the schema parsed them. */
  preview?(args: A, io: PreviewIO): Promise<Preview> | Preview
  /** The constraints of a constrained allow this tool holds, from `io.constraints` (see Tool.enforces). */
  enforces?: readonly ConstraintName[]
  /** What one call may cost the run at most, reserved before it starts (see Tool.cost). */
  cost?: { tokens?: number; costUsd?: number }
}

/** What the model sees of a tool, and nothing more. */
export function toView(tool: ToolView): ToolView {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema }
}
