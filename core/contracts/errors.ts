/**
 * @module errors
 * One error class and one table of stable codes. The code is the contract: it is what gets thrown,
 * what `run/end` and `tool/error` carry, what docs/reference/errors.md lists and what tests assert. Nobody
 * tells errors apart by reading message text.
 */

/**
 * Error classes from the harness design, each with a default strategy the loop looks up.
 * - feedback: turned into an observation for the model, the run goes on
 * - retry: retried (bounded) when it is safe to do so. After the retries, a model failure fails the run,
 *   a tool timeout fails the run (`tool_timeout`), other tool failures are fed back to the model
 * - stop: the run ends with the code
 * - reconcile: the run waits for someone to settle whether an effect happened
 * - raise: thrown to the caller of a host or kernel API (configuration, usage, conflicts). If a tool
 *   throws one of these inside a run, the run fails with it: it is a bug or a conflict, not an observation
 */
export type ErrorKind =
  | 'model_transient'
  | 'model_permanent'
  | 'model_semantic'
  | 'policy_denied'
  | 'tool_transient'
  | 'tool_deterministic'
  | 'verification_failure'
  | 'budget_exhausted'
  | 'unknown_effect'
  | 'cancelled'
  | 'environment_drift'
  | 'authorization'
  | 'config'
  | 'usage'
  | 'conflict'
  | 'internal'

export type Strategy = 'feedback' | 'retry' | 'stop' | 'reconcile' | 'raise'

export const Kinds: Record<ErrorKind, Strategy> = {
  model_transient: 'retry',
  model_permanent: 'stop',
  model_semantic: 'feedback',
  policy_denied: 'feedback',
  tool_transient: 'retry',
  tool_deterministic: 'feedback',
  verification_failure: 'feedback',
  budget_exhausted: 'stop',
  unknown_effect: 'reconcile',
  cancelled: 'stop',
  environment_drift: 'raise',
  authorization: 'raise',
  config: 'raise',
  usage: 'raise',
  conflict: 'raise',
  internal: 'stop',
}
Object.freeze(Kinds)

