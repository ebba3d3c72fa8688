/**
 * Artifacts in memory: one copy of each blob by ref (visibility and content), and the listings of
 * which run (and action) stored it, in the order they were made.
 */
import { CordageError, checkArtifactRange, checkedArtifactBytes, parseArtifactRef, type ArtifactInput, type StoredArtifact } from 'cordage'

/** `ArtifactRef` (core/contracts/data.ts), which `cordage` does not export by that name. */
type ArtifactRef = Omit<StoredArtifact, 'runId' | 'actionId' | 'createdAt'>

interface Blob {
  bytes: Uint8Array
  mediaType: string
}

interface Listing {
  runId: string
  ref: string
  actionId?: string
  createdAt: number
}

export class MemoryArtifacts {
  private blobs = new Map<string, Blob>()
  private listings: Listing[] = []

  put(input: ArtifactInput): ArtifactRef {
    let blob = this.blobs.get(input.ref)
    if (!blob) {
      // A copy: the caller's array could be changed after the call.
      blob = { bytes: new Uint8Array(input.bytes), mediaType: input.mediaType }
      this.blobs.set(input.ref, blob)
    }
    if (!this.listings.some((l) => l.runId === input.runId && l.ref === input.ref && l.actionId === input.actionId))
      this.listings.push({ runId: input.runId, ref: input.ref, actionId: input.actionId, createdAt: Date.now() })
    return { ref: input.ref, sha256: input.sha256, bytes: blob.bytes.byteLength, mediaType: blob.mediaType, visibility: input.visibility }
  }

  get(ref: string): StoredArtifact | undefined {
    const parsed = parseArtifactRef(ref)
    const blob = this.blobs.get(parsed.ref)
    const first = this.listings.find((l) => l.ref === parsed.ref)
    return blob && first && this.stored(first, blob)
  }

  read(ref: string, range?: { offset: number; length: number }): Uint8Array {
    const parsed = parseArtifactRef(ref)
    const checked = checkArtifactRange(range)
    const blob = this.blobs.get(parsed.ref)
    if (!blob) throw new CordageError('artifact_not_found', `no artifact ${parsed.ref} in store-memory`, { data: { ref: parsed.ref } })
    if (!checked) return checkedArtifactBytes(parsed.ref, new Uint8Array(blob.bytes))
    return blob.bytes.slice(checked.offset, checked.offset + checked.length)
  }

  of(runId: string): StoredArtifact[] {
    return this.listings.filter((l) => l.runId === runId).map((l) => this.stored(l, this.blobs.get(l.ref)!))
  }

  private stored(listing: Listing, blob: Blob): StoredArtifact {
    const { sha256, visibility } = parseArtifactRef(listing.ref)
    return {
      ref: listing.ref,
      sha256,
      bytes: blob.bytes.byteLength,
      mediaType: blob.mediaType,
      visibility,
      runId: listing.runId,
      ...(listing.actionId !== undefined ? { actionId: listing.actionId } : {}),
      createdAt: listing.createdAt,
    }
  }
}
