/**
 * @module preview
 * What a side-effecting call would do, asked of the tool's `preview` without doing it (issue 12):
 * before a person is asked to approve the call (the outcome is recorded in tool/approval-requested, so
 * whoever decides, in any process, reads it and nothing runs it again), and instead of the call when
 * the model asks for a dry run (`dry_run: true`). A preview is bounded in time (the tool's timeoutMs,
 * at most {@link PreviewLimitMs}, and the run's deadline) and its answer is checked strictly: a
 * preview that throws, overruns or answers something that is not a Preview is recorded as failed, and
 * a failed preview never approves anything (the person is still asked, and sees that it failed).
 * What it answered is a tool's text: it passes the guardrail before it is recorded ({@link screenedPreview}).
 */
import { CordageError, Codes, type Code } from '../contracts/errors.ts'
import type { PreviewOutcome } from '../contracts/data.ts'
import type { Tool, ToolView } from '../contracts/services/tools.ts'
import type { ActionState, RunState } from '../contracts/state.ts'
import type { EventIds, Recorder } from './recorder.ts'
import { describe } from '../contracts/check.ts'
import { checkPreview, renderPreview } from '../contracts/checks/preview.ts'
import { KernelProducer } from './version.ts'
import { screenPreview, type ScreenPort } from './tool-texts.ts'

export type { Preview, PreviewOutcome } from '../contracts/data.ts'

/** The longest a preview may take, whatever the tool's own time limit. */
export const PreviewLimitMs = 30_000
/** The argument a model adds to ask for a call's preview rather than the call. */
export const DryRunArg = 'dry_run'

/** What running a preview needs of the run. */
export interface PreviewPort {
  readonly runId: string
  readonly state: RunState
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal
}

/** Run `tool`'s preview of a call with these (validated) arguments, bounded in time; never throws but for the run's own end (cancel, deadline). */
export async function runPreview(run: PreviewPort, tool: Tool, args: unknown, actionId: string): Promise<PreviewOutcome> {
  if (typeof tool.preview !== 'function') return { status: 'unavailable' }
  const limit = Math.min(tool.timeoutMs > 0 ? tool.timeoutMs : PreviewLimitMs, PreviewLimitMs)
  const deadline = run.state.deadline
  const byDeadline = deadline !== undefined && deadline - Date.now() < limit
  const ms = Math.max(0, byDeadline ? deadline! - Date.now() : limit)
  const controller = new AbortController()
  const t0 = performance.now()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = byDeadline
        ? new CordageError('deadline_exceeded', `the deadline passed while ${tool.name}'s preview was running`)
        : new CordageError('service_timeout', `${tool.name}'s preview did not answer within ${ms} ms`)
      controller.abort(error)
      reject(error)
    }, ms)
    onAbort = () => {
      controller.abort(run.signal.reason)
      reject(run.signal.reason)
    }
    if (run.signal.aborted) onAbort()
    else run.signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    const io = { runId: run.runId, actionId, signal: controller.signal }
    const answer = await Promise.race([Promise.resolve().then(() => tool.preview!(args, io)), stop])
    const checked = checkPreview(answer)
    if (!checked.ok) return failed('verdict_invalid', `${tool.name}'s preview answered something that is not a preview: ${checked.problem}`)
    return { status: 'ok', preview: checked.value, durationMs: Math.round(performance.now() - t0) }
  } catch (error) {
    // The run ends (cancelled, or past its deadline): that is not the preview's failure.
    if (run.signal.aborted && error === run.signal.reason) throw error
    if (CordageError.is(error, 'deadline_exceeded') && byDeadline) throw error
    if (CordageError.is(error, 'service_timeout')) return failed('service_timeout', error.message)
    return failed('tool_failed', `${tool.name}'s preview failed: ${(error as Error)?.message ?? String(error)}`)
  } finally {
    clearTimeout(timer)
    if (onAbort) run.signal.removeEventListener('abort', onAbort)
    stop.catch(() => {})
  }
}

function failed(code: Code, message: string): PreviewOutcome {
  return { status: 'failed', code, message: message.length > 1000 ? `${message.slice(0, 999)}…` : message }
}

// ── dry runs ─────────────────────────────────────────────────────────────────────────────────────

/** Whether the kernel offers `dry_run` for this tool: it declares a preview and its schema has no `dry_run` of its own. */
export function offersDryRun(tool: Pick<Tool, 'preview' | 'inputSchema'>): boolean {
  return typeof tool.preview === 'function' && !ownsDryRun(tool)
}

function ownsDryRun(tool: Pick<Tool, 'inputSchema'>): boolean {
  const props = (tool.inputSchema as { properties?: unknown } | undefined)?.properties
  return !!props && typeof props === 'object' && Object.hasOwn(props, DryRunArg)
}

