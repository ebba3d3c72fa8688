/**
 * What becomes an artifact (docs/concepts/artifacts.md), decided at `tool/shape-result`, after the
 * guardrail screened the whole result: a result larger than its threshold (the tool's own, else the
 * agent's) is kept apart, and the model reads its head, or the tool's own observation, and a line
 * naming the reference and where to read on. A redacted result's raw form is kept too, audit-only,
 * when the agent says so. The kernel stores what this asks for and names it in `tool/end`; what it
 * stores is the content the guardrail let through, which this never changes.
 */
import { Buffer } from 'node:buffer'
import { createHash } from 'node:crypto'
import { artifactRefOf, type ResultShape } from 'cordage'

export interface ShapeConfig {
  /** Results larger than this many bytes are kept apart, unless the tool declares its own threshold. */
  artifactAboveBytes: number
  /** Keep the raw form of a result the guardrail redacted, audit-only. */
  keepRedacted: boolean
  /** Characters of a large result (or of the tool's own observation of it) the model reads. */
  headChars: number
}

export const TextMediaType = 'text/plain; charset=utf-8'
export const JsonMediaType = 'application/json'

/**
 * The shape to record, or undefined to record the result inline as it is. `stored` says whether the
 * agent's store keeps artifacts; when it does not, the result stays inline and `note` says why once.
 */
export function shapeResult(
  value: Readonly<ResultShape>,
  config: ShapeConfig,
  stored: boolean,
  note: (why: string) => void,
): ResultShape | undefined {
  const limit = thresholdOf(value.artifactAboveBytes, config.artifactAboveBytes)
  // Bytes are never fewer than UTF-16 units, so a short text is under the limit without counting; a
  // withheld result is a notice, not worth keeping apart.
  const large = !value.redacted?.withheld && value.content.length * 3 > limit && Buffer.byteLength(value.content) > limit
  const keepRaw = config.keepRedacted && value.redacted !== undefined
  if (!stored) {
    if (large) note(`a result above ${limit} bytes is kept inline in its event`)
    if (keepRaw) note('the raw result of a redacted call is not kept for the audit view')
    return undefined
  }
  if (!large) return keepRaw ? { ...value, keepRaw } : undefined
  const mediaType = value.json ? JsonMediaType : TextMediaType
  const ref = artifactRefOf(createHash('sha256').update(value.content, 'utf8').digest('hex'), 'ui')
  const head = value.ownObservation ? undefined : headOf(value.content, config.headChars)
  const offset = head === undefined ? 0 : Buffer.byteLength(head)
  const line = referenceLine({ ref, bytes: Buffer.byteLength(value.content), mediaType }, offset, head !== undefined)
  const shown = head ?? headOf(value.observation, config.headChars)
  return { ...value, observation: `${shown}\n${line}`, artifact: { mediaType }, ...(keepRaw ? { keepRaw } : {}) }
}

/** The threshold for one tool: its own when it declares a positive whole number, else the agent's. */
export function thresholdOf(own: number | undefined, agentDefault: number): number {
  return typeof own === 'number' && Number.isSafeInteger(own) && own > 0 ? own : agentDefault
}

/** At most `max` characters from the start of `text`, never ending inside a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}

/** The line that tells the model where the rest of a large result is and how to read it. */
export function referenceLine(artifact: { ref: string; bytes: number; mediaType: string }, offset: number, isHead: boolean): string {
  const shown = isHead ? `the first ${offset} bytes are above` : "the tool's summary is above"
  return `[The full result (${artifact.bytes} bytes, ${artifact.mediaType}) is stored as artifact ${artifact.ref}; ${shown}. Read more with read_artifact ${JSON.stringify({ ref: artifact.ref, offset })}.]`
}
