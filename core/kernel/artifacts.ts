/**
 * @module artifacts
 * A tool's raw result, the observation the model sees, and the artifact people keep are three things
 * (docs/concepts/artifacts.md). Which result is kept apart as an artifact, and what the model then
 * reads of it, is a plugin's decision at `tool/shape-result` (plugins/artifacts); what stays here is
 * what the kernel alone may do:
 *
 * - The guardrail screens the whole result first (core/kernel/tool-texts.ts), and so does the tool's own
 *   observation: a handler sees, and an artifact holds, only what it let through, secrets scrubbed as the
 *   recorder scrubs events. A handler cannot change that content, only say whether it is kept apart.
 * - Visibility is the kernel's: what a handler keeps apart is `ui`; the raw result is kept only as an
 *   `audit` artifact, only for a result the guardrail redacted, and only the kernel holds it.
 * - The kernel stores each blob with its writer BEFORE `tool/end`, which names it (ref, sha256, size:
 *   verify and scan rely on it) and carries no output; the ledger keeps the reference, so a call
 *   deduplicated later gets it too. A crash between the two leaves at most a blob no event names.
 *
 * Without a handler the result is recorded inline, whatever its size.
 */
import { Buffer } from 'node:buffer'
import type { ArtifactRef } from '../contracts/data.ts'
import type { ResultShape } from '../contracts/phases.ts'
import type { Tool, ToolResult } from '../contracts/services/tools.ts'
import type { ActionState } from './state.ts'
import { intercepted, serial } from './phases.ts'
import { checkResultShape, type ShapeAnswer } from '../contracts/checks/result-shape.ts'
import { guardsOf, screenToolText, screenToolValue, withheld, type ScreenedValue } from './tool-texts.ts'
import type { Run } from './run.ts'

/** The key under which a ledger outcome holds an artifact's reference instead of the bytes. */
export const LedgerArtifactKey = 'cordage:artifact'

/** What tool/end and the ledger record of a result. */
export interface Shaped {
  /** tool/end.output; undefined when the result is an artifact. */
  output: unknown
  observation: string
  artifact?: ArtifactRef
  redacted?: { guard: string; audit?: ArtifactRef }
  /** The ledger outcome's output: the stored form, or `{ 'cordage:artifact': ref }`. */
  ledgerOutput: unknown
}

/**
 * Shape a finished call's result into what is recorded. The whole result passes the guardrail, and so
 * does the tool's own observation; then the `tool/shape-result` handlers say what is kept apart.
 * `suffix` is appended to the observation (a refused handoff; it names what the tool asked for, so it
 * is screened too). `render` renders an output the tool gave no observation for.
 */
export function shapeResult(...args: Parameters<typeof screenAndShape>): Shaped | Promise<Shaped> {
  const [run, , result, suffix, render] = args
  // Nothing to screen and nothing to keep apart: the result as it is, without a promise.
  if (run.services.guardrail || intercepted(run, 'tool/shape-result')) return screenAndShape(...args)
  const output = result.output ?? null
  // An output JSON cannot carry throws here, as screening (or rendering) it does, not later in the store.
  if (result.observation !== undefined) JSON.stringify(output)
  const seen = result.observation ?? render(output, run.agent.options.observationChars)
  return { output, observation: `${seen}${suffix}`, ledgerOutput: output }
}

