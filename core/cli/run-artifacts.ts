/**
 * @module cli/run-artifacts
 * The artifacts a run is made of, for `cordage verify` and `cordage scan`: the ones its events name
 * (`tool/end.artifact`, and `tool/end.redacted.audit`, the raw result a guardrail redacted; the same two
 * the reducer collects in `RunState.artifacts`), and the ones the store lists under it. Blobs are read
 * by ranges, so a blob is read as stored even when it no longer matches its ref (a whole read would
 * refuse it), and never more than the largest blob a store takes.
 */
import { createHash } from 'node:crypto'
import type { RunEvent } from '../contracts/events.ts'
import type { StoreService } from '../contracts/services/store.ts'
import { ArtifactRefPattern, MaxArtifactBytes, MaxArtifactRead } from '../kit/store-threads.ts'

/** An artifact as one event names it. */
export interface NamedArtifact {
  ref: string
  /** The event that names it. */
  seq: number
  type: string
  actionId?: string
  /** What the event says of it; `malformed` when the event's reference is not one (then nothing else is set). */
  sha256: string
  bytes: number
  mediaType: string
  visibility: 'ui' | 'audit'
  malformed?: string
}

/** Every artifact reference in a run's events, in seq order (a ref named twice is listed twice). */
export function namedArtifacts(events: readonly RunEvent[]): NamedArtifact[] {
  const named: NamedArtifact[] = []
  for (const event of events) {
    if (event.type !== 'tool/end') continue
    const data = event.data as Partial<RunEvent<'tool/end'>['data']> | undefined
    const redacted = data?.redacted as { audit?: unknown } | undefined
    for (const value of [data?.artifact, redacted?.audit]) {
      if (value === undefined) continue
      named.push(namedOf(event, value))
    }
  }
  return named
}

function namedOf(event: RunEvent, value: unknown): NamedArtifact {
  const at = { seq: event.seq, type: event.type, ...(event.actionId ? { actionId: event.actionId } : {}) }
  const r = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  const match = typeof r.ref === 'string' ? ArtifactRefPattern.exec(r.ref) : null
  const malformed = (problem: string): NamedArtifact => ({
    ...at,
    ref: typeof r.ref === 'string' ? r.ref.slice(0, 200) : String(r.ref),
    sha256: '',
    bytes: 0,
    mediaType: '',
    visibility: 'ui',
    malformed: problem,
  })
  if (!match) return malformed('its event names it with a malformed ref')
  const visibility = match[1] === 'audit' ? 'audit' : 'ui'
  if (r.sha256 !== match[2]) return malformed(`its event names sha256 ${JSON.stringify(r.sha256)}, which is not the hash in its ref`)
  if (r.visibility !== undefined && r.visibility !== visibility)
    return malformed(`its event names visibility ${JSON.stringify(r.visibility)}, which is not the one its ref says`)
  if (typeof r.bytes !== 'number' || !Number.isSafeInteger(r.bytes) || r.bytes < 0)
    return malformed(`its event names the size ${JSON.stringify(r.bytes)}, which is not a size`)
  if (typeof r.mediaType !== 'string') return malformed('its event names no media type')
  return { ...at, ref: match[0], sha256: match[2], bytes: r.bytes, mediaType: r.mediaType, visibility }
}

/** What a blob's stored bytes are: their sha256 and length, or that there are more than any blob holds. */
export interface BlobDigest {
  sha256: string
  bytes: number
  /** Only when asked to keep them (scan). */
  content?: Buffer
  tooLarge?: boolean
}

/**
 * Read a blob whole, range by range, and hash it (keeping the bytes when `keep`). Reads on until a
 * short range, whatever size the store's metadata says, so a blob longer than its row claims is read
 * as it is.
 * @throws CordageError `artifact_not_found` when the store has no such blob, and what the store throws
 */
export async function readBlob(store: StoreService, ref: string, keep = false): Promise<BlobDigest> {
  const hash = createHash('sha256')
  const parts: Buffer[] = []
  let total = 0
  for (;;) {
    const part = await store.readArtifact!(ref, { offset: total, length: MaxArtifactRead })
    hash.update(part)
    if (keep) parts.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength))
    total += part.byteLength
    if (total > MaxArtifactBytes) return { sha256: hash.digest('hex'), bytes: total, tooLarge: true }
    if (part.byteLength < MaxArtifactRead) break
  }
  return { sha256: hash.digest('hex'), bytes: total, ...(keep ? { content: Buffer.concat(parts) } : {}) }
}

/** True when the store can list and read artifacts (store contract 2.3.0). */
export function keepsArtifacts(store: StoreService): boolean {
  return typeof store.readArtifact === 'function' && typeof store.artifact === 'function' && typeof store.artifactsOf === 'function'
}
