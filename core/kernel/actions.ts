/**
 * @module actions
 * Settling the step's pending actions: a proposed one is admitted (a visible tool, valid arguments,
 * the guardrail, policy) and then run, put to a person, or closed; one resumed from the log goes on
 * from its recorded status (a decision holds only under the policy and tool version it was made for);
 * and the head of the step that may run side by side runs in waves (core/kernel/parallel.ts), with two
 * calls under one idempotency key never in one wave. Free functions over the run (core/kernel/run.ts).
 */
import { CordageError } from '../contracts/errors.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { ActionState } from '../contracts/state.ts'
import { type Admitted, type AskPerson, askPerson, decidePolicy, previewFor, waitForApproval } from './admission.ts'
import { closeRefused, refuse, reject, type Refused } from './reject.ts'
import { runDryRun } from './preview.ts'
import { asRead, dryRunProblem } from './dry-run.ts'
import { type Authorized, executeWave, type Next } from './effects.ts'
import { keyOf } from './ledger.ts'
import { settleUnknown } from './unknown-effect.ts'
import { footprintOf, mayRunBeside, waves } from './parallel.ts'
import { asDefined } from './tool.ts'
import { askGuardrail, Pass } from './verification.ts'
import { intercepted, veto } from './phases.ts'
import { stop } from './ending.ts'
import { refreshTools } from './step-tools.ts'
import type { Run } from './run.ts'
import { flow, wait, type Flow } from '../kit/later.ts'

export function* actOn(run: Run, action: ActionState): Flow<Next> {
  switch (action.status) {
    case 'proposed':
      return yield* follow(run, action, yield* admit(run, action))
    case 'denied': {
      const { ruleId, reason, seq } = action.decision!
      return reject(run, action, 'policy_denied', `Denied by policy (rule ${ruleId}): ${reason}`, seq)
    }
    case 'rejected': {
      const { by, reason, seq } = action.approval!
      return reject(run, action, 'approval_rejected', `Rejected by ${by}${reason ? `: ${reason}` : ''}`, seq)
    }
    case 'allowed':
    case 'approved':
    case 'running':
      return yield* resumeDecided(run, action)
    case 'awaiting_approval':
      return yield* wait(askAgain(run, action))
    default:
      throw new CordageError('internal_error', `action ${action.id} is ${action.status} but still pending`)
  }
}

/** Resumed: the decision is durable. It still holds only under the policy version it was made with. */
function* resumeDecided(run: Run, action: ActionState): Flow<Next> {
  const tool = yield* installedTool(run, action)
  if (!tool) return reject(run, action, 'unknown_tool', `Tool "${action.tool}" is no longer installed.`)
  // A dry run never reaches the tool: only its preview runs, under a decision that still holds.
  if (action.status === 'running' && !action.dryRun) {
    // The call started and no outcome was recorded: the process stopped while the tool ran.
    const settled = yield* wait(settleUnknown(run, action, tool, keyOf(run.runId, action, tool), 'resume'))
    if (settled === 'settled') return 'continue'
    if (settled !== 'retry') return yield* wait(stop(run, settled))
  }
  // The decision, when it still holds.
  const d = stillHolds(run, action, tool) ? action.decision : undefined
  if (d && !action.dryRun)
    return yield* executeWave(run, [{ action, tool, policyVersion: d.policyVersion, causation: action.approval?.seq ?? d.seq }])
  const parsed = tool.input.safeParse(action.args)
  if (!parsed.success) return reject(run, action, 'invalid_arguments', `The arguments for ${tool.name} no longer match its schema.`)
  if (!action.dryRun) return yield* follow(run, action, yield* decidePolicy(run, action, tool, parsed.data))
  if (d) return yield* wait(runDryRun(run, action, tool, parsed.data, action.approval?.seq ?? d.seq))
  return yield* follow(run, action, yield* admitDryRun(run, action, tool, parsed.data))
}

/** A decision (and an approval) holds only under the policy and the tool version it was made for. */
function stillHolds(run: Run, action: ActionState, tool: Tool): boolean {
  const toolChanged = action.decision?.toolVersion !== undefined && tool.owner !== undefined && action.decision.toolVersion !== tool.owner
  return action.decision?.policyVersion === run.services.policy.value.version && !toolChanged
}

/** Asked, but the request was never put on record (the rest of its step ran first and paused, or the process stopped): put it now. */
async function askAgain(run: Run, action: ActionState): Promise<Next> {
  const d = action.decision
  if (action.requestedSeq !== undefined || !d) return stop(run, waitForApproval(action))
  return stop(run, waitForApproval(action, { ...d, preview: await previewFor(run, action, await flow(installedTool(run, action))) }))
}

/**
 * A freshly proposed action through its stages, each of which may refuse it: validate (a visible tool,
 * plain JSON arguments its schema takes, a `dry_run` it was offered), screen (the guardrail, the
 * `tool/before-decide` handlers), then decide (policy) and approve (core/kernel/admission.ts).
 */
function* admit(run: Run, action: ActionState): Flow<Admitted> {
  yield refreshTools(run)
  const valid = validate(run, action)
  if ('refuse' in valid) return valid
  // Without a guardrail or a tool/before-decide handler there is nothing to screen, nor to wait for.
  if (run.services.guardrail || intercepted(run, 'tool/before-decide')) {
    const refused = yield* wait(screen(run, action, valid.tool, valid.args))
    if (refused) return refused
  }
  if (action.dryRun) return yield* admitDryRun(run, action, valid.tool, valid.args)
  return yield* decidePolicy(run, action, valid.tool, valid.args)
}

