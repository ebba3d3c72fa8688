/**
 * @module services/guardrail
 * The `guardrail` contract (optional service): content checks, kept apart from permission and from
 * verification. Policy answers "may this action happen?"; a verifier answers "is the task done?"; a
 * guardrail answers "is this content safe to pass on?" — a secret in a tool's arguments, a card number
 * in a tool's output, an email address in the final answer. It sees content at three stages:
 *
 * - `tool_input`: a call's validated arguments, before policy. A block closes the action with
 *   `guardrail_blocked` (the model is told, nothing runs).
 * - `tool_output`: every text a tool produced, before anything records it or the model sees it: its
 *   result (the whole of it) and its own observation, its error message and stack, its preview
 *   (recorded with an approval request, or a dry run's output) and a failed preview's message, each
 *   asked on its own. A redact replaces the text; a block replaces it with a notice. The kernel
 *   records what the guardrail let through and marks it (`redacted: { guard }` on tool/end, tool/error,
 *   tool/reconciled or the preview; the raw result only as an audit-only artifact when the preset keeps
 *   it, docs/concepts/artifacts.md), and the call's effect stands: it already happened.
 * - `answer`: the final answer, before the verifier. A redact replaces the answer that is verified and
 *   returned; a block sends the model feedback to answer again without it (a repair).
 *
 * Every trip is recorded as `guard/tripped` with the stage, the guard's name, what it did and why.
 */
import type { Tool } from './tools.ts'
import type { GuardStage } from '../data.ts'
import type { RunState } from '../state.ts'
export type { GuardStage } from '../data.ts'

export const GuardrailContract = '1.0.0'

export type GuardVerdict =
  | { action: 'pass' }
  /** Stop the content: the action does not run (input), the model gets a notice (output), or must answer again (answer). */
  | { action: 'block'; guard: string; reason: string }
  /** Pass a cleaned version on. Only for text stages (`tool_output`, `answer`). */
  | { action: 'redact'; guard: string; reason: string; text: string }

export interface GuardInput {
  stage: GuardStage
  runId: string
  agent: string
  state: Readonly<RunState>
  /** The tool, for the tool stages. */
  tool?: Readonly<Tool>
  /** The validated arguments, at `tool_input`. */
  args?: unknown
  /** The text to check: one text a tool produced (`tool_output`, see above) or the answer (`answer`). */
  text?: string
}

export interface GuardrailService {
  /** name@version plus a hash of the patterns: recorded with every trip. */
  readonly version: string
  /**
   * Check content at one stage.
   *
   * Contract: no side effects, deterministic for the same input and version. A throw, or a verdict
   * that is not one of the three, is a block (fail closed). A redact at `tool_input` is a block: the
   * kernel does not run a call with arguments other than those the model proposed and policy judged.
   */
  check(input: GuardInput): GuardVerdict | Promise<GuardVerdict>
}

declare module 'cordis' {
  interface Context {
    guardrail: GuardrailService
  }
}