/** The view the model is shown: with an optional boolean `dry_run` when the kernel offers it (a copy; the tool is never changed). */
export function dryRunView(tool: Tool, view: ToolView): ToolView {
  if (!offersDryRun(tool)) return view
  const schema = tool.inputSchema as { properties?: Record<string, unknown> }
  return {
    ...view,
    inputSchema: {
      ...schema,
      type: 'object',
      properties: {
        ...(schema.properties ?? {}),
        [DryRunArg]: {
          type: 'boolean',
          description: 'true: do nothing, only show what this call would do (its preview). Allowed like a read.',
        },
      },
    },
  }
}

/**
 * The proposed arguments with a boolean `dry_run` taken out, for a tool the kernel offers it for. Any
 * other `dry_run` (not a boolean, or on a tool without a preview) is left in, and admission refuses it
 * ({@link dryRunProblem}).
 */
export function splitDryRun(args: unknown, tool: Tool | undefined): { args: unknown; dryRun?: true } {
  if (!tool || !offersDryRun(tool) || !isRecord(args) || !Object.hasOwn(args, DryRunArg)) return { args }
  const flag = args[DryRunArg]
  if (typeof flag !== 'boolean') return { args }
  const { [DryRunArg]: _, ...rest } = args
  return flag ? { args: Object.freeze(rest), dryRun: true } : { args: Object.freeze(rest) }
}

/** Why a proposed call's `dry_run` is refused (`invalid_arguments`), or undefined when it has none the kernel must judge. */
export function dryRunProblem(action: ActionState, tool: Tool): string | undefined {
  if (action.dryRun || ownsDryRun(tool) || !isRecord(action.args) || !Object.hasOwn(action.args, DryRunArg)) return undefined
  if (typeof tool.preview !== 'function') return `${tool.name} has no preview, so it cannot be dry-run: call it without dry_run.`
  return `dry_run for ${tool.name} must be true or false, got ${describe(action.args[DryRunArg])}. Call it again with dry_run: true to see what it would do, or without dry_run.`
}

/** The tool as policy sees it in a dry run: a read, that needs no approval of its own. */
export function asRead(tool: Tool): Tool {
  return Object.freeze({ ...tool, sideEffect: 'none', needsApproval: false })
}

/**
 * Run `tool`'s preview (as {@link runPreview}) and pass what it answered through the guardrail, as every
 * text a tool produces (core/kernel/tool-texts.ts): what is recorded, with an approval request or as a
 * dry run's output, is what the guardrail let through, marked `redacted` when it changed anything.
 */
export async function screenedPreview(
  run: PreviewPort & ScreenPort,
  tool: Tool,
  args: unknown,
  action: ActionState,
  causation: number,
): Promise<PreviewOutcome> {
  return screenPreview(run, { action, tool, causation }, await runPreview(run, tool, args, action.id), checkPreview)
}

/** What recording a dry run's outcome needs of the run. */
export interface DryRunPort extends PreviewPort, ScreenPort {
  readonly rec: Recorder
  readonly options: { observationChars: number }
  idsOf(actionId: string | undefined, causation?: number): EventIds
}

/**
 * A dry run policy allowed (or a person approved): the tool's preview runs instead of the tool (no
 * ticket, no ledger, no tool/start), and the call ends with tool/end `dryRun: true`, its output the
 * Preview as the guardrail let it through and its observation rendered from that; or with tool/error
 * (`dryRun: true` too) when the preview failed.
 */
export async function runDryRun(run: DryRunPort, action: ActionState, tool: Tool, args: unknown, causation: number): Promise<'continue'> {
  const outcome = await screenedPreview(run, tool, args, action, causation)
  const ids = run.idsOf(action.id, causation)
  if (outcome.status !== 'ok') {
    const code: Code = outcome.status === 'failed' ? (outcome.code as Code) : 'invalid_arguments'
    const message = outcome.status === 'failed' ? outcome.message : `${tool.name} has no preview`
    const observation = `The dry run of ${tool.name} failed (${code}): ${message}. Nothing was done.`
    const errorClass = Codes[code]?.kind ?? 'tool_deterministic'
    const redacted = outcome.status === 'failed' ? outcome.redacted : undefined
    run.rec.record(
      'tool/error',
      { tool: tool.name, errorClass, code, message, observation, ...(redacted ? { redacted } : {}), dryRun: true },
      KernelProducer,
      ids,
    )
    return 'continue'
  }
  const raw = renderPreview(outcome.preview)
  const max = run.options.observationChars
  const observation = raw.length > max ? `${raw.slice(0, max)}… (${raw.length - max} more characters in the store)` : raw
  run.rec.record(
    'tool/end',
    {
      tool: tool.name,
      attempt: 1,
      output: outcome.preview,
      observation,
      durationMs: outcome.durationMs,
      ...(outcome.redacted ? { redacted: outcome.redacted } : {}),
      dryRun: true,
    },
    tool.owner ?? KernelProducer,
    ids,
  )
  return 'continue'
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────────

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
