/**
 * @module grant-claim
 * An `ask` a grant answers. Finding the grant is a plugin's (plugins/grants, on `tool/after-decide`);
 * acting on it is the kernel's, and only once it checked the claim itself: the grant is this run's
 * (`state.grants`, from the approval that gave it) or standing in the store (written only by the
 * kernel, after a person's approval), active, for this agent, tool and arguments, under this policy
 * and tool version, and given by someone the decision lets approve the call. A claim that fails any
 * of these, or a handler that fails, leaves the call to a person (fail closed), told why.
 */
import { CordageError } from '../contracts/errors.ts'
import type { AskedCall } from '../contracts/phases.ts'
import type { ApprovalGrant } from '../contracts/data.ts'
import { grantMismatch } from '../kit/grants.ts'
import { intercepted, serial } from './phases.ts'
import { askedCallProblem } from '../contracts/checks/asked-call.ts'
import type { Run } from './run.ts'

/** The grant checked to cover the call, or why a person is asked after all (nothing: no one claimed a grant). */
export type Claim = { grant: ApprovalGrant } | { problem?: string }

/** The grant a `tool/after-decide` handler names for `call`, checked (the handler sees a copy: what it changes is not checked). */
export async function claimedGrant(run: Run, call: AskedCall): Promise<Claim> {
  if (!intercepted(run, 'tool/after-decide')) return {}
  let id: string | undefined
  try {
    id = (await serial(run, 'tool/after-decide', structuredClone(call), (v) => askedCallProblem(v, call))).grantId
  } catch (error) {
    if (!CordageError.is(error, 'phase_failed')) throw error
    return { problem: `no grant was looked up: ${error.message}` }
  }
  if (id === undefined) return {}
  const now = Date.now()
  const grant =
    run.state.grants.find((g) => g.id === id) ??
    (await run.store().grants?.({ agent: run.agent.name, tool: call.tool, inactive: true }))?.find(
      (g) => g.id === id && g.scope === 'grant',
    )
  const why = grant ? grantMismatch(grant, { ...call, agent: run.agent.name }, now) : `no grant ${id} in this run or in the store`
  return grant && !why ? { grant } : { problem: `grant ${id} named by tool/after-decide does not cover this call: ${why}` }
}
