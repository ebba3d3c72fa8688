import { grantMismatch, type ApprovalGrant, type ApprovalGrantQuery } from 'cordage'

/** What the decision on an `ask` says of the call (the `tool/after-decide` value). */
export interface AskedCall {
  tool: string
  args: unknown
  argsHash: string
  policyVersion: string
  toolVersion?: string
  approvers?: string[]
}

/**
 * The grant that covers an asked call: one given for the rest of this run first, else a standing one
 * the store keeps; undefined when none does. It must be active, for this agent, tool and arguments,
 * under this policy and tool version, and given by someone the decision lets approve the call.
 */
export async function coveringGrant(
  call: AskedCall,
  agent: string,
  inRun: readonly ApprovalGrant[],
  standing: ((query: ApprovalGrantQuery) => Promise<ApprovalGrant[]>) | undefined,
  now = Date.now(),
): Promise<ApprovalGrant | undefined> {
  const fits = (grant: ApprovalGrant) => grantMismatch(grant, { ...call, agent }, now) === undefined
  return inRun.find(fits) ?? (standing ? (await standing({ agent, tool: call.tool, now })).find(fits) : undefined)
}
