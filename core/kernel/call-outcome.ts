/**
 * @module call-outcome
 * Recording what one tool call came to, and saying what happens next. A result becomes tool/end (its
 * texts through the guardrail, core/kernel/tool-texts.ts; a handoff only to an agent the preset
 * allows) and, for a write, the ledger's `committed` in the same batch. A failure becomes tool/error
 * (its message and stack through the guardrail too): retried when transient and safe to repeat; a
 * write that timed out or lost its connection is an unknown effect, never a failure; a write that
 * failed is `failed` in the ledger. A call cut short by cancellation is cancelled, its effect (for a
 * write) unknown.
 */
import { classify, CordageError, type Code } from '../contracts/errors.ts'
import type { WaitCondition, WaitingStatus } from '../contracts/data.ts'
import type { Waiter } from '../contracts/services/waits.ts'
import type { Tool, ToolResult } from '../contracts/services/tools.ts'
import type { ActionState } from './state.ts'
import { KernelProducer } from './version.ts'
import { claimProblem } from './waits.ts'
import { checkWaitsFor } from '../contracts/checks/waits.ts'
import { resultSlice } from '../kit/slices.ts'
import { recordSlice } from './slices.ts'
import { resultHandoff, resultObject, resultUsage } from '../contracts/checks/tool-result.ts'
import { shapeResult } from './artifacts.ts'
import type { ShapedResult } from '../contracts/phases.ts'
import { jsonProblem } from '../kit/hash.ts'
import { intercepted, serial } from './phases.ts'
import { screenFailure, withheld } from './tool-texts.ts'
import type { Run } from './run.ts'
import { wait, type Flow } from '../kit/later.ts'

/** After a call's outcome is recorded: nothing more, another attempt, or what the run must do next. */
export type Outcome = 'done' | 'retry' | Consequence

/**
 * What the run must do after an outcome, acted on once every outcome of its wave is on record
 * (core/kernel/effects.ts): end FAILED with a code, settle an effect whose outcome is unknown (the call
 * timed out or lost its connection), or wait on a condition outside the run (unless a neighbour's
 * outcome ends the run: then the condition is cancelled instead).
 */
export type Consequence =
  | { kind: 'end'; code: Code; reason: string }
  | { kind: 'unknown'; lost: 'timeout' | 'connection_lost' }
  | { kind: 'wait'; status: WaitingStatus; why: string; on: WaitCondition; waiter: Waiter }

/** One finished call. */
export interface FinishedCall {
  action: ActionState
  tool: Tool
  key: string
  attempt: number
  startedSeq: number
  durationMs: number
}

