/**
 * @module artifacts
 * A tool's raw result, the observation the model sees, and the artifact people keep are three things
 * (docs/concepts/artifacts.md):
 *
 * - A result whose JSON is larger than the tool's threshold (`Tool.artifactAboveBytes`, else the
 *   agent's `artifactAboveBytes`) is stored as a content-addressed artifact BEFORE `tool/end` is
 *   appended; `tool/end` carries its {@link ArtifactRef} and no `output`, the ledger keeps the reference,
 *   and the model sees a bounded projection: the head of the content and a line naming the ref and how
 *   to read on (`read_artifact`). A crash between the two leaves at most a blob no event names.
 * - A result the guardrail redacted (or withheld) at `tool_output` is stored in its redacted form: the
 *   event, the ledger and a large result's artifact hold what the guardrail let through (it sees the
 *   whole result, core/kernel/tool-texts.ts), `tool/end.redacted` names the guard, and the raw result
 *   is kept only as an audit-only artifact when the preset says so (`audit.keepRedacted`).
 * - Secrets (the recorder's scrubber) are scrubbed before anything is stored, artifacts included.
 *
 * A store without artifacts keeps today's behaviour (the output inline in the event): losing the data
 * would be worse than a large event. The driver notes it once.
 */
import { Buffer } from 'node:buffer'
import type { ArtifactRef } from '../contracts/data.ts'
import type { Tool, ToolResult } from '../contracts/services/tools.ts'
import type { ActionState } from './state.ts'
import { guardsOf, screenToolValue, type ScreenPort } from './tool-texts.ts'

export type { Screened } from './tool-texts.ts'

/** The key under which a ledger outcome holds an artifact's reference instead of the bytes. */
export const LedgerArtifactKey = 'cordage:artifact'

/** Default threshold (bytes of the result's JSON) above which a result becomes an artifact: 256 KiB. */
export const DefaultArtifactAboveBytes = 256 * 1024

/** What shaping a result needs of the run. */
export interface ArtifactPort extends ScreenPort {
  readonly options: { observationChars: number; artifactAboveBytes: number; keepRedacted: boolean }
  /** The run's secrets scrubbed out of a value (the recorder's). */
  scrub<T>(value: T): T
  /** True when the agent's store keeps artifacts; otherwise the driver notes `why` once. */
  artifactsKept(why: string): boolean
  /** Store a blob for this run and action (the kernel's writer). */
  putArtifact(artifact: { actionId: string; bytes: Uint8Array; mediaType: string; visibility: 'ui' | 'audit' }): Promise<ArtifactRef>
}

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

/** The threshold for one tool: its own when it declares a positive integer, else the agent's. */
export function thresholdOf(tool: Tool, agentDefault: number): number {
  const own = tool.artifactAboveBytes
  return typeof own === 'number' && Number.isSafeInteger(own) && own > 0 ? own : agentDefault
}

/** A result as stored bytes: a string as UTF-8 text, anything else as JSON. */
export function contentOf(output: unknown): { text: string; mediaType: string } {
  return typeof output === 'string'
    ? { text: output, mediaType: 'text/plain; charset=utf-8' }
    : { text: JSON.stringify(output) ?? 'null', mediaType: 'application/json' }
}

/** At most `max` characters from the start of `text`, never ending inside a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}

/**
 * Shape a finished call's result into what is recorded: the output or an artifact, the observation the
 * model sees, and the redaction. The whole result passes the guardrail (core/kernel/tool-texts.ts), not
 * only the part its observation shows, and so does the tool's own observation when it gives one: the
 * event, the ledger and the artifact hold what the guardrail let through. `suffix` is appended to the
 * observation (a refused handoff; it names what the tool asked for, so it is screened too). `render`
 * renders an output the tool gave no observation for.
 */
