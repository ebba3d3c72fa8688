/**
 * @module approval
 * A person's decision on an action that waits for approval: which action may be decided, by whom (the
 * policy's approvers), and the grant a wider approval creates (for the rest of the run, or standing;
 * only a person's approval creates one, and only for an agent with the grants plugin that uses it),
 * checked before anything is recorded, and the event that records it. The command around it (the
 * lease, drift, storing a standing grant) is the runtime's (core/kernel/approval-commands.ts).
 */
import { CordageError } from '../contracts/errors.ts'
import type { ActionState, RunState } from '../contracts/state.ts'
import type { ApprovalGrant, ApprovalScope, RunStatus } from '../contracts/data.ts'
import { newGrant, type GrantOptions } from '../kit/grants.ts'
import { turn } from './command-ids.ts'
import type { Recorder } from './recorder.ts'
import { KernelProducer } from './version.ts'

/** The action `actionId` if the run waits for a decision on it and `by` may give it; else why not. */
export function decidableAction(state: RunState, actionId: string, by: string): ActionState {
  if (state.status !== 'WAITING_APPROVAL') throw notWaiting(state)
  if (state.waiting?.on)
    throw new CordageError(
      'child_waiting',
      `run ${state.runId} waits on something outside it, not on an approval of its own (${state.waiting.reason}); it goes on once that has ended: cordage resume ${state.runId}`,
    )
  const action = state.actions[actionId]
  if (action?.status !== 'awaiting_approval') {
    const waiting = state.waiting?.actionId
    const phrase: Record<string, string> = {
      proposed: 'not decided yet',
      allowed: 'already allowed by policy',
      denied: 'denied by policy',
      approved: 'already approved',
      rejected: 'already rejected',
      running: 'running',
      succeeded: 'done',
      failed: 'failed',
    }
    throw new CordageError(
      'action_not_pending',
      `action ${actionId} of run ${state.runId} ${action ? `is ${phrase[action.status] ?? action.status}` : 'does not exist'}${waiting ? `; the run waits for ${waiting}` : ''}`,
    )
  }
  const approvers = action.decision?.approvers
  if (approvers && !approvers.includes('*') && !approvers.includes(by))
    throw new CordageError(
      'approver_not_allowed',
      `${by} may not decide action ${actionId} of run ${state.runId}: rule ${action.decision!.ruleId} names its approvers: ${approvers.join(', ')}; decide as one of them (--by NAME)`,
    )
  return action
}

export function notWaiting(state: RunState): CordageError {
  const what: Partial<Record<RunStatus, string>> = {
    COMPLETED: 'it has completed',
    FAILED: 'it has failed',
    FAILED_VERIFICATION: 'it failed verification',
    STOPPED: 'it was stopped',
    CANCELLED: 'it was cancelled',
    RUNNING: 'it is running',
  }
  return new CordageError(
    'run_not_waiting',
    `run ${state.runId} is ${state.status}: ${what[state.status] ?? 'it is not waiting for this command'}`,
  )
}

/** A decision on a waiting action, checked and ready to record. */
export interface PlannedDecision {
  action: ActionState
  approved: boolean
  by: string
  scope: ApprovalScope | undefined
  grant: ApprovalGrant | undefined
  /** Given under versions an accepted drift brought, not those of the decision that asked ({@link underVersions}). */
  moved?: Versions
}

/**
 * Check a decision before anything is recorded: the action waits and `by` may decide it; an approval's
 * scope (once by default) and the grant a wider one creates. `usesGrants` says whether anything of the
 * agent uses grants (a `tool/after-decide` handler: the grants plugin), `keepsGrants` whether the
 * store can keep a standing one.
 */
export function planDecision(
  agent: string,
  state: RunState,
  actionId: string,
  approved: boolean,
  options: GrantOptions & { by?: string; scope?: ApprovalScope },
  keepsGrants: () => boolean,
  usesGrants: boolean,
): PlannedDecision {
  const by = options.by ?? 'api'
  const action = decidableAction(state, actionId, by)
  const scope = approved ? (options.scope ?? 'once') : undefined
  // A grant from a dry run's approval would cover the real call: a dry run is approved once, or not at all.
  if (action.dryRun && scope !== undefined && scope !== 'once')
    throw new CordageError('invalid_input', `action ${actionId} is a dry run (only its preview runs): approve it with --scope once`)
  // A grant nothing would ever use is a trap: the approver would believe later calls are covered.
  if ((scope === 'run' || scope === 'grant') && !usesGrants)
    throw new CordageError(
      'feature_unsupported',
      `--scope ${scope} needs the grants plugin, which agent "${agent}" does not have: nothing would use the grant. Add it to the preset (agents.${agent}.plugins: - grants), or approve this call only (--scope once)`,
    )
  const grant = scope === 'run' || scope === 'grant' ? newGrant(agent, state.runId, action, scope, by, options) : undefined
  if (grant?.scope === 'grant' && !keepsGrants())
    throw new CordageError('invalid_input', `the store of agent "${agent}" keeps no standing grants; approve with --scope once or run`)
  return { action, approved, by, scope, grant }
}

/** The policy and tool version in force where a decision is given, and under which an approval holds. */
export interface Versions {
  policyVersion: string
  toolVersion?: string
}

/**
 * The approval of this very action that answers an `ask` decided again under `versions`: it was given
 * under exactly these versions (with the drift that brought them) by someone the new decision lets
 * approve. An approval given before the drift, or by another approver than the new policy names, does
 * not: the run waits for a person again.
 */
export function approvalUnder(action: ActionState, versions: Versions, approvers: string[] | undefined): { seq: number } | undefined {
  const given = action.approval
  if (!given?.approved || given.policyVersion === undefined) return undefined
  if (given.policyVersion !== versions.policyVersion || given.toolVersion !== versions.toolVersion) return undefined
  if (approvers && !approvers.includes('*') && !approvers.includes(given.by)) return undefined
  return given
}

/**
 * A planned decision given by a command that accepted a drift (`acceptDrift`), with `current` the
 * versions now in force. When the drift moved the policy or the tool away from those of the decision
 * that asked, an approval, and the grant it creates, hold under the new versions: the action is then
 * decided again under them, and this approval answers an `ask` there ({@link approvalUnder}): the person
 * approved knowing the versions had changed, so the run goes on once, not after a second approval.
 * Otherwise (not moved, or a rejection) the decision is unchanged and holds under the decision's versions.
 */
export function underVersions(d: PlannedDecision, current: Partial<Versions>): PlannedDecision {
  const was = d.action.decision
  if (!d.approved || !was || current.policyVersion === undefined) return d
  const toolMoved = was.toolVersion !== undefined && current.toolVersion !== undefined && was.toolVersion !== current.toolVersion
  if (was.policyVersion === current.policyVersion && !toolMoved) return d
  const moved = { policyVersion: current.policyVersion, toolVersion: current.toolVersion }
  return { ...d, grant: d.grant && { ...d.grant, ...moved }, moved }
}

/** Record tool/approval-decided for a planned decision. */
export function recordDecision(rec: Recorder, state: RunState, d: PlannedDecision, reason: string | undefined): void {
  const under = d.moved
    ? { policyVersion: d.moved.policyVersion, ...(d.moved.toolVersion ? { toolVersion: d.moved.toolVersion } : {}) }
    : {}
  rec.record(
    'tool/approval-decided',
    { approved: d.approved, by: d.by, reason, scope: d.scope, grant: d.grant, ...under },
    KernelProducer,
    { ...turn(state), stepId: d.action.stepId, actionId: d.action.id, causation: d.action.requestedSeq },
  )
}
