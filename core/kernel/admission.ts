/**
 * @module admission
 * Whether an action may run: policy is asked (bounded in time), its answer checked strictly (a
 * malformed or failing policy denies, an ask nobody may answer denies), the decision recorded, and then
 * the call runs, waits for a person, or is closed. An ask that a grant covers (named by a
 * `tool/after-decide` handler, checked in core/kernel/grant-claim.ts), or that the approval given with
 * an accepted drift answers, runs without asking again. Free functions over the run.
 */
import type { PolicyDecision } from '../contracts/services/policy.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { ActionState } from '../contracts/state.ts'
import type { PreviewOutcome } from '../contracts/data.ts'
import { isControl } from './control.ts'
import { isThenable } from './bounded.ts'
import type { Authorized, Next } from './effects.ts'
import { claimedGrant } from './grant-claim.ts'
import { approvalUnder } from './approval.ts'
import { checkPolicyDecision } from '../contracts/checks/policy.ts'
import { askPreview } from './preview.ts'
import { KernelProducer } from './version.ts'
import { refuse, type Refused } from './reject.ts'
import type { Run } from './run.ts'
import { wait, type Flow } from '../kit/later.ts'
import type { Stop } from './flow.ts'

/**
 * What admitting an action comes to: run it, ask a person (once the rest of the step ran), close it
 * unrun (refused), or nothing more (a dry run, settled).
 */
export type Admitted = { run: Authorized } | { ask: AskPerson } | Refused | { next: Next }

/** A call policy wants a person to approve, and no grant covers: put to them once the rest of its step ran ({@link askPerson}). */
export interface AskPerson {
  action: ActionState
  tool: Tool
  args: unknown
  decision: PolicyDecision
  policyVersion: string
  decidedSeq: number
  dryRun: boolean
  /** Why no grant covered it, when a `tool/after-decide` handler named one that does not hold. */
  why: string
}

/**
 * Ask policy, record its decision, and say what comes next: run the call, wait for a person, or nothing
 * (denied). `dryRun`: the model asked for the call's preview (core/kernel/preview.ts); `tool` is then
 * shown as a read, and no preview runs before an approval request (running it is what is asked).
 */
export function* decidePolicy(run: Run, action: ActionState, tool: Tool, args: unknown, dryRun = false): Flow<Admitted> {
  const policy = run.services.policy
  const decision = yield* wait(askPolicy(run, action, tool, args, dryRun))
  const policyVersion = policy.value.version
  const ids = run.idsOf(action.id, action.approval?.seq ?? action.proposedSeq)
  const { verdict, ruleId, reason, approvers, constraints } = decision
  const data = { verdict, ruleId, policyVersion, reason, approvers, toolVersion: tool.owner, ...(constraints ? { constraints } : {}) }
  const recorded = run.rec.record('tool/decision', data, policy.provider, ids)
  if (verdict === 'deny') return refuse('policy_denied', `Denied by policy (rule ${ruleId}): ${reason}`, recorded.seq)
  if (verdict === 'ask') return yield* wait(admitAsked(run, action, tool, args, decision, policyVersion, recorded.seq, dryRun))
  return { run: { action, tool, policyVersion, causation: recorded.seq } }
}

/**
 * The policy's decision on a call, checked strictly: a policy that throws or answers something that is
 * not a decision denies (fail closed), and so does an `ask` that names no one who may approve it. A
 * policy that answers at once is judged at once: nothing to wait for.
 */
function askPolicy(run: Run, action: ActionState, tool: Tool, args: unknown, dryRun: boolean): PolicyDecision | Promise<PolicyDecision> {
  const { value, provider } = run.services.policy
  const { runId, view: state } = run
  const request = { runId, agent: run.agent.name, actionId: action.id, tool, args, argsHash: action.argsHash, state }
  try {
    const answer = run.ask('policy', provider, () => value.decide(dryRun ? { ...request, dryRun } : request))
    return isThenable(answer) ? answer.then((later) => judged(provider, later), policyFailed) : judged(provider, answer)
  } catch (error) {
    return policyFailed(error)
  }
}

