/**
 * @module services/policy
 * The `policy` contract: decide allow | ask | deny for one proposed action, with the rule that decided
 * and why. The kernel records the decision before anything else happens to the action and binds the
 * authorization ticket to `version`, so a decision made under one policy never authorizes a call under
 * another.
 */
import type { Tool } from './tools.ts'
import type { Constraints, Verdict } from '../data.ts'
import type { RunState } from '../state.ts'
export type { Verdict } from '../data.ts'

/** 1.2.0: `dryRun` on requests, `constraints` on an allow (issue 12). */
export const PolicyContract = '1.2.0'

export interface PolicyRequest {
  runId: string
  agent: string
  actionId: string
  tool: Readonly<Tool>
  /** Arguments as the tool's schema parsed them (defaults filled in, as the tool will see them). */
  args: unknown
  /** Hash of the arguments as proposed; the ticket and any approval are bound to it. */
  argsHash: string
  state: Readonly<RunState>
  /**
   * The model asked for the call's preview, not the call: nothing will happen but the tool's `preview`.
   * The kernel shows the tool as a read (`sideEffect: 'none'`) in such a request. Since 1.2.0.
   */
  dryRun?: boolean
}

export interface PolicyDecision {
  verdict: Verdict
  /** Id of the rule that matched (`default` when none did). */
  ruleId: string
  /** Why, in words a reviewer understands. */
  reason: string
  /**
   * For `ask`: who may approve (names as given with `--by`; `*` for anyone). Unset: anyone. An empty
   * list means nobody can, and the kernel denies the action rather than wait forever. Since 1.1.0.
   */
  approvers?: string[]
  /**
   * For `allow`: limits the call must keep (a constrained allow). Unknown names or bad values make the
   * decision invalid (denied, fail closed); a tool that cannot hold one is refused with
   * `constraint_unenforceable`. Since 1.2.0.
   */
  constraints?: Constraints
}

export interface PolicyService {
  /**
   * Version of the policy in force: changes whenever the rules change, not only when the plugin does.
   * Tickets and approvals are bound to it.
   */
  readonly version: string
  /**
   * Decide one action.
   *
   * Contract: deterministic for the same request and version; no side effects. A throw is treated as
   * deny (fail closed) and recorded with rule `policy-error`.
   */
  decide(request: PolicyRequest): PolicyDecision | Promise<PolicyDecision>
}

declare module 'cordis' {
  interface Context {
    policy: PolicyService
  }
}
