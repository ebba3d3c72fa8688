/**
 * @module playground/http-status
 * The HTTP status of every error code, one line each. A code added to core/contracts/errors.ts without
 * a line here fails the typecheck (and test/playground-http-status.test.ts): a code never falls back
 * to a status nobody chose. Run outcomes (budgets, tools, verification) end runs and are never thrown
 * to an API caller; one that is thrown anyway is a bug, so it is a 500.
 */
import type { Code, CordageError } from 'cordage'

export const HttpStatus = {
  // run outcomes: they end runs (run/end, tool/error), they are not answers to a request
  max_steps: 500,
  deadline_exceeded: 500,
  token_budget_exceeded: 500,
  cost_budget_exceeded: 500,
  no_progress: 500,
  reservation_refused: 500,
  model_transient: 500,
  model_permanent: 500,
  model_invalid_response: 500,
  unknown_tool: 500,
  invalid_arguments: 500,
  policy_denied: 500,
  phase_refused: 500,
  approval_rejected: 500,
  constraint_unenforceable: 500,
  tool_timeout: 500,
  tool_unavailable: 500,
  tool_connection_lost: 500,
  tool_failed: 500,
  missing_evidence: 500,
  verification_failed: 500,
  unknown_effect: 500,
  cancelled: 500,
  guardrail_blocked: 500,
  // a replay met a side effect it has no recording or sandbox for: refused, nothing ran (authorization)
  replay_refused: 403,

  // conflicts with what the store holds: asking again as it is will not help
  idempotency_conflict: 409,
  effect_exists: 409,
  reconcile_not_possible: 409,
  run_not_waiting: 409,
  // cancel of a run that had already ended: nothing was recorded
  run_ended: 409,
  // like run_not_waiting: the run waits, but on its child; the message names the child's action
  child_waiting: 409,
  action_not_pending: 409,
  run_busy: 409,
  seq_conflict: 409,
  lease_lost: 409,
  version_drift: 409,
  lock_mismatch: 409,
  watch_failed: 409,

  // who may do what
  ticket_missing: 403,
  ticket_invalid: 403,
  ticket_expired: 403,
  ticket_reused: 403,
  ticket_mismatch: 403,
  approver_not_allowed: 403,
  artifact_forbidden: 403,
  store_write_refused: 403,
  // as the server's own token check answers (server.ts)
  unauthorized: 401,

  // configuration and usage: the request (a version, a config, an argument) is what is wrong
  preset_not_found: 400,
  preset_invalid: 400,
  manifest_invalid: 400,
  plugin_version_unsatisfiable: 400,
  plugin_requirement_missing: 400,
  plugin_requirement_incompatible: 400,
  plugin_conflict: 400,
  plugin_config_invalid: 400,
  plugin_start_failed: 400,
  plugin_load_timeout: 400,
  service_missing: 400,
  invalid_input: 400,

  // what the request names does not exist
  plugin_not_found: 404,
  agent_not_found: 404,
  run_not_found: 404,
  artifact_not_found: 404,
  thread_not_found: 404,

  // threads: the thread as it is takes no next turn (the message says what to do: wait, repair, a new thread)
  thread_busy: 409,
  thread_closed: 409,
  thread_budget_exceeded: 409,
  // The refusal is deliberate (fail closed, nothing recorded) and the thread refuses every next turn
  // until its store is repaired: a state of the thread, like thread_closed, not a crash of the server.
  thread_spending_unknown: 409,
  // The agent's store (or another plugin) lacks the feature: not something the request can change.
  feature_unsupported: 501,

  // the kernel or a plugin failed, or the store is damaged
  illegal_transition: 500,
  store_corrupt: 500,
  service_timeout: 500,
  phase_failed: 500,
  verdict_invalid: 500,
  service_output_invalid: 500,
  invalid_event: 500,
  internal_error: 500,
} as const satisfies Record<Code, number>

/** HTTP status of a Cordage error, from {@link HttpStatus}; 500 only for a code the table lacks (a cast). */
export function statusOf(error: CordageError): number {
  return Object.hasOwn(HttpStatus, error.code) ? HttpStatus[error.code] : 500
}