export const Codes = {
  // budgets and bounds (run ends STOPPED)
  max_steps: { kind: 'budget_exhausted', text: 'the step budget is spent' },
  deadline_exceeded: { kind: 'budget_exhausted', text: 'the run passed its deadline' },
  token_budget_exceeded: { kind: 'budget_exhausted', text: 'the token budget is spent' },
  cost_budget_exceeded: { kind: 'budget_exhausted', text: 'the cost budget is spent' },
  no_progress: { kind: 'budget_exhausted', text: 'the run kept repeating itself or stopped finding anything new' },
  thread_budget_exceeded: { kind: 'budget_exhausted', text: "the thread's budget (turns, tokens or cost over all its turns) is spent" },
  reservation_refused: {
    kind: 'budget_exhausted',
    text: 'the budget a call must reserve before it starts is not available: the run is suspended before the call',
  },

  // model
  model_transient: { kind: 'model_transient', text: 'the model request failed in a way that may pass (rate limit, network, 5xx)' },
  model_permanent: { kind: 'model_permanent', text: 'the model request failed in a way a retry will not fix' },
  model_invalid_response: { kind: 'model_permanent', text: 'the model returned a decision that does not fit the model contract' },
  unknown_tool: { kind: 'model_semantic', text: 'the model called a tool that is not visible to it' },
  invalid_arguments: { kind: 'model_semantic', text: 'the tool arguments do not match the tool input schema' },

  // policy and approvals
  phase_refused: { kind: 'policy_denied', text: 'a handler of a phase refused the action' },
  policy_denied: { kind: 'policy_denied', text: 'policy denied the action' },
  approval_rejected: { kind: 'policy_denied', text: 'a human rejected the action' },
  constraint_unenforceable: {
    kind: 'policy_denied',
    text: 'policy allowed the call only within constraints the tool does not declare it can enforce',
  },

  // tools
  tool_timeout: { kind: 'tool_transient', text: 'the tool did not finish within its time limit' },
  tool_unavailable: { kind: 'tool_transient', text: 'the tool could not reach what it depends on' },
  tool_connection_lost: {
    kind: 'tool_transient',
    text: 'the connection to the tool broke during the call; whether it took effect is unknown',
  },
  tool_failed: { kind: 'tool_deterministic', text: 'the tool rejected its input or could not do what was asked' },

  // verification
  missing_evidence: { kind: 'verification_failure', text: 'the final answer lacks the evidence the completion contract requires' },
  verification_failed: { kind: 'verification_failure', text: 'the verifier rejected the final answer' },

  // effects
  unknown_effect: { kind: 'unknown_effect', text: 'a side effect may or may not have happened' },
  idempotency_conflict: { kind: 'conflict', text: 'the same idempotency key was used with different arguments' },
  effect_exists: { kind: 'conflict', text: 'the ledger already holds this effect for another run or action' },
  reconcile_not_possible: { kind: 'usage', text: 'the action has no unknown effect to settle' },

  // cancellation
  cancelled: { kind: 'cancelled', text: 'the run was cancelled' },

  // authorization of tool execution (invariant 1)
  ticket_missing: { kind: 'authorization', text: 'a tool was invoked without an authorization ticket' },
  ticket_invalid: { kind: 'authorization', text: 'the authorization ticket is forged or damaged' },
  ticket_expired: { kind: 'authorization', text: 'the authorization ticket has expired' },
  ticket_reused: { kind: 'authorization', text: 'the authorization ticket was already used' },
  ticket_mismatch: { kind: 'authorization', text: 'the authorization ticket is for a different run, action, tool or arguments' },
  guardrail_blocked: { kind: 'policy_denied', text: 'a guardrail stopped content it judged unsafe to pass on' },
  approver_not_allowed: { kind: 'authorization', text: 'the policy does not let this person decide the action' },

  // configuration: presets, manifests, plugin config
  preset_not_found: { kind: 'config', text: 'the preset file does not exist' },
  preset_invalid: { kind: 'config', text: 'the preset file is not valid' },
  manifest_invalid: { kind: 'config', text: 'the plugin manifest is not valid' },
  plugin_not_found: { kind: 'config', text: 'no installed plugin has that name' },
  plugin_version_unsatisfiable: { kind: 'config', text: 'no installed version of the plugin satisfies the range' },
  plugin_requirement_missing: { kind: 'config', text: 'no plugin of the agent provides a required service' },
  plugin_requirement_incompatible: { kind: 'config', text: 'the provider of a required service has an incompatible contract version' },
  plugin_conflict: { kind: 'config', text: 'two plugins of one agent provide the same service' },
  plugin_config_invalid: { kind: 'config', text: 'the plugin configuration does not match its schema' },
  plugin_start_failed: { kind: 'config', text: 'the plugin failed while starting' },
  service_missing: { kind: 'config', text: 'a service the kernel needs is not provided' },
  agent_not_found: { kind: 'usage', text: 'the preset has no agent with that name' },
  invalid_input: { kind: 'usage', text: 'an argument to a kernel API or CLI command is not valid' },

  // runs and the store
  run_not_found: { kind: 'usage', text: 'no run with that id in the store' },
  thread_not_found: { kind: 'usage', text: 'no thread with that id in the store' },
  thread_busy: { kind: 'conflict', text: "the thread's previous turn has not ended, or another process added this turn first" },
  thread_closed: { kind: 'usage', text: 'the thread was closed and takes no more turns' },
  thread_spending_unknown: {
    kind: 'internal',
    text: "what the thread's last turn spent (with its child runs) cannot be read: the next turn is refused, not given the thread's budget",
  },
  artifact_not_found: { kind: 'usage', text: 'no artifact with that reference in the store' },
  artifact_forbidden: { kind: 'authorization', text: 'the artifact is not visible to this reader (another run, or audit-only)' },
  feature_unsupported: {
    kind: 'config',
    text: "the agent's store (or another plugin) does not support what was asked (threads, artifacts)",
  },
  run_not_waiting: { kind: 'usage', text: 'the run is not in a state that accepts this command' },
  run_ended: { kind: 'conflict', text: 'the run had ended before the command (a cancel) could act on it' },
  action_not_pending: { kind: 'usage', text: 'the action is not waiting for approval' },
  child_waiting: {
    kind: 'usage',
    text: 'the run waits on something outside it (a child run, or another kind of condition) that has not ended: act on that first',
  },
  run_busy: { kind: 'conflict', text: 'the run is already being driven in this process' },
  seq_conflict: { kind: 'conflict', text: 'another writer appended to the run first' },
  lease_lost: { kind: 'conflict', text: 'another worker owns the run now' },
  version_drift: { kind: 'environment_drift', text: 'the plugins differ from the versions the run started with' },
  lock_mismatch: { kind: 'environment_drift', text: 'the installed plugins or the preset differ from its lock file' },
  watch_failed: {
    kind: 'environment_drift',
    text: 'a folder that hot reload follows can no longer be watched (removed, renamed, or a system limit on watches reached)',
  },
  illegal_transition: { kind: 'internal', text: 'the run cannot move between these statuses' },
  store_corrupt: { kind: 'internal', text: 'the stored record of a run is damaged or was edited after it was written' },
  service_timeout: { kind: 'internal', text: 'a service the loop asked did not answer within its time limit' },
  phase_failed: { kind: 'internal', text: 'a handler of a phase threw, overran or answered something the phase does not take' },
  verdict_invalid: {
    kind: 'internal',
    text: 'a deciding service (policy, guardrail, verifier, progress, compactor) answered something that does not fit its contract',
  },
  service_output_invalid: {
    kind: 'internal',
    text: 'a service that decides nothing (embeddings) answered something that does not fit its contract; its answer is not used',
  },
  plugin_load_timeout: { kind: 'config', text: 'a plugin module did not finish loading within its time limit' },
  unauthorized: { kind: 'authorization', text: 'the request did not carry the secret token this server was started with' },
  store_write_refused: { kind: 'authorization', text: 'a write to the run store did not come from the kernel' },
  replay_refused: {
    kind: 'authorization',
    text: 'an evaluation or replay came to a call with side effects it has no recorded result or declared sandbox for: the call was refused, never run',
  },
  invalid_event: { kind: 'internal', text: 'an event does not fit the event catalogue' },
  internal_error: { kind: 'internal', text: 'a plugin or the kernel failed unexpectedly' },
} as const satisfies Record<string, { kind: ErrorKind; text: string }>
for (const entry of Object.values(Codes)) Object.freeze(entry)
Object.freeze(Codes)