export function* recordSucceeded(run: Run, c: FinishedCall, answer: ToolResult): Flow<Outcome> {
  const { action, tool, key } = c
  // Not a result at all (undefined, a string): recorded without output, and the run fails at the next boundary, saying why.
  const result = orDefer(run, () => resultObject(answer, tool.name)) ?? { output: null }
  if (result.waitsFor !== undefined) return yield* wait(waitOn(run, c, result.waitsFor))
  // The call ran: what of its result the kernel cannot take is left out of the record, which is still
  // made (a neighbour's committed write stays committed), and the run ends at the next boundary.
  const usage = orDefer(run, () => resultUsage(result.usage, tool.name))
  const slice = orDefer(run, () => resultSlice(result, tool))
  const asked = resultHandoff(result.handoff)
  // A handoff moves the run under another agent's policy: only to agents the preset lets this one
  // hand runs to, whichever tool asks. Another is dropped, and the model is told.
  const handoff = asked && run.agent.options.handoffs.includes(asked.agent) ? asked : undefined
  const refused =
    asked && !handoff
      ? `\n(The handoff to agent "${asked.agent}" was refused: this agent may hand runs to ${run.agent.options.handoffs.length ? run.agent.options.handoffs.join(', ') : 'no agent'}.)`
      : ''
  // Plugins rewrite the result first (tool/before-end); the guardrail screens it, and what a plugin keeps
  // apart (tool/shape-result) is stored before tool/end names it (core/kernel/artifacts.ts).
  const phased = intercepted(run, 'tool/before-end') ? yield* wait(beforeEnd(run, action, tool, result)) : result
  const shaped = yield* wait(shapeResult(run, { action, tool, causation: c.startedSeq }, phased, refused, observe))
  const { observation } = shaped
  const data = {
    tool: tool.name,
    attempt: c.attempt,
    output: shaped.output,
    observation,
    receipt: result.receipt,
    durationMs: c.durationMs,
    usage,
    handoff,
    artifact: shaped.artifact,
    redacted: shaped.redacted,
  }
  const unkept = slice && recordSlice(run, tool.owner as string, slice, run.idsOf(action.id, c.startedSeq))
  if (unkept) run.defer(new CordageError('internal_error', unkept))
  const ended = run.rec.record('tool/end', data, tool.owner ?? KernelProducer, run.idsOf(action.id, c.startedSeq))
  if (tool.sideEffect !== 'none') {
    // Noted even when no cancel is known yet: one asked in another process may be found later (core/kernel/cancel-window.ts).
    run.noteEffect('committed', { actionId: action.id, tool: tool.name, receipt: result.receipt, seq: ended.seq })
    yield* wait(
      run.flush([
        { op: 'outcome', key, status: 'committed', receipt: result.receipt, output: shaped.ledgerOutput, observation, at: Date.now() },
      ]),
    )
  }
  return 'done'
}

function orDefer<T>(run: Run, take: () => T): T | undefined {
  try {
    return take()
  } catch (error) {
    run.defer(error)
    return undefined
  }
}

/**
 * The result as the `tool/before-end` handlers leave it (core/contracts/phases.ts). A handler that fails
 * after the call ran cannot unrun it: the outcome is still recorded, with the result withheld, and the
 * run ends at the next boundary (fail closed).
 */
async function beforeEnd(run: Run, action: ActionState, tool: Tool, result: ToolResult): Promise<ToolResult> {
  const value: ShapedResult = {
    actionId: action.id,
    tool: tool.name,
    output: result.output ?? null,
    observation: result.observation ?? observe(result.output ?? null, run.agent.options.observationChars),
  }
  try {
    const shaped = await serial(run, 'tool/before-end', value, (v) => shapedProblem(v, value))
    return shaped === value ? result : { ...result, output: shaped.output, observation: shaped.observation }
  } catch (error) {
    run.defer(error)
    return { ...result, output: null, observation: withheld('result', tool.name, `: ${(error as Error).message}`) }
  }
}

function shapedProblem(value: unknown, was: ShapedResult): string | undefined {
  const v = value as Partial<ShapedResult> | null
  if (!v || typeof v !== 'object') return `a tool/before-end handler returns the result ({ output, observation }), got ${typeof value}`
  if (v.actionId !== was.actionId || v.tool !== was.tool) return 'a tool/before-end handler may not change actionId or tool'
  if (typeof v.observation !== 'string') return 'observation must be a string'
  const problem = jsonProblem(v.output)
  return problem ? `output is not plain JSON: ${problem}` : undefined
}

/**
 * Record a call that threw (or timed out, or was cancelled). A write whose effect is unknown comes back
 * as the `unknown` consequence: the wave executor settles it (core/kernel/unknown-effect.ts).
 */
