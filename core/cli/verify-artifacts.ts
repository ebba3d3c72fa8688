/**
 * @module cli/verify-artifacts
 * The artifacts part of `cordage verify RUN`. A run's chained `tool/end` names each artifact it stored
 * by ref, sha256, size and media type, so the chain proves what each blob must be; the blob itself is
 * kept beside the log, outside the chain, where an edit would otherwise go unseen. For each artifact an
 * event names: the store has it, its stored size and media type are the event's, its bytes (read as
 * stored) hash to the event's sha256, and it is listed under the run (what read_artifact allows).
 * Artifacts listed under the run that no event names (a crash between storing a result and recording
 * its tool/end leaves one) are checked against the hash in their ref. Each problem names the artifact,
 * and the seq of the event that names it.
 */
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { StoreService, StoredArtifact } from '../contracts/services/store.ts'
import { keepsArtifacts, namedArtifacts, readBlob, type NamedArtifact } from './run-artifacts.ts'

/** One thing about a run that does not hold: at the seq of the event it contradicts, when there is one. */
export interface RunProblem {
  seq?: number
  ref?: string
  problem: string
}

/** One artifact checked, as `verify --json` lists it. */
export interface CheckedArtifact {
  ref: string
  seq: number
  actionId?: string
  visibility: 'ui' | 'audit'
  bytes: number
}

export interface ArtifactsCheck {
  /** The artifacts the run's events name, in seq order. */
  named: CheckedArtifact[]
  /** Artifacts listed under the run that no event names. */
  unnamed: { ref: string; actionId?: string }[]
  problems: RunProblem[]
}

export async function checkArtifacts(store: StoreService, runId: string, events: readonly RunEvent[]): Promise<ArtifactsCheck> {
  const named = namedArtifacts(events)
  const result: ArtifactsCheck = { named: [], unnamed: [], problems: [] }
  if (!keepsArtifacts(store)) {
    // A store without artifacts holds no blob an event could name: a named one cannot be proved.
    for (const a of named)
      result.problems.push({ seq: a.seq, ref: a.ref, problem: `${label(a)}: the store keeps no artifacts, so it cannot be checked` })
    return result
  }
  const listed = await store.artifactsOf!(runId)
  const listedRefs = new Set(listed.map((l) => l.ref))
  const digests = new Map<string, Promise<Awaited<ReturnType<typeof readBlob>> | CordageError>>()
  const digest = (ref: string) => {
    let d = digests.get(ref)
    if (!d) digests.set(ref, (d = readBlob(store, ref).catch((error) => (CordageError.is(error) ? error : Promise.reject(error)))))
    return d
  }
  for (const a of named) {
    result.named.push({ ref: a.ref, seq: a.seq, ...(a.actionId ? { actionId: a.actionId } : {}), visibility: a.visibility, bytes: a.bytes })
    const problem = a.malformed ?? (await namedProblem(store, a, listedRefs, runId, digest))
    if (problem) result.problems.push({ seq: a.seq, ref: a.ref, problem: `${label(a)}: ${problem}` })
  }
  const namedRefs = new Set(named.map((a) => a.ref))
  for (const l of listed) {
    if (namedRefs.has(l.ref) || result.unnamed.some((u) => u.ref === l.ref)) continue
    result.unnamed.push({ ref: l.ref, ...(l.actionId ? { actionId: l.actionId } : {}) })
    const problem = await unnamedProblem(l, digest)
    if (problem)
      result.problems.push({
        ref: l.ref,
        problem: `artifact ${l.ref} (listed under the run${l.actionId ? ` for ${l.actionId}` : ''}, named by no event): ${problem}`,
      })
  }
  return result
}

function label(a: NamedArtifact): string {
  return `artifact ${a.ref} (${a.type} of ${a.actionId ?? 'no action'})`
}

type Digest = (ref: string) => Promise<Awaited<ReturnType<typeof readBlob>> | CordageError>

/** The first thing about a named artifact that does not match its event, or undefined. */
async function namedProblem(
  store: StoreService,
  a: NamedArtifact,
  listedRefs: ReadonlySet<string>,
  runId: string,
  digest: Digest,
): Promise<string | undefined> {
  let stored: StoredArtifact | undefined
  try {
    stored = await store.artifact!(a.ref)
  } catch (error) {
    if (!CordageError.is(error)) throw error
    return storedProblem(error)
  }
  if (!stored) return 'it is not in the store'
  if (stored.bytes !== a.bytes) return `its stored size is ${stored.bytes} bytes, not the ${a.bytes} its event names`
  if (stored.mediaType !== a.mediaType)
    return `its stored media type is ${JSON.stringify(stored.mediaType)}, not the ${JSON.stringify(a.mediaType)} its event names`
  const read = await digest(a.ref)
  if (read instanceof CordageError) return read.code === 'artifact_not_found' ? 'it is not in the store' : storedProblem(read)
  if (read.tooLarge) return `its stored bytes are more than the largest artifact a store takes`
  if (read.sha256 !== a.sha256)
    return `its stored bytes hash to sha256 ${read.sha256}, not the ${a.sha256} its event names${read.bytes !== a.bytes ? ` (${read.bytes} bytes, not ${a.bytes})` : ''}`
  if (!listedRefs.has(a.ref))
    return `it is not listed under run ${runId} in the store (its listing was removed: read_artifact refuses it to the run)`
  return undefined
}

/** An artifact no event names still holds the bytes its ref (their hash) names, or it was edited. */
async function unnamedProblem(l: StoredArtifact, digest: Digest): Promise<string | undefined> {
  const read = await digest(l.ref)
  if (read instanceof CordageError)
    return read.code === 'artifact_not_found' ? 'it is listed, but its blob is not in the store' : storedProblem(read)
  if (read.tooLarge) return 'its stored bytes are more than the largest artifact a store takes'
  if (read.sha256 !== l.sha256) return `its stored bytes hash to sha256 ${read.sha256}, not the ${l.sha256} its ref names`
  return undefined
}

/** What a store said of a row it could not return, in its own words. */
function storedProblem(error: CordageError): string {
  const problem = (error.data as { problem?: unknown } | undefined)?.problem
  return typeof problem === 'string' ? problem : `the store could not read it: error [${error.code}]: ${error.message}`
}
