/**
 * Artifacts in PostgreSQL (store contract 2.3.0): `artifact_blobs` keeps each blob once by ref
 * (visibility and sha256), `artifact_listings` the runs and actions that stored it, in order. What is
 * read back is checked (core/kit/store-threads.ts): a whole read against the hash in its ref, the
 * metadata against what putArtifact would take.
 */
import type pg from 'pg'
import {
  CordageError,
  artifactCorrupt,
  checkArtifactRange,
  checkedArtifactBytes,
  checkedArtifactRow,
  MaxArtifactBytes,
  parseArtifactRef,
  type ArtifactInput,
  type StoredArtifact,
  type StoredArtifactRow,
} from 'cordage'

type Tx = <T>(body: (c: pg.PoolClient) => Promise<T>) => Promise<T>
type Query = (sql: string, params: unknown[]) => Promise<{ rows: any[] }>

const listed =
  'SELECT b.ref AS ref, b.size AS bytes, b.media_type AS "mediaType", l.run_id AS "runId", l.action_id AS "actionId", l.created_at AS "createdAt" FROM artifact_listings l JOIN artifact_blobs b ON b.ref = l.ref'

export class PostgresArtifacts {
  constructor(
    private query: Query,
    private tx: Tx,
  ) {}

  /** Store the blob (once) and its listing, in one transaction, for a run that exists. */
  async store(input: ArtifactInput): Promise<StoredArtifact> {
    const row = await this.tx(async (c) => {
      if (!(await c.query('SELECT 1 FROM runs WHERE run_id = $1', [input.runId])).rows.length)
        throw new CordageError('run_not_found', `no run ${input.runId} in this store: an artifact is stored for a run that exists`)
      const at = Date.now()
      await c.query(
        'INSERT INTO artifact_blobs (ref, size, media_type, body, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (ref) DO NOTHING',
        [
          input.ref,
          input.bytes.byteLength,
          input.mediaType,
          Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength),
          at,
        ],
      )
      await c.query(
        'INSERT INTO artifact_listings (run_id, ref, action_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, ref, action_id) DO NOTHING',
        [input.runId, input.ref, input.actionId ?? '', at],
      )
      return (await c.query(`${listed} WHERE l.ref = $1 ORDER BY l.id LIMIT 1`, [input.ref])).rows[0] as StoredArtifactRow
    })
    return checkedArtifactRow(row)
  }

  async get(ref: string): Promise<StoredArtifact | undefined> {
    const row = (await this.query(`${listed} WHERE l.ref = $1 ORDER BY l.id LIMIT 1`, [parseArtifactRef(ref).ref])).rows[0]
    return row && checkedArtifactRow(row as StoredArtifactRow)
  }

  async read(ref: string, range?: { offset: number; length: number }): Promise<Uint8Array> {
    const parsed = parseArtifactRef(ref)
    const checked = checkArtifactRange(range)
    const row = (
      checked
        ? await this.query('SELECT substring(body FROM $1 FOR $2) AS bytes FROM artifact_blobs WHERE ref = $3', [
            // Past the largest blob is past every blob's end; and the position stays a PostgreSQL integer.
            Math.min(checked.offset, MaxArtifactBytes) + 1,
            checked.length,
            parsed.ref,
          ])
        : await this.query('SELECT body AS bytes FROM artifact_blobs WHERE ref = $1', [parsed.ref])
    ).rows[0] as { bytes: unknown } | undefined
    if (!row) throw new CordageError('artifact_not_found', `no artifact ${parsed.ref} in this store`, { data: { ref: parsed.ref } })
    if (!(row.bytes instanceof Uint8Array)) throw artifactCorrupt(parsed.ref, 'its stored body is not bytes')
    const out = new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength)
    return checked ? out : checkedArtifactBytes(parsed.ref, out)
  }

  async of(runId: string): Promise<StoredArtifact[]> {
    return (await this.query(`${listed} WHERE l.run_id = $1 ORDER BY l.id`, [runId])).rows.map((r) =>
      checkedArtifactRow(r as StoredArtifactRow),
    )
  }
}