async function screenAndShape(
  run: Run,
  call: { action: ActionState; tool: Tool; causation: number },
  result: ToolResult,
  suffix: string,
  render: (output: unknown, max: number) => string,
): Promise<Shaped> {
  const { action, tool } = call
  const output = result.output ?? null
  const screen = (text: string) => screenToolText(run, call, text, 'result')
  const shown = await screenToolValue(run, call, output, 'result')
  const own = result.observation === undefined ? undefined : await screen(result.observation)
  const note = suffix ? await screen(suffix) : undefined
  const guard = guardsOf(shown.guard, own?.guard, note?.guard)
  const tail = note?.text ?? ''
  const seen = own?.text ?? render(shown.guard ? shown.text : output, run.agent.options.observationChars)
  const inline = { output: shown.value, observation: `${seen}${tail}`, ledgerOutput: shown.value, redacted: guard ? { guard } : undefined }
  if (!intercepted(run, 'tool/shape-result')) return inline
  const value: ResultShape = {
    actionId: action.id,
    tool: tool.name,
    ...storedForm(run, shown),
    observation: seen,
    ownObservation: own !== undefined,
    ...(tool.artifactAboveBytes !== undefined ? { artifactAboveBytes: tool.artifactAboveBytes } : {}),
    ...(shown.guard ? { redacted: { guard: shown.guard, withheld: shown.action === 'block' } } : {}),
  }
  let answer: ShapeAnswer | undefined
  try {
    const kept = typeof run.store().putArtifact === 'function'
    await serial(run, 'tool/shape-result', value, (v) => {
      const checked = checkResultShape(v, value, kept)
      if (checked.ok) answer = checked.value
      return checked.ok ? undefined : checked.problem
    })
  } catch (error) {
    // After the call ran its outcome is still recorded, its result withheld; the run ends at the next boundary.
    run.defer(error)
    const observation = withheld('result', tool.name, `: ${(error as Error).message}`)
    return { output: null, observation, ledgerOutput: null, redacted: inline.redacted }
  }
  if (!answer) return inline
  // The raw result only the kernel holds: audit-only, and only of a result the guardrail redacted.
  const audit = answer.keepRaw && shown.guard ? await rawCopy(run, action.id, output) : undefined
  const redacted = guard ? { guard, ...(audit ? { audit } : {}) } : undefined
  const observation = `${answer.observation}${tail}`
  if (!answer.mediaType) return { output: shown.value, observation, ledgerOutput: shown.value, redacted }
  const bytes = Buffer.from(value.content, 'utf8')
  const artifact = await run.putArtifact({ actionId: action.id, bytes, mediaType: answer.mediaType, visibility: 'ui' })
  return { output: undefined, observation, artifact, ledgerOutput: { [LedgerArtifactKey]: artifact }, redacted }
}

/** The raw result, secrets scrubbed, as an audit-only artifact. */
function rawCopy(run: Run, actionId: string, output: unknown): Promise<ArtifactRef> {
  const raw = run.rec.scrub(output)
  const text = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? 'null')
  const mediaType = typeof raw === 'string' ? 'text/plain; charset=utf-8' : 'application/json'
  return run.putArtifact({ actionId, bytes: Buffer.from(text, 'utf8'), mediaType, visibility: 'audit' })
}

/** What an artifact of the result would hold: what the guardrail let through, scrubbed as events are. */
function storedForm(run: Run, shown: ScreenedValue): { content: string; json: boolean } {
  const json = typeof shown.value !== 'string'
  if (shown.action === 'redact') return { content: run.rec.scrub(shown.text), json }
  const value = run.rec.scrub(shown.value)
  if (value === shown.value && !shown.guard) return { content: shown.text, json }
  return { content: typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'), json }
}

/** The artifact a ledger outcome refers to, when it holds a reference rather than the bytes. */
export function ledgerArtifact(output: unknown): ArtifactRef | undefined {
  if (!output || typeof output !== 'object' || Array.isArray(output)) return undefined
  const ref = (output as Record<string, unknown>)[LedgerArtifactKey]
  if (!ref || typeof ref !== 'object') return undefined
  const r = ref as ArtifactRef
  return typeof r.ref === 'string' && typeof r.sha256 === 'string' && typeof r.bytes === 'number' && typeof r.mediaType === 'string'
    ? r
    : undefined
}

/**
 * List an artifact another run produced under this run as well (a deduplicated call): stored again by
 * content, so no second blob is kept. A store without artifacts, or a blob gone, leaves the reference
 * as it is: the event still names it, and read_artifact says it is not this run's.
 */
export async function relist(run: Run, action: ActionState, artifact: ArtifactRef): Promise<void> {
  const store = run.store()
  if (typeof store.readArtifact !== 'function') return
  let bytes: Uint8Array
  try {
    bytes = await store.readArtifact(artifact.ref)
  } catch {
    return
  }
  await run.putArtifact({ actionId: action.id, bytes, mediaType: artifact.mediaType, visibility: artifact.visibility ?? 'ui' })
}
