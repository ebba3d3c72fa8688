/**
 * @module grants
 * Approvals that reach beyond one call. A person approving an action may approve it once (the default:
 * that exact call), for the rest of the run, or as a standing grant that holds across runs until it
 * expires or is revoked. A grant names the tool and which arguments it covers, and is bound to the
 * policy version and the tool version it was given under: when either changes, it no longer applies
 * and the policy asks again.
 */
import { compileArgs } from '../kit/match.ts'
import type { ApprovalGrant, ApprovalGrantQuery } from '../contracts/data.ts'
export type { ApprovalScope, GrantArgs, ApprovalGrant, ApprovalGrantQuery } from '../contracts/data.ts'

/** Why a grant does not cover this call now, or undefined when it does. */
export function grantMismatch(
  grant: ApprovalGrant,
  call: { agent: string; tool: string; args: unknown; argsHash: string; policyVersion: string; toolVersion?: string },
  now: number,
): string | undefined {
  if (grant.revokedAt !== undefined) return 'revoked'
  if (grant.expiresAt !== undefined && now >= grant.expiresAt) return 'expired'
  if (grant.agent !== call.agent || grant.tool !== call.tool) return 'another agent or tool'
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
