/**
 * @module tool-texts
 * The one gate every text a tool produces passes before it is recorded: its result and its own
 * observation, its error message (and the stack that repeats it), its preview (recorded with an
 * approval request, or a dry run's output) and a failed preview's message. Each is asked of the
 * guardrail at `tool_output` here, by {@link screenToolText}, and by nothing else; the recorder then
 * scrubs the run's secrets from what is recorded (core/kernel/recorder.ts). A text the guardrail
 * redacts is recorded redacted, and the event says so (`redacted: { guard }`).
 *
 * Fail closed: a guard that throws or answers nonsense withholds the text (core/kernel/verification.ts,
 * askGuardrail). A run-ending answer (the guard overran, the deadline passed, the run was cancelled)
 * withholds it too: after a call ran, its outcome is still recorded and the run ends at the next
 * boundary; for a preview, where nothing ran, the run ends at once.
 */
import type { Tool } from '../contracts/services/tools.ts'
import type { ActionState } from '../contracts/state.ts'
import type { PreviewOutcome } from '../contracts/data.ts'
import { checkPreview } from '../contracts/checks/preview.ts'
import { isControl } from './control.ts'
import { askGuardrail } from './verification.ts'
import type { Run } from './run.ts'

/** What the guardrail made of one text: `guard` is set when it redacted or withheld it. */
export interface Screened {
  text: string
  guard?: string
  action?: 'redact' | 'block'
}

/**
 * What a text is, which says what a withheld one is replaced by and whether anything ran: a call's
 * `result` (its output or observation), a call's `error` message, or a `preview` (nothing ran).
 */
export type ToolTextKind = 'result' | 'error' | 'preview'

/** The call a text came from, and the seq its guard/tripped follows. */
export interface TextOrigin {
  action: ActionState
  tool: Tool
  causation: number
}

/** One text a tool produced, as the guardrail lets it be recorded: as it is, redacted, or withheld. */
export async function screenToolText(run: Run, from: TextOrigin, text: string, kind: ToolTextKind = 'result'): Promise<Screened> {
  const { action, tool, causation } = from
  if (!run.services.guardrail) return { text }
  let verdict
  try {
    verdict = await askGuardrail(run, { stage: 'tool_output', tool, text }, action.id, causation)
  } catch (error) {
    if (!isControl(error)) throw error
    // Nothing ran: the run ends now, as it does when policy overruns. A call that ran must have its outcome recorded first.
    if (kind === 'preview') throw error
    run.defer(error)
    return { text: withheld(kind, tool.name, `: ${(error as Error).message}`), guard: 'guardrail-deferred', action: 'block' }
  }
  if (verdict.action === 'pass') return { text }
  const { guard } = verdict
  if (verdict.action === 'redact') return { text: verdict.text, guard, action: 'redact' }
  return { text: withheld(kind, tool.name, ` by guardrail ${guard}: ${verdict.reason}`), guard, action: 'block' }
}

/** The notice that stands for a withheld text; `why` follows "was withheld" (` by guardrail G: reason`, or `: what ended the run`). */
export function withheld(kind: ToolTextKind, tool: string, why: string): string {
  if (kind === 'error') return `The error message of ${tool} was withheld${why}.`
  if (kind === 'preview') return `The preview of ${tool} was withheld${why}. Nothing was done.`
  return `The result of ${tool} was withheld${why}. The call itself ran.`
}

/** A JSON value a tool produced, as the guardrail lets it be recorded. */
export interface ScreenedValue {
  /** As it was, redacted (parsed back into the same kind of value when the redacted text still is one), or `{ withheld: true, guard }`. */
  value: unknown
  /** The text the guardrail saw or let through: the value's own text, the redacted text, or the notice. */
  text: string
  guard?: string
  action?: 'redact' | 'block'
}

/**
 * A value a tool produced (a result, a preview), screened as the text it is stored as: a string as it
 * is, anything else as its JSON, so the guardrail sees all of it, not only what an observation shows.
 */
export async function screenToolValue(run: Run, from: TextOrigin, value: unknown, kind: ToolTextKind): Promise<ScreenedValue> {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null')
  const screened = await screenToolText(run, from, text, kind)
  if (!screened.guard) return { value, text }
  const guard = screened.guard
  if (screened.action !== 'redact') return { value: { withheld: true, guard }, text: screened.text, guard, action: 'block' }
  return { value: typeof value === 'string' ? screened.text : parsed(screened.text), text: screened.text, guard, action: 'redact' }
}

/** The redacted JSON as a value again, or the text itself when the redaction left no JSON (a match cut a string open). */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * A preview's outcome as the guardrail lets it be recorded, with an approval request or as a dry run's
 * output: the preview screened as one JSON text, checked again as a preview (checkPreview) and marked
 * `redacted`; a redaction that leaves no preview, or a block, leaves a summary that says it was
 * withheld. A failed preview's message is screened the same way.
 */
export async function screenPreview(run: Run, from: TextOrigin, outcome: PreviewOutcome): Promise<PreviewOutcome> {
  if (outcome.status === 'unavailable') return outcome
  if (outcome.status === 'failed') {
    const screened = await screenToolText(run, from, outcome.message, 'preview')
    return screened.guard ? { ...outcome, message: screened.text, redacted: { guard: screened.guard } } : outcome
  }
  const screened = await screenToolValue(run, from, outcome.preview, 'preview')
  if (!screened.guard) return outcome
  const redacted = { guard: screened.guard }
  const checked = screened.action === 'redact' ? checkPreview(screened.value) : undefined
  if (checked?.ok) return { ...outcome, preview: checked.value, redacted }
  const notice =
    screened.action === 'redact'
      ? `The preview of ${from.tool.name} was redacted by guardrail ${screened.guard} and cannot be shown.`
      : screened.text
  return { ...outcome, preview: { summary: notice.length > 500 ? `${notice.slice(0, 499)}…` : notice }, redacted }
}

/**
 * A failed call's message, and its stack (whose first line repeats the message), as the guardrail
 * lets them be recorded. The message is screened; the stack, with the screened message in place of
 * the message, is screened too (a tool may write a stack of its own), so a match in the message
 * trips once.
 */
export async function screenFailure(
  run: Run,
  from: TextOrigin,
  message: string,
  stack: string | undefined,
): Promise<{ message: string; stack?: string; guard?: string }> {
  const screened = await screenToolText(run, from, message, 'error')
  if (stack === undefined) return { message: screened.text, guard: screened.guard }
  const placed = message && screened.guard ? stack.split(message).join(screened.text) : stack
  const own = await screenToolText(run, from, placed, 'error')
  return { message: screened.text, stack: own.text, guard: guardsOf(screened.guard, own.guard) }
}

/** The guards that redacted or withheld any of a call's texts, each once, in the order met. */
export function guardsOf(...guards: (string | undefined)[]): string | undefined {
  const names = [...new Set(guards.filter((g): g is string => !!g).flatMap((g) => g.split(',')))]
  return names.length ? names.join(',') : undefined
}
