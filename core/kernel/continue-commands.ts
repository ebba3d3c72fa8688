/**
 * @module continue-commands
 * The runtime's commands that continue a run (core/kernel/agent.ts): resume (a waiting or suspended
 * run, or one whose worker died), settling an unknown effect by hand (core/kernel/reconcile.ts), and
 * taking a run another agent handed over. Each holds the run's lease, checks drift before it records
 * anything that continues the run, and drives it on.
 */
import { CordageError } from '../contracts/errors.ts'
import type { ResumeBudgets } from '../contracts/events.ts'
import type { ToolsService } from '../contracts/services/tools.ts'
import { checkResumeBudgets } from '../kit/budgets.ts'
import { turn } from './command-ids.ts'
import type { ContinueOptions, ReconcileOptions, RunHandle } from '../contracts/commands.ts'
import { readService } from './cordis.ts'
import { goOn, type HeldRuns } from './held-runs.ts'
import { requireMeter } from './meter.ts'
import { reconcilableAction, recordReconciled } from './reconcile.ts'
import { checkResumable } from './resumable.ts'
import { servicesOf } from './run-start.ts'
import { asDefined } from './tool.ts'
import { checkWaitOver } from './waits.ts'

export type ResumeOptions = ContinueOptions & { input?: string; budgets?: ResumeBudgets }

/** Continue a run (see AgentRuntime.resume). */
export async function resumeRun(port: HeldRuns, runId: string, options: ResumeOptions): Promise<RunHandle> {
  const { rt } = port
  // Raised budgets (a run suspended with reservation_refused goes on with more), checked before anything is taken.
  const budgets = checkResumeBudgets(options.budgets)
  if (budgets) requireMeter(rt.name, readService(rt.ctx, 'meter'), budgets)
  return port.take(runId, async ({ driver, state, lease }) => {
    const toolOf = (name: string) => {
      const found = readService<ToolsService>(rt.ctx, 'tools')?.value.get(name)
      return found && asDefined(found)
    }
    // A run whose call waits on a condition goes on only once its owner says it ended (core/kernel/waits.ts).
    await checkWaitOver(rt.ctx, state)
    if (checkResumable(state, options.input, toolOf) === 'take-over') {
      if (budgets)
        throw new CordageError('run_not_waiting', `run ${runId} is ${state.status}: budgets can be set only when resuming a waiting run`)
      return port.takeOver(driver, state, lease, options, 'resume')
    }
    await port.drift(driver, state, options, 'resume')
    const data = { from: state.status as 'WAITING_USER', by: options.by ?? 'api', input: options.input, ...(budgets ? { budgets } : {}) }
    return goOn(driver, 'run/resumed', data, turn(state))
  })
}

/** Settle an unknown effect, then (by default) continue the run (see AgentRuntime.reconcile). */
export async function reconcileRun(
  port: HeldRuns,
  runId: string,
  actionId: string,
  committed: boolean,
  options: ReconcileOptions,
): Promise<RunHandle> {
  return port.take(runId, async ({ driver, state }) => {
    const action = reconcilableAction(state, actionId)
    // Drift first: a refused command must leave the run as it found it.
    if (options.resume !== false) await port.drift(driver, state, options, 'reconcile')
    await recordReconciled(driver, state, action, committed, options)
    if (options.resume === false) return undefined
    return goOn(driver, 'run/resumed', { from: 'WAITING_RECONCILIATION', by: options.by ?? 'api' }, turn(state))
  })
}

/** Take a run another agent handed to this one and drive it, recording run/handoff (see AgentRuntime.acceptHandoff). */
export async function acceptHandoff(port: HeldRuns, runId: string): Promise<RunHandle> {
  const { rt } = port
  return port.take(runId, async ({ driver, state }) => {
    if (state.status !== 'RUNNING' || state.handoff?.to !== rt.name)
      throw new CordageError('run_not_waiting', `run ${runId} is ${state.status} and was not handed to agent "${rt.name}"`)
    return goOn(
      driver,
      'run/handoff',
      {
        from: state.agent,
        to: rt.name,
        reason: state.handoff.reason,
        plugins: { ...rt.plugins },
        hashes: { ...rt.hashes },
        services: servicesOf(rt.ctx),
      },
      { ...turn(state), causation: state.handoff.seq },
    )
  })
}
