/**
 * @module approval-commands
 * The runtime's approval commands (core/kernel/agent.ts): approving or rejecting the action a run waits
 * on (bound to its arguments hash and policy version: core/kernel/approval.ts), storing the standing
 * grant a `grant` approval creates, and listing and revoking standing grants.
 */
import { CordageError } from '../contracts/errors.ts'
import type { ApprovalGrant } from '../contracts/data.ts'
import type { PolicyService } from '../contracts/services/policy.ts'
import type { ToolsService } from '../contracts/services/tools.ts'
import { planDecision, recordDecision, underVersions, type Versions } from './approval.ts'
import { turn } from './command-ids.ts'
import type { Actor, ApprovalOptions, RunHandle } from '../contracts/commands.ts'
import { readService, type Context } from './cordis.ts'
import { goOn, type HeldRuns } from './held-runs.ts'
import { guardStore } from './store-writer.ts'
import { asDefined } from './tool.ts'
import { checkAwaited, checkWaitOver } from './waits.ts'

/** Record the decision on the pending action and (by default) continue the run. */
export async function decideApproval(
  port: HeldRuns,
  runId: string,
  actionId: string,
  approved: boolean,
  options: ApprovalOptions,
): Promise<RunHandle> {
  const { rt } = port
  return port.take(runId, async ({ driver, state }) => {
    // A run whose call waits on a condition: the decision is taken where it waits (the owner says where).
    await checkWaitOver(rt.ctx, state)
    const uses = rt.dispatch.handlers('tool/after-decide').length > 0
    const planned = planDecision(rt.name, state, actionId, approved, options, () => !!rt.store().putGrant, uses)
    // A run nobody waits for any more (a child whose parent ended and could not cancel it) is not approved.
    if (approved) await checkAwaited(rt.ctx, state)
    // Drift first: a refused approval must leave the action waiting, so that the same command with
    // --accept-drift (or an onDrift change) can be given again.
    if (options.resume !== false) await port.drift(driver, state, options, approved ? 'approve' : 'reject')
    // Given together with --accept-drift, after the refusal told the approver what changed, the approval
    // holds under the versions now in force (core/kernel/approval.ts). A drift the preset accepts
    // (onDrift) was never shown to the approver: the action is decided, and maybe asked, again.
    const knowing = options.resume !== false && options.acceptDrift === true
    const decision = knowing ? underVersions(planned, versionsOf(rt.ctx, planned.action.tool)) : planned
    const { by, grant } = decision
    recordDecision(driver.rec, state, decision, options.reason)
    // Recorded first: a grant without the approval it came from would be an approval nobody can trace.
    // Stored as recorded: scrubbed of the agent's secrets like every other row.
    if (grant?.scope === 'grant') {
      await driver.flush()
      await guardStore(rt.store()).putGrant!(rt.scrubber.scrub(grant), port.writer!)
    }
    if (options.resume !== false) return goOn(driver, 'run/resumed', { from: 'WAITING_APPROVAL', by }, turn(state))
    await driver.flush()
    return undefined
  })
}

/** The policy version and the owner of tool `name` the agent runs now. */
function versionsOf(ctx: Context, name: string): Partial<Versions> {
  const tool = readService<ToolsService>(ctx, 'tools')?.value.get(name)
  return { policyVersion: readService<PolicyService>(ctx, 'policy')?.value.version, toolVersion: tool && asDefined(tool).owner }
}

/** Revoke a standing grant: from now on the calls it covered are asked about again. */
export async function revokeGrant(port: HeldRuns, id: string, options: Actor): Promise<ApprovalGrant> {
  const store = port.rt.store()
  const { name } = port.rt
  if (!store.revokeGrant) throw new CordageError('invalid_input', `the store of agent "${name}" keeps no standing grants`)
  const grant = await guardStore(store).revokeGrant!(id, options.by ?? 'api', Date.now(), options.reason, port.writer!)
  if (!grant) throw new CordageError('invalid_input', `no grant ${id} in the store of agent "${name}"`)
  return grant
}
