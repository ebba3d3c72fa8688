/**
 * @module grants
 * Approvals that reach beyond one call. A person approving an action may approve it once (the default:
 * that exact call), for the rest of the run, or as a standing grant that holds across runs until it
 * expires or is revoked. A grant names the tool and which arguments it covers, and is bound to the
 * policy version and the tool version it was given under: when either changes, it no longer applies
 * and the policy asks again. The grants plugin finds the grant that covers an `ask` with
 * {@link grantMismatch}, the kernel checks the grant it names with it again, and stores filter with
 * {@link matchesQuery}.
 */
import { randomBytes } from 'node:crypto'
import { CordageError } from '../contracts/errors.ts'
import type { ApprovalGrant, ApprovalGrantQuery, ArgsPattern, GrantArgs } from '../contracts/data.ts'
import type { ActionState } from '../contracts/state.ts'
import { checkArgsPattern, compileArgs } from './match.ts'
export type { ApprovalScope, GrantArgs, ApprovalGrant, ApprovalGrantQuery } from '../contracts/data.ts'

/** A call a grant may cover; `approvers`: those the decision that asked lets approve it (unset: anyone). */
export interface GrantedCall {
  agent: string
  tool: string
  args: unknown
  argsHash: string
  policyVersion: string
  toolVersion?: string
  approvers?: readonly string[]
}

/** Why a grant does not cover this call now, or undefined when it does. */
export function grantMismatch(grant: ApprovalGrant, call: GrantedCall, now: number): string | undefined {
  if (grant.revokedAt !== undefined) return 'revoked'
  if (grant.expiresAt !== undefined && now >= grant.expiresAt) return 'expired'
  if (grant.agent !== call.agent || grant.tool !== call.tool) return 'another agent or tool'
  // A grant stands in for its giver's approval: it holds only where they could approve the call themselves.
  if (call.approvers && !call.approvers.includes('*') && !call.approvers.includes(grant.by))
    return `given by ${grant.by}, whom the decision does not name (${call.approvers.join(', ')})`
  if (grant.policyVersion !== call.policyVersion) return `given under policy ${grant.policyVersion}, now ${call.policyVersion}`
  if (grant.toolVersion && call.toolVersion && grant.toolVersion !== call.toolVersion)
    return `given for ${grant.toolVersion}, now ${call.toolVersion}`
  if (grant.args === 'any') return undefined
  if (typeof grant.args !== 'object' || grant.args === null) return 'its arguments are not recorded in a known form'
  if ('hash' in grant.args) return grant.args.hash === call.argsHash ? undefined : 'other arguments'
  if (!('pattern' in grant.args)) return 'its arguments are not recorded in a known form'
  // A stored pattern that no longer compiles (written by hand, or by an older version) covers nothing.
  let test: (args: unknown) => boolean
  try {
    test = compileArgs(grant.args.pattern)
  } catch (error) {
    return `its argument pattern is not valid: ${(error as Error).message}`
  }
  return test(call.args) ? undefined : 'arguments outside its pattern'
}

/** Active means not revoked and not expired (policy and tool versions are checked per call). */
export function isActive(grant: ApprovalGrant, now: number): boolean {
  return grant.revokedAt === undefined && (grant.expiresAt === undefined || now < grant.expiresAt)
}

/** Whether a stored grant answers a query (a store may filter in SQL first, then with this). */
export function matchesQuery(grant: ApprovalGrant, query: ApprovalGrantQuery): boolean {
  if (query.agent !== undefined && grant.agent !== query.agent) return false
  if (query.tool !== undefined && grant.tool !== query.tool) return false
  return query.inactive || isActive(grant, query.now ?? Date.now())
}

/** What a wider approval covers (`ApprovalOptions` of `AgentRuntime.approve`). */
export interface GrantOptions {
  args?: ArgsPattern | 'any'
  expiresInMs?: number
  reason?: string
}

/**
 * The grant an approval with a wider scope creates: for this tool, these arguments, this policy and
 * tool version; refused (`invalid_input`) when its options would cover more than the approver said.
 * Only the kernel's approve command gives one any force: it records it, and stores a standing one.
 */
export function newGrant(
  agent: string,
  runId: string,
  action: Pick<ActionState, 'id' | 'tool' | 'argsHash' | 'decision'>,
  scope: 'run' | 'grant',
  by: string,
  options: GrantOptions,
): ApprovalGrant {
  const decision = action.decision
  if (!decision) throw new CordageError('invalid_input', `action ${action.id} has no decision on record: there is nothing to approve`)
  if (options.args && options.args !== 'any') {
    if (typeof options.args === 'object' && Object.keys(options.args).length === 0) {
      throw new CordageError(
        'invalid_input',
        `the approval's argument pattern is empty, which would cover any arguments; say so with --any-args (args: 'any'), or name the arguments it covers`,
      )
    }
    const problem = checkArgsPattern(options.args)
    if (problem) throw new CordageError('invalid_input', `the approval's argument pattern: ${problem}`)
  }
  if (options.expiresInMs !== undefined && !(options.expiresInMs > 0))
    throw new CordageError('invalid_input', `expiresInMs must be a positive number of milliseconds, got ${options.expiresInMs}`)
  const args: GrantArgs =
    options.args === 'any' ? 'any' : options.args ? { pattern: options.args } : scope === 'run' ? 'any' : { hash: action.argsHash }
  const now = Date.now()
  return {
    id: `gr_${now.toString(36)}_${randomBytes(4).toString('hex')}`,
    scope,
    agent,
    tool: action.tool,
    args,
    policyVersion: decision.policyVersion,
    toolVersion: decision.toolVersion,
    by,
    reason: options.reason,
    createdAt: now,
    expiresAt: options.expiresInMs !== undefined ? now + options.expiresInMs : undefined,
    source: { runId, actionId: action.id },
  }
}