function judged(provider: string, answer: unknown): PolicyDecision {
  try {
    const checked = checkPolicyDecision(answer)
    if (!checked.ok)
      return {
        verdict: 'deny',
        ruleId: 'policy-invalid',
        reason: `policy ${provider} answered something that is not a decision (verdict_invalid: ${checked.problem}); denied to fail closed`,
      }
    const decision = checked.value
    // An `ask` nobody may answer would wait forever: deny it now, and say why.
    if (decision.verdict !== 'ask' || decision.approvers?.length !== 0) return decision
    const reason = `${decision.reason}; it needs approval and no approver is configured, so it is denied (fail closed)`
    return { verdict: 'deny', ruleId: decision.ruleId, reason }
  } catch (error) {
    return policyFailed(error)
  }
}

/** A policy that threw, or failed to answer in time: denied (fail closed); a control error (cancel, deadline) ends the run instead. */
function policyFailed(error: unknown): PolicyDecision {
  if (isControl(error)) throw error
  return { verdict: 'deny', ruleId: 'policy-error', reason: `policy failed, denied to fail closed: ${(error as Error)?.message ?? error}` }
}

/** A call the policy wants approved: covered by a grant (approved at once, on record), or the run waits for a person. */
async function admitAsked(
  run: Run,
  action: ActionState,
  tool: Tool,
  args: unknown,
  decision: PolicyDecision,
  policyVersion: string,
  decidedSeq: number,
  dryRun: boolean,
): Promise<Admitted> {
  // Decided again after an accepted drift: the approval given with that drift, under these versions, answers it.
  const given = approvalUnder(action, { policyVersion, toolVersion: tool.owner }, decision.approvers)
  if (given) return { run: { action, tool, policyVersion, causation: given.seq } }
  const { ruleId, reason, approvers } = decision
  const call = { actionId: action.id, tool: action.tool, args, argsHash: action.argsHash, ...(dryRun ? { dryRun } : {}) }
  const claim = await claimedGrant(run, { ...call, verdict: 'ask', ruleId, reason, approvers, policyVersion, toolVersion: tool.owner })
  if ('grant' in claim) {
    // A person approved calls like this one before, for the run or standing: no one is asked again.
    const { id, scope } = claim.grant
    const approved = run.rec.record(
      'tool/approval-decided',
      { approved: true, by: `grant:${id}`, scope, grantId: id },
      KernelProducer,
      run.idsOf(action.id, decidedSeq),
    )
    return { run: { action, tool, policyVersion, causation: approved.seq } }
  }
  return { ask: { action, tool, args, decision, policyVersion, decidedSeq, dryRun, why: claim.problem ? `; ${claim.problem}` : '' } }
}

/**
 * Decision → preview (tool/preview handlers) → the pause, as data: the caller acts on it (`stop`), which
 * records the checkpoint, then the request. Whoever decides reads this record and nothing runs it again.
 */
export async function askPerson(
  run: Run,
  { action, tool, args, decision, policyVersion, decidedSeq, dryRun, why }: AskPerson,
): Promise<Stop> {
  const preview = dryRun ? undefined : await askPreview(run, action, tool, args, decidedSeq)
  return waitForApproval(action, { ...decision, policyVersion, toolVersion: tool.owner, preview }, why)
}

/** What an approval request says of the decision that asked for it. */
type Asked = Pick<NonNullable<ActionState['decision']>, 'policyVersion' | 'ruleId' | 'reason' | 'approvers' | 'toolVersion'> & {
  preview?: PreviewOutcome
}

/** The pause for a person's approval of `action`, with the request to put on record (none when it already is: a resumed ask). */
export function waitForApproval(action: ActionState, asked?: Asked, why = ''): Stop {
  const { tool, args, argsHash } = action
  const { policyVersion, ruleId, reason: decided, approvers, toolVersion, preview } = asked ?? ({} as Asked)
  const approval = asked && {
    tool,
    args,
    argsHash,
    policyVersion,
    ruleId,
    reason: decided,
    approvers,
    toolVersion,
    ...(preview ? { preview } : {}),
  }
  const reason = `action ${action.id} (${tool}) waits for approval${asked ? `: ${decided}${why}` : ''}`
  return { pause: 'WAITING_APPROVAL', reason, detail: { actionId: action.id, approval } }
}

/** The preview for an approval request put on record late (core/kernel/actions.ts, a resumed ask): none for a dry run, a tool gone or arguments it no longer takes. */
export async function previewFor(run: Run, action: ActionState, tool: Tool | undefined): Promise<PreviewOutcome | undefined> {
  const parsed = !action.dryRun && tool?.input.safeParse(action.args)
  if (!tool || !parsed || !parsed.success) return undefined
  return askPreview(run, action, tool, parsed.data, action.decision?.seq ?? action.proposedSeq)
}
