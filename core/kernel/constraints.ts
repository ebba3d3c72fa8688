/**
 * @module constraints
 * Constrained allows (issue 12): a policy may attach limits to an `allow` (core/contracts/data.ts
 * Constraints). They are checked strictly where the decision is (core/contracts/checks/constraints.ts:
 * unknown names or bad values make the decision invalid, denied to fail closed), recorded with it in
 * tool/decision, and the call runs under the RECORDED ones (after an approval or a resume in another
 * process too). A tool must declare in `enforces` each one it is given, except `timeLimitMs`, which the
 * kernel holds itself by shortening the call's time limit; otherwise the call is refused with
 * `constraint_unenforceable` before it starts.
 */
import type { Constraints } from '../contracts/data.ts'
import type { ConstraintName, Tool } from '../contracts/services/tools.ts'
import type { ActionState } from '../contracts/state.ts'
import { refuse, type Refused } from './reject.ts'

/** The call's time limit: the tool's own, shortened by a `timeLimitMs` constraint. */
export function timeLimitOf(tool: Tool, constraints: Constraints | undefined): number {
  const limit = constraints?.timeLimitMs
  return limit !== undefined && limit < tool.timeoutMs ? limit : tool.timeoutMs
}

/**
 * A constrained allow the tool cannot hold: the call is refused before any ticket, ledger intent or
 * tool/start, with `constraint_unenforceable`. Undefined when it may run.
 */
export function unheldConstraints(action: ActionState, tool: Tool): Refused | undefined {
  // `timeLimitMs` the kernel holds itself: every other constraint the tool must declare it enforces.
  const enforces = Array.isArray(tool.enforces) ? tool.enforces : []
  const missing = Object.keys(action.decision?.constraints ?? {}).filter(
    (n) => n !== 'timeLimitMs' && !enforces.includes(n as ConstraintName),
  )
  if (!missing.length) return undefined
  const declared = tool.enforces?.length ? tool.enforces.join(', ') : 'none'
  const named = missing.map((m) => `${m} ${JSON.stringify(action.decision!.constraints![m as 'maxAmount'])}`).join(', ')
  return refuse(
    'constraint_unenforceable',
    `Policy allowed ${tool.name} only within constraints it cannot enforce (${named}; it enforces ${declared}). Nothing was run.`,
    action.decision?.seq,
  )
}