export async function shapeResult(
  run: ArtifactPort,
  call: { action: ActionState; tool: Tool; causation: number },
  result: ToolResult,
  suffix: string,
  render: (output: unknown, max: number) => string,
): Promise<Shaped> {
  const { action, tool } = call
  const output = result.output ?? null
  const chars = run.options.observationChars
  const content = contentOf(output)
  const limit = thresholdOf(tool, run.options.artifactAboveBytes)
  // Bytes are never fewer than UTF-16 units, so a short text is under the limit without counting.
  const large =
    content.text.length * 3 > limit &&
    Buffer.byteLength(content.text) > limit &&
    run.artifactsKept(`a result above ${limit} bytes is kept inline in its event`)
  let stored: { text: string; mediaType: string; bytes: Uint8Array } | undefined
  const bytesOf = () => {
    if (!stored) {
      // Secrets never reach a blob: scrubbed as the recorder scrubs events.
      const scrubbed = contentOf(run.scrub(output))
      stored = { ...scrubbed, bytes: Buffer.from(scrubbed.text, 'utf8') }
    }
    return stored
  }
  const screen = (text: string) => run.screenOutput(action, tool, text, call.causation, 'result')
  const shown = await screenToolValue(run, call, output, 'result', content.text)
  const own = result.observation === undefined ? undefined : await screen(large ? headOf(result.observation, chars) : result.observation)
  const note = suffix ? await screen(suffix) : undefined
  const guard = guardsOf(shown.guard, own?.guard, note?.guard)
  const tail = note?.text ?? ''
  let audit: ArtifactRef | undefined
  if (shown.guard && run.options.keepRedacted && run.artifactsKept('the raw result of a redacted call is not kept for the audit view')) {
    // The raw result, apart and audit-only, when the preset says so; else it is dropped.
    const blob = bytesOf()
    audit = await run.putArtifact({ actionId: action.id, bytes: blob.bytes, mediaType: blob.mediaType, visibility: 'audit' })
  }
  const redacted = guard ? { guard, ...(audit ? { audit } : {}) } : undefined
  if (large && shown.action !== 'block') {
    // Stored whole as the guardrail let it through (it saw all of it), so a redacted result can be read on too.
    const blob = shown.guard ? redactedBlob(run, shown.text, shown.value) : bytesOf()
    const artifact = await run.putArtifact({ actionId: action.id, bytes: blob.bytes, mediaType: blob.mediaType, visibility: 'ui' })
    const head = own === undefined ? headOf(blob.text, chars) : undefined
    const offset = head === undefined ? 0 : Buffer.byteLength(head)
    const observation = `${own?.text ?? head}${tail}\n${referenceLine(artifact, offset, head !== undefined)}`
    return { output: undefined, observation, artifact, ledgerOutput: { [LedgerArtifactKey]: artifact }, redacted }
  }
  // What the guardrail let through is what every reader but the audit view gets: the output redacted, or withheld.
  const seen = own?.text ?? (shown.guard ? render(shown.text, chars) : render(output, chars))
  return { output: shown.value, observation: `${seen}${tail}`, ledgerOutput: shown.value, redacted }
}

/** A redacted result as stored bytes: JSON when the redaction left JSON, else text; scrubbed as the recorder scrubs events. */
function redactedBlob(run: ArtifactPort, text: string, value: unknown): { text: string; mediaType: string; bytes: Uint8Array } {
  const scrubbed = run.scrub(text)
  const mediaType = typeof value === 'string' ? 'text/plain; charset=utf-8' : 'application/json'
  return { text: scrubbed, mediaType, bytes: Buffer.from(scrubbed, 'utf8') }
}

/** The line that tells the model where the rest of a large result is and how to read it. */
export function referenceLine(artifact: ArtifactRef, offset: number, isHead: boolean): string {
  const shown = isHead ? `the first ${offset} bytes are above` : "the tool's summary is above"
  return `[The full result (${artifact.bytes} bytes, ${artifact.mediaType}) is stored as artifact ${artifact.ref}; ${shown}. Read more with read_artifact ${JSON.stringify({ ref: artifact.ref, offset })}.]`
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

/** What listing another run's artifact under this run needs. */
export interface RelistPort {
  store(): { readArtifact?(ref: string): Promise<Uint8Array> }
  putArtifact: ArtifactPort['putArtifact']
}

/**
 * List an artifact another run produced under this run as well (a deduplicated call): stored again by
 * content, so no second blob is kept. A store without artifacts, or a blob gone, leaves the reference
 * as it is: the event still names it, and read_artifact says it is not this run's.
 */
export async function relist(run: RelistPort, action: ActionState, artifact: ArtifactRef): Promise<void> {
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
