/**
 * @module cli/scan-artifacts
 * The artifacts part of `cordage scan`: every blob a run's events name or the store lists under it,
 * audit-only ones included, read as stored (by ranges: a blob edited after it was written is searched
 * too) and searched in every form the scrubber knows. A JSON artifact is searched as parsed, so a
 * finding names its JSON path, and as text, for what parsing does not show; a text artifact says the
 * byte offset. Each blob is searched once, under the first run that names or lists it.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { StoreService } from '../contracts/services/store.ts'
import type { Scrubber } from '../kit/secrets.ts'
import { namedArtifacts, readBlob } from './run-artifacts.ts'

/** Where in a run an artifact is, for a finding. */
export interface ArtifactPlace {
  runId: string
  in: 'artifact'
  ref: string
  visibility: 'ui' | 'audit'
  actionId?: string
  /** The event that names it, when one does. */
  seq?: number
  type?: string
}

/** One secret found in an artifact: where inside it (a JSON path, and for text the byte offset). */
export interface ArtifactFinding extends ArtifactPlace {
  path: string
  offset?: number
  secret: string
  form: string
}

interface Target extends ArtifactPlace {
  mediaType: string
}

/**
 * Search a run's artifacts (those not searched already: `seen` holds their refs) for the scrubbers'
 * secrets.
 * @throws CordageError what the store throws reading a blob, except `artifact_not_found` (nothing kept, nothing to find)
 */
export async function scanArtifacts(
  store: StoreService,
  runId: string,
  events: readonly RunEvent[],
  scrubbers: readonly Scrubber[],
  seen: Set<string>,
): Promise<{ searched: number; findings: ArtifactFinding[] }> {
  const out = { searched: 0, findings: [] as ArtifactFinding[] }
  if (typeof store.readArtifact !== 'function') return out
  const targets = new Map<string, Target>()
  for (const a of namedArtifacts(events)) {
    if (a.malformed || targets.has(a.ref)) continue
    targets.set(a.ref, {
      runId,
      in: 'artifact',
      ref: a.ref,
      visibility: a.visibility,
      ...(a.actionId ? { actionId: a.actionId } : {}),
      seq: a.seq,
      type: a.type,
      mediaType: a.mediaType,
    })
  }
  for (const l of (await store.artifactsOf?.(runId)) ?? []) {
    if (targets.has(l.ref)) continue
    targets.set(l.ref, {
      runId,
      in: 'artifact',
      ref: l.ref,
      visibility: l.visibility ?? 'ui',
      ...(l.actionId ? { actionId: l.actionId } : {}),
      mediaType: l.mediaType,
    })
  }
  for (const target of targets.values()) {
    if (seen.has(target.ref)) continue
    seen.add(target.ref)
    let blob
    try {
      blob = await readBlob(store, target.ref, true)
    } catch (error) {
      if (CordageError.is(error, 'artifact_not_found')) continue
      throw error
    }
    if (!blob.content)
      throw new CordageError('store_corrupt', `artifact ${target.ref}: its stored bytes are more than the largest artifact a store takes`, {
        data: { ref: target.ref },
      })
    out.searched++
    out.findings.push(...findIn(blob.content, target, scrubbers))
  }
  return out
}

function findIn(content: Buffer, target: Target, scrubbers: readonly Scrubber[]): ArtifactFinding[] {
  const { mediaType, ...place } = target
  const text = content.toString('utf8')
  const found: ArtifactFinding[] = []
  let parsed: unknown
  if (/^application\/json\s*(;|$)/i.test(mediaType)) {
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
  }
  const inParsed = new Set<string>()
  if (parsed !== undefined)
    for (const scrubber of scrubbers)
      for (const hit of scrubber.find(parsed)) {
        inParsed.add(`${hit.name}\n${hit.form}`)
        found.push({ ...place, path: hit.path, secret: hit.name, form: hit.form })
      }
  // The text as stored: all of a text artifact, and what a JSON one's parse does not show (a number, a key split by an escape).
  for (const scrubber of scrubbers) {
    let chars = 0
    let bytes = 0
    for (const hit of scrubber.locate(text)) {
      bytes += Buffer.byteLength(text.slice(chars, hit.index))
      chars = hit.index
      if (inParsed.has(`${hit.name}\n${hit.form}`)) continue
      found.push({ ...place, path: '$', offset: bytes, secret: hit.name, form: hit.form })
    }
  }
  return found
}