export type Code = keyof typeof Codes

/** Codes that were used once and must never be reused with a different meaning. */
export const RetiredCodes: readonly string[] = Object.freeze([])

export class CordageError extends Error {
  override name = 'CordageError'
  readonly kind: ErrorKind

  /**
   * @param code the stable code; its kind and default text come from {@link Codes}
   * @param detail the facts of this case (which plugin, which field, what was expected and found)
   * @example throw new CordageError('plugin_not_found', 'plugin "polcy-rules" is not installed (did you mean "policy-rules"?)')
   */
  constructor(code: Code, detail?: string, options?: ErrorOptions & { data?: unknown }) {
    const known = Object.hasOwn(Codes, code)
    // An unknown code is a bug in the caller (JavaScript, or a cast); say so loudly rather than crash here
    // or let it pass for an ordinary tool failure.
    super(
      known
        ? (detail ?? Codes[code].text)
        : `unknown error code "${code}": CordageError takes a code from docs/reference/errors.md (a tool's own failures use tool_failed)${detail ? `; the error said: ${detail}` : ''}`,
      options,
    )
    this.code = known ? code : 'internal_error'
    this.kind = Codes[this.code].kind
    if (options?.data !== undefined) this.data = options.data
  }

  readonly code: Code

  /** Structured facts for machines (for example the list of problems in a preset). */
  data?: unknown

  static is(value: unknown, code?: Code): value is CordageError {
    return value instanceof CordageError && (code === undefined || value.code === code)
  }
}
// Kernel tables and classes are sealed: a plugin sharing this module cannot rewrite how errors are
// classified, how statuses move, or what a kernel method does.
Object.freeze(CordageError.prototype)

/** The default strategy for a code, looked up through its kind. */
export function strategyOf(code: Code): Strategy {
  return Kinds[Codes[code].kind]
}

/**
 * The code, kind and message of anything thrown: a CordageError keeps its own, anything else gets
 * `fallback` (for example `tool_failed` for a tool that threw a plain Error).
 */
export function classify(error: unknown, fallback: Code): { code: Code; kind: ErrorKind; message: string } {
  if (CordageError.is(error)) return { code: error.code, kind: error.kind, message: error.message }
  const message = error instanceof Error ? error.message : String(error)
  return { code: fallback, kind: Codes[fallback].kind, message }
}