/** The proposed call's tool and its arguments as the tool's schema parsed them, or why it cannot be called. */
function validate(run: Run, action: ActionState): Refused | { tool: Tool; args: unknown } {
  const tool = run.visible.byName.get(action.tool)
  if (action.argsError !== undefined)
    return refuse(
      'invalid_arguments',
      `The arguments for ${action.tool} are not valid JSON, or not plain JSON (${action.argsError}). Send them again as a plain JSON object.`,
    )
  if (!tool)
    return refuse(
      'unknown_tool',
      `Unknown tool "${action.tool}". Tools you can call: ${[...run.visible.byName.keys()].join(', ') || 'none'}.`,
    )
  const dryRun = dryRunProblem(action, tool, run.visible.dryRuns.has(tool.name))
  if (dryRun) return refuse('invalid_arguments', dryRun)
  const parsed = tool.input.safeParse(action.args)
  if (parsed.success) return { tool, args: parsed.data }
  const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`).join('; ')
  return refuse('invalid_arguments', `Invalid arguments for ${tool.name}: ${issues}. Fix the arguments and call it again.`)
}

/** The guardrail's look at the arguments, then the tool/before-decide handlers (one that fails refuses too: fail closed). */
async function screen(run: Run, action: ActionState, tool: Tool, args: unknown): Promise<Refused | undefined> {
  const guarded = run.services.guardrail
    ? await askGuardrail(run, { stage: 'tool_input', tool, args }, action.id, action.proposedSeq)
    : Pass
  if (guarded.action !== 'pass')
    return refuse('guardrail_blocked', `Blocked by guardrail ${guarded.guard}: ${guarded.reason}. Nothing was run.`, run.state.lastSeq)
  const vetoed = await veto(run, 'tool/before-decide', [action, tool.name, args, action.dryRun ? { dryRun: true } : {}], 'before policy')
  return vetoed && refuse(vetoed.code, vetoed.observation, run.state.lastSeq)
}

/**
 * A dry run: policy decides it as a read (`dryRun` in the request), and an allow runs the tool's
 * preview here, never the tool. An ask goes to a person like any call (fail closed); approved, the
 * preview runs then (resumeDryRun).
 */
function* admitDryRun(run: Run, action: ActionState, tool: Tool, args: unknown): Flow<Admitted> {
  const admitted = yield* decidePolicy(run, action, asRead(tool), args, true)
  if (!('run' in admitted)) return admitted
  return { next: yield* wait(runDryRun(run, action, tool, args, admitted.run.causation)) }
}

/** What admitting an action came to, acted on: run it, wait for a person, or close it unrun. */
function* follow(run: Run, action: ActionState, admitted: Admitted): Flow<Next> {
  if ('run' in admitted) return yield* executeWave(run, [admitted.run])
  if ('ask' in admitted) return yield* wait(stop(run, yield* wait(askPerson(run, admitted.ask))))
  if ('refuse' in admitted) return closeRefused(run, action, admitted)
  return admitted.next
}

/**
 * The proposed actions at the head of the step that may run side by side (core/kernel/parallel.ts): each
 * is admitted in proposal order (validation, guardrail, policy), then those allowed run in waves.
 * An action that must wait for a person ends the batch; it is put to them once the others ran.
 */
export function* actTogether(run: Run): Flow<Next | undefined> {
  yield refreshTools(run)
  const batch: ActionState[] = []
  for (const id of run.state.pending) {
    const action = run.state.actions[id]
    const tool = run.visible.byName.get(action.tool)
    if (action.status !== 'proposed' || (tool && !mayRunBeside(tool))) break
    batch.push(action)
  }
  if (batch.length < 2) return undefined
  const jobs: Authorized[] = []
  let asked: AskPerson | undefined
  for (const action of batch) {
    const admitted = yield* admit(run, action)
    if ('run' in admitted) jobs.push(admitted.run)
    else if ('refuse' in admitted) closeRefused(run, action, admitted)
    else if ('ask' in admitted) {
      asked = admitted.ask
      break
    } else if (admitted.next === 'halt') return 'halt'
  }
  run.reloaded = false
  // Two calls under one idempotency key never share a wave: the ledger must see the first before the second.
  const footprint = (job: Authorized) => {
    const print = footprintOf(job.tool, job.action.args)
    return job.tool.sideEffect === 'none'
      ? print
      : { reads: print.reads, writes: [...print.writes, `key:${keyOf(run.runId, job.action, job.tool)}`] }
  }
  for (const wave of waves(jobs, footprint)) {
    // Cancelled, or state rebuilt after a lost key race: back to pass(), which starts from what is on record.
    if (run.cancelRequest || run.reloaded) return 'continue'
    if ((yield* executeWave(run, wave)) === 'halt') return 'halt'
  }
  return asked && !run.cancelRequest ? yield* wait(stop(run, yield* wait(askPerson(run, asked)))) : 'continue'
}

function* installedTool(run: Run, action: ActionState): Flow<Tool | undefined> {
  yield refreshTools(run)
  const tool = run.visible.byName.get(action.tool) ?? run.services.tools.value.get(action.tool)
  return tool && asDefined(tool)
}