export async function recordFailed(run: Run, c: FinishedCall, error: unknown): Promise<Outcome> {
  const { action, tool, key } = c
  const effectful = tool.sideEffect !== 'none'
  if (run.cancelRequest && (error === run.signal.reason || CordageError.is(error, 'cancelled'))) return recordCancelled(run, c)
  const { code, kind, message } = classify(error, 'tool_failed')
  const willRetry = kind === 'tool_transient' && (!effectful || tool.idempotent) && c.attempt <= tool.retries
  // A side-effecting call that timed out, or whose connection broke, may have landed: its outcome
  // is unknown, not failed.
  const unknown = !willRetry && effectful && (code === 'tool_timeout' || code === 'tool_connection_lost')
  const raw = !CordageError.is(error) && error instanceof Error && error.stack ? error.stack.split('\n').slice(0, 6).join('\n') : undefined
  // A tool's error message is content from outside like its output (it may quote a card it was refused):
  // it passes the guardrail before anything records it, and so does the stack that repeats it.
  const screened = await screenFailure(run, { action, tool, causation: c.startedSeq }, message, raw)
  const observation =
    code === 'tool_timeout'
      ? `${tool.name} did not finish within ${tool.timeoutMs} ms.`
      : `${tool.name} failed (${code}): ${screened.message}`
  const data = {
    tool: tool.name,
    attempt: c.attempt,
    errorClass: kind,
    code,
    message: screened.message,
    observation,
    durationMs: c.durationMs,
    willRetry: willRetry || undefined,
    unknown: unknown || undefined,
    stack: screened.stack,
    redacted: screened.guard ? { guard: screened.guard } : undefined,
  }
  run.rec.record('tool/error', data, tool.owner ?? KernelProducer, run.idsOf(action.id, c.startedSeq))
  if (willRetry) return 'retry'
  if (unknown) return { kind: 'unknown', lost: code === 'tool_timeout' ? 'timeout' : 'connection_lost' }
  if (code === 'tool_timeout')
    return { kind: 'end', code, reason: `${tool.name} (action ${action.id}) did not finish within ${tool.timeoutMs} ms` }
  // The tool reported a failure: for a write, that means it did not take effect.
  if (effectful) await run.flush([{ op: 'outcome', key, status: 'failed', at: Date.now() }])
  if (kind !== 'tool_deterministic' && kind !== 'tool_transient' && kind !== 'model_semantic')
    return { kind: 'end', code, reason: screened.message }
  return 'done'
}

/**
 * The call waits on a condition outside the run (ToolResult.waitsFor; core/kernel/waits.ts): no outcome
 * is recorded (the action stays running, its ledger intent pending), and the run pauses in the status
 * the condition gives, with `waiting.on`. Once the condition has ended the call runs again: only an
 * idempotent tool may ask for this. Anything malformed is the tool's failure, never a pause; so is a
 * condition its owner does not confirm as this call's own and still going.
 */
async function waitOn(run: Run, c: FinishedCall, w: ToolResult['waitsFor']): Promise<Outcome> {
  const { action, tool } = c
  const waiter = { runId: run.runId, actionId: action.id }
  const checked = checkWaitsFor(w)
  const refused = !tool.idempotent
    ? 'only an idempotent tool may wait (it runs again once what it waits on has ended)'
    : !checked.ok
      ? checked.problem
      : await claimProblem(run.agent.ctx, checked.value.on, waiter)
  if (refused || !checked.ok)
    return recordFailed(run, c, new CordageError('tool_failed', `${tool.name} returned an invalid waitsFor: ${refused}`))
  const { on, status, reason } = checked.value
  return { kind: 'wait', status, why: `action ${action.id} (${tool.name}) waits on ${reason}`, on, waiter }
}

/** A call cut short by the run's cancellation. */
function recordCancelled(run: Run, c: FinishedCall): Outcome {
  const { action, tool, key } = c
  const data = {
    tool: tool.name,
    attempt: c.attempt,
    errorClass: 'cancelled' as const,
    code: 'cancelled' as const,
    message: 'cancelled while the tool ran',
    observation: 'The run was cancelled while this tool ran.',
    durationMs: c.durationMs,
  }
  run.rec.record('tool/error', data, tool.owner ?? KernelProducer, run.idsOf(action.id, c.startedSeq))
  // The call did not finish within the grace: whether it took effect is unknown, and stays so in the ledger.
  if (tool.sideEffect !== 'none') run.noteEffect('unknown', { actionId: action.id, tool: tool.name, key })
  return 'done'
}

export function observe(output: unknown, max: number): string {
  const text = typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null')
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters in the store)` : text
}
