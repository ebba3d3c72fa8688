/**
 * Artifacts in the SQLite database (store contract 2.3.0): `artifact_blobs` keeps each blob once by
 * ref (visibility and sha256), `artifact_listings` the runs and actions that stored it, in order.
 * What is read back is checked (core/kit/store-threads.ts): a whole read against the hash in its ref,
 * the metadata against what putArtifact would take.
 */
import type Database from 'better-sqlite3'
import {
  CordageError,
  artifactCorrupt,
  checkArtifactRange,
  checkedArtifactBytes,
  checkedArtifactRow,
  parseArtifactRef,
  type ArtifactInput,
  type StoredArtifact,
  type StoredArtifactRow,
} from 'cordage'

const listed =
  'SELECT b.ref AS ref, b.size AS bytes, b.media_type AS mediaType, l.run_id AS runId, l.action_id AS actionId, l.created_at AS createdAt FROM artifact_listings l JOIN artifact_blobs b ON b.ref = l.ref'

export class SqliteArtifacts {
  private insertBlob: Database.Statement
  private insertListing: Database.Statement
  private first: Database.Statement<[string], StoredArtifactRow>
  private ofRun: Database.Statement<[string], StoredArtifactRow>
  private whole: Database.Statement<[string], { body: unknown }>
  private part: Database.Statement<[number, number, string], { part: unknown }>
  private put: Database.Transaction<(input: ArtifactInput, at: number) => StoredArtifactRow>

  constructor(db: Database.Database) {
    this.insertBlob = db.prepare(
      'INSERT INTO artifact_blobs (ref, size, media_type, body, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING',
    )
    this.insertListing = db.prepare(
      'INSERT INTO artifact_listings (run_id, ref, action_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (run_id, ref, action_id) DO NOTHING',
    )
    this.first = db.prepare(`${listed} WHERE l.ref = ? ORDER BY l.id LIMIT 1`)
    this.ofRun = db.prepare(`${listed} WHERE l.run_id = ? ORDER BY l.id`)
    this.whole = db.prepare('SELECT body FROM artifact_blobs WHERE ref = ?')
    this.part = db.prepare('SELECT substr(body, ?, ?) AS part FROM artifact_blobs WHERE ref = ?')
    this.put = db.transaction((input: ArtifactInput, at: number) => {
      this.insertBlob.run(input.ref, input.bytes.byteLength, input.mediaType, Buffer.from(input.bytes), at)
      this.insertListing.run(input.runId, input.ref, input.actionId ?? '', at)
      return this.first.get(input.ref)!
    })
  }

  /** Store the blob (once) and its listing, in one transaction; the run was checked by the caller. */
  store(input: ArtifactInput): StoredArtifact {
    return checkedArtifactRow(this.put.immediate(input, Date.now()))
  }

  get(ref: string): StoredArtifact | undefined {
    const row = this.first.get(parseArtifactRef(ref).ref)
    return row && checkedArtifactRow(row)
  }

  read(ref: string, range?: { offset: number; length: number }): Uint8Array {
    const parsed = parseArtifactRef(ref)
    const checked = checkArtifactRange(range)
    const row = checked ? this.part.get(checked.offset + 1, checked.length, parsed.ref) : this.whole.get(parsed.ref)
    if (!row) throw new CordageError('artifact_not_found', `no artifact ${parsed.ref} in this store`, { data: { ref: parsed.ref } })
    const bytes = checked ? (row as { part: unknown }).part : (row as { body: unknown }).body
    // substr of a zero-length range is '' (text) in SQLite, not an empty blob.
    if (checked && (bytes === '' || bytes === null)) return new Uint8Array(0)
    if (!(bytes instanceof Uint8Array)) throw artifactCorrupt(parsed.ref, 'its stored body is not a blob')
    const out = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    return checked ? out : checkedArtifactBytes(parsed.ref, out)
  }

  of(runId: string): StoredArtifact[] {
    return this.ofRun.all(runId).map(checkedArtifactRow)
  }
}
