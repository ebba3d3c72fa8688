/**
 * @module preview
 * What the kernel enforces about previews and dry runs (issue 12); running a tool's preview and
 * offering `dry_run` to the model are the previews plugin's (plugins/previews), through the phases
 * `tools/before-show` and `tool/preview`. Here: a `dry_run` the tool does not own never reaches the
 * tool (taken out as a dry run when the model was shown one, refused otherwise); policy decides a dry
 * run as a read, knowing it is one; a dry run runs no ticket, no ledger, no `tool/start`, only asks for
 * its preview; and every preview a handler answers is checked strictly, passes the guardrail before it
 * is recorded ({@link screenPreview}), and approves nothing.
 */
import { CordageError, Codes, type Code } from '../contracts/errors.ts'
import type { PreviewOutcome } from '../contracts/data.ts'
import type { PreviewCall } from '../contracts/phases.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { ActionState } from '../contracts/state.ts'
import { checkPreviewOutcome, previewCallProblem, renderPreview } from '../contracts/checks/preview.ts'
import { serial } from './phases.ts'
import type { Run } from './run.ts'
import { KernelProducer } from './version.ts'
import { screenPreview } from './tool-texts.ts'

/**
 * The call's preview as the `tool/preview` handlers answer it, checked strictly and as the guardrail
 * lets it be recorded; undefined when no handler answered. A handler that fails or answers what the
 * phase does not take leaves a failed preview (`phase_failed`), which approves nothing.
 */
export async function askPreview(
  run: Run,
  action: ActionState,
  tool: Tool,
  args: unknown,
  causation: number,
): Promise<PreviewOutcome | undefined> {
  const call: PreviewCall = { actionId: action.id, tool: tool.name, args, argsHash: action.argsHash }
  if (action.dryRun) call.dryRun = true
  let outcome: PreviewOutcome
  try {
    const { preview } = await serial(run, 'tool/preview', call, (v) => previewCallProblem(v, call))
    if (preview === undefined) return undefined
    // The copy the kernel keeps: read once more from what the handler returned, so checked again.
    const checked = checkPreviewOutcome(preview)
    if (!checked.ok) throw new CordageError('phase_failed', `a tool/preview handler answered no preview outcome: ${checked.problem}`)
    outcome = checked.value
  } catch (error) {
    if (!CordageError.is(error, 'phase_failed')) throw error
    outcome = { status: 'failed', code: 'phase_failed', message: error.message.slice(0, 1000) }
  }
  return screenPreview(run, { action, tool, causation }, outcome)
}

/**
 * A dry run policy allowed (or a person approved): its preview is asked for instead of the call (no
 * ticket, no ledger, no tool/start), and the call ends with tool/end `dryRun: true`, its output the
 * Preview as the guardrail let it through and its observation rendered from that; or with tool/error
 * (`dryRun: true` too) when there is no preview or it failed.
 */
export async function runDryRun(run: Run, action: ActionState, tool: Tool, args: unknown, causation: number): Promise<'continue'> {
  const outcome = (await askPreview(run, action, tool, args, causation)) ?? { status: 'unavailable' }
  const ids = run.idsOf(action.id, causation)
  if (outcome.status === 'ok') {
    const { preview: output, durationMs, redacted } = outcome
    const raw = renderPreview(output)
    const max = run.agent.options.observationChars
    const observation = raw.length > max ? `${raw.slice(0, max)}… (${raw.length - max} more characters in the store)` : raw
    const ended = { tool: tool.name, attempt: 1, output, observation, durationMs, ...(redacted ? { redacted } : {}), dryRun: true }
    run.rec.record('tool/end', ended, tool.owner ?? KernelProducer, ids)
    return 'continue'
  }
  const [code, message, redacted] =
    outcome.status === 'failed'
      ? [outcome.code as Code, outcome.message, outcome.redacted]
      : ['invalid_arguments' as const, `${tool.name} has no preview`]
  const observation = `The dry run of ${tool.name} failed (${code}): ${message}. Nothing was done.`
  const errorClass = Codes[code]?.kind ?? 'tool_deterministic'
  const failed = { tool: tool.name, errorClass, code, message, observation, ...(redacted ? { redacted } : {}), dryRun: true }
  run.rec.record('tool/error', failed, KernelProducer, ids)
  return 'continue'
}
