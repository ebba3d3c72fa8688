/**
 * @module verification
 * Deciding "done": the guardrail's look at the answer, then the verifier's verdict, checked strictly and
 * recorded (invariant 2: a run completes only on a verifier's recorded pass). Also the guardrail asked at
 * any stage, which blocks when it fails or answers nonsense (fail closed); what a tool produced is asked
 * through core/kernel/tool-texts.ts. Free functions over the run
 * (core/kernel/run.ts).
 */
import { classify, CordageError } from '../contracts/errors.ts'
import type { GuardInput, GuardVerdict } from '../contracts/services/guardrail.ts'
import type { VerifyResult } from '../contracts/services/verifier.ts'
import { KernelProducer } from './version.ts'
import { checkGuardVerdict } from '../contracts/checks/guardrail.ts'
import { checkVerifyResult } from '../contracts/checks/verifier.ts'
import { isControl } from './control.ts'
import { bail } from './phases.ts'
import type { Stop } from './flow.ts'
import type { Run } from './run.ts'
import type { RunEventMap } from '../contracts/events.ts'

const Cancelled: Stop = Object.freeze({ cancelled: true })

export const Pass: GuardVerdict = { action: 'pass' }
const VerifyStartEvents = ['verify/start'] as const

/** The verdict on a final answer, recorded: how the run stops (completed, failed), or undefined when the model may answer again. */
export async function verifyAnswer(run: Run, answer: string, causation: number): Promise<Stop | undefined> {
  const verifier = run.services.verifier
  const guarded = run.services.guardrail ? await askGuardrail(run, { stage: 'answer', text: answer }, undefined, causation) : Pass
  if (guarded.action === 'redact') answer = guarded.text
  const started = run.rec.record('verify/start', { answer }, KernelProducer, run.idsOf(undefined, causation))
  const end = (data: RunEventMap['verify/end'], by: string) => run.rec.record('verify/end', data, by, run.idsOf(undefined, started.seq))
  if (guarded.action === 'block') {
    // Not the verifier's call: the answer never reaches it. The model may answer again within the repair budget.
    const repair = run.state.repairs < run.state.budgets.maxRepairs
    const feedback = `Your answer was blocked by guardrail ${guarded.guard}: ${guarded.reason}. Answer again without that content.`
    end({ ok: false, code: 'guardrail_blocked', reason: guarded.reason, feedback, repair, evidence: [] }, run.services.guardrail!.provider)
    return repair
      ? undefined
      : { end: 'FAILED_VERIFICATION', code: 'guardrail_blocked', reason: `guardrail ${guarded.guard}: ${guarded.reason}` }
  }
  // A verifier may take minutes (a test suite): let a watcher see it started.
  if (run.agent.dispatch.watched(VerifyStartEvents)) await run.flush()
  let verdict: VerifyResult | RefusedAnswer
  // Who judged: the kernel, for a verify/before-verdict handler's refusal or failure; else the verifier.
  let judge = KernelProducer
  try {
    const refusal = await refusedAnswer(run, answer)
    if (refusal !== undefined) verdict = refusal
    else {
      judge = verifier.provider
      const checked = checkVerifyResult(
        await run.ask('verifier', verifier.provider, () => verifier.value.verify({ state: run.view, answer, signal: run.signal })),
      )
      if (!checked.ok)
        throw new CordageError(
          'verdict_invalid',
          `verifier ${verifier.provider} answered something that is not a verdict: ${checked.problem}`,
        )
      verdict = checked.value
    }
  } catch (error) {
    if (run.cancelRequest) return Cancelled
    const { code, message } = classify(error, 'internal_error')
    const reason = CordageError.is(error) && error.code !== 'internal_error' ? message : `verifier ${verifier.provider} failed: ${message}`
    end({ ok: false, code, reason, evidence: [] }, judge)
    if (isControl(error)) throw error
    return { end: 'FAILED', code, reason }
  }
  // Cancellation wins over a verdict that arrived after it: the run was told to stop.
  if (run.cancelRequest) return Cancelled
  if (verdict.ok) {
    end({ ok: true, evidence: verdict.evidence }, judge)
    return { end: 'COMPLETED', answer }
  }
  const repair = verdict.repairable && run.state.repairs < run.state.budgets.maxRepairs
  end(
    { ok: false, code: verdict.code, reason: verdict.reason, feedback: verdict.feedback, repair, evidence: verdict.evidence ?? [] },
    judge,
  )
  if (repair) return undefined
  return { end: 'FAILED_VERIFICATION', code: verdict.code, reason: verdict.reason, answer }
}

/** A final answer a verify/before-verdict handler refused: a verdict of the kernel's, not the verifier's. */
type RefusedAnswer = { ok: false; code: 'phase_refused'; reason: string; feedback: string; repairable: true; evidence?: undefined }

/**
 * A verify/before-verdict handler's refusal of the answer, as a repairable verdict the verifier never
 * gave; undefined when every handler let it pass (or there is none: then it costs one lookup). A
 * handler that fails throws `phase_failed`, and the run fails with it (fail closed: no verdict).
 */
async function refusedAnswer(run: Run, answer: string): Promise<RefusedAnswer | undefined> {
  const reason = await bail(run, 'verify/before-verdict', { answer })
  if (reason === undefined) return undefined
  const feedback = `Your answer was refused before it was verified: ${reason}. Answer again.`
  return { ok: false, code: 'phase_refused', reason, feedback, repairable: true }
}

/**
 * Ask the guardrail, when the agent has one, about content at one stage, and record a trip. A guard
 * that throws or answers nonsense blocks (fail closed); a redact of arguments is a block, since the
 * call that runs must be the one the model proposed and policy judged.
 */
export async function askGuardrail(
  run: Run,
  input: Pick<GuardInput, 'stage' | 'tool' | 'args' | 'text'>,
  actionId: string | undefined,
  causation: number,
): Promise<GuardVerdict> {
  const guardrail = run.services.guardrail
  if (!guardrail) return Pass
  let verdict: GuardVerdict
  try {
    const checked = checkGuardVerdict(
      await run.ask('guardrail', guardrail.provider, () =>
        guardrail.value.check({ ...input, runId: run.runId, agent: run.agent.name, state: run.view }),
      ),
    )
    verdict = checked.ok
      ? checked.value
      : {
          action: 'block',
          guard: 'guardrail-invalid',
          reason: `guardrail ${guardrail.provider} answered something that is not a verdict (verdict_invalid: ${checked.problem}); blocked to fail closed`,
        }
  } catch (error) {
    if (isControl(error)) throw error
    verdict = {
      action: 'block',
      guard: 'guardrail-error',
      reason: `guardrail ${guardrail.provider} failed, blocked to fail closed: ${(error as Error)?.message ?? error}`,
    }
  }
  if (verdict.action === 'redact' && (input.stage === 'tool_input' || typeof verdict.text !== 'string'))
    verdict = { action: 'block', guard: verdict.guard, reason: verdict.reason }
  if (verdict.action === 'pass') return verdict
  run.rec.record(
    'guard/tripped',
    {
      stage: input.stage,
      guard: String(verdict.guard),
      action: verdict.action,
      reason: String(verdict.reason),
      guardVersion: guardrail.value.version,
    },
    guardrail.provider,
    run.idsOf(actionId, causation),
  )
  return verdict
}
