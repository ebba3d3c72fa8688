/**
 * The database schema as a list of migrations, applied under an advisory lock so that workers
 * starting together migrate once. A database newer than this code is refused.
 */
import type pg from 'pg'
import { CordageError } from 'cordage'

export const migrations: string[] = [
  // 1: runs, events, snapshots, the ledger
  `
  CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    task TEXT NOT NULL,
    status TEXT NOT NULL,
    failure_code TEXT,
    last_seq INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    lease_worker TEXT,
    lease_token INTEGER NOT NULL DEFAULT 0,
    lease_expires BIGINT NOT NULL DEFAULT 0,
    lease_released BOOLEAN NOT NULL DEFAULT TRUE,
    cancel_by TEXT,
    cancel_reason TEXT,
    cancel_at BIGINT
  );
  CREATE INDEX runs_created ON runs (created_at);
  CREATE INDEX runs_claimable ON runs (status, lease_expires);
  CREATE TABLE events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE TABLE snapshots (
    run_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL
  );
  CREATE TABLE effects (
    key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    action_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    receipt TEXT,
    output TEXT,
    started_at BIGINT NOT NULL,
    ended_at BIGINT
  );
  `,
  // 2: standing grants (store contract 2.1.0); the grant itself as JSON, the columns queries use beside it
  `
  CREATE TABLE grants (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE INDEX grants_agent_tool ON grants (agent, tool);
  `,
  // 3: each event's link in the run's hash chain, the 32 bytes of the digest (NULL for events stored
  // before: "not chained up to seq N"), and the observation the model was told of an effect
  `
  ALTER TABLE events ADD COLUMN chain BYTEA;
  ALTER TABLE effects ADD COLUMN observation TEXT;
  `,
  // 4: each snapshot's link to the chain at its seq, H(link + "\nsnapshot\n" + state), 32 bytes. A
  // snapshot kept before has none and would not be trusted: they are dropped (a snapshot is a cache;
  // those runs are replayed from their events until they have gone on another snapshotEvery events).
  `
  ALTER TABLE snapshots ADD COLUMN chain BYTEA;
  DELETE FROM snapshots;
  `,
  // 5: the queue of runs a worker may claim, apart from finished runs. Runs are never deleted, and once
  // the statistics show many claimable runs (a burst, then ANALYZE), the planner walked runs_created from
  // the oldest run and filtered out every finished one: a million finished runs made each claim read a
  // million rows (952 ms), and each idle poll after the burst 671 ms. The partial index holds only runs
  // that can still be claimed, so a claim reads about as many rows as are queued or being driven.
  `
  CREATE INDEX IF NOT EXISTS runs_queue ON runs (created_at, run_id) WHERE status IN ('RUNNING', 'CANCELLING');
  `,
  // 6: threads and artifacts (store contract 2.3.0). A run's thread and turn are columns of the run, one
  // run per (thread, turn) by a unique index; the thread row (its agent and its close) is what a new
  // turn locks, so two workers adding a turn to one thread take turns. A blob is kept once per ref
  // (visibility and content hash), uncompressed (EXTERNAL) so that a range reads only its chunks; a
  // listing ties it to a run and an action ('' for none, so the unique key holds), in order (id).
  `
  ALTER TABLE runs ADD COLUMN thread_id TEXT;
  ALTER TABLE runs ADD COLUMN turn INTEGER;
  CREATE UNIQUE INDEX runs_thread_turn ON runs (thread_id, turn) WHERE thread_id IS NOT NULL;
  CREATE TABLE threads (
    thread_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    closed_by TEXT,
    closed_at BIGINT,
    closed_reason TEXT
  );
  CREATE TABLE artifact_blobs (
    ref TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    media_type TEXT NOT NULL,
    body BYTEA NOT NULL,
    created_at BIGINT NOT NULL
  );
  ALTER TABLE artifact_blobs ALTER COLUMN body SET STORAGE EXTERNAL;
  CREATE TABLE artifact_listings (
    id BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    ref TEXT NOT NULL,
    action_id TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (run_id, ref, action_id)
  );
  CREATE INDEX artifact_listings_ref ON artifact_listings (ref, id);
  `,
]

export const SchemaVersion = migrations.length

export async function migrate(client: pg.PoolClient, schema: string): Promise<void> {
  await client.query('BEGIN')
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('cordage.migrate.' || $1))`, [schema])
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`)
    const row = (await client.query(`SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`)).rows[0]
    await checkOwner(client, schema, row?.value)
    const current = Number(row?.value ?? 0)
    if (current > SchemaVersion) {
      throw new CordageError(
        'plugin_start_failed',
        `PostgreSQL schema ${schema} has version ${current}; this store-postgres knows up to ${SchemaVersion}: use a newer store-postgres`,
      )
    }
    await client.query(`SET LOCAL search_path TO ${schema}`)
    for (let version = current; version < SchemaVersion; version++) await client.query(migrations[version])
    await client.query(
      `INSERT INTO ${schema}.meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [String(SchemaVersion)],
    )
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}

/**
 * Before migrating: the schema is empty (but for our meta table), or says it is Cordage's, at a whole
 * version. PostgreSQL's own words for a schema of another application ("relation runs already exists")
 * name neither the schema nor the way out, and its tables must never be written to.
 */
async function checkOwner(client: pg.PoolClient, schema: string, version: string | undefined): Promise<void> {
  if (version === undefined) {
    const tables = (
      await client.query<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'meta' ORDER BY table_name`,
        [schema],
      )
    ).rows.map((r) => r.name)
    if (!tables.length) return
    throw new CordageError(
      'store_corrupt',
      `PostgreSQL schema ${schema} is not Cordage's: it has the table(s) ${tables.slice(0, 8).join(', ')}${tables.length > 8 ? ', ...' : ''} and no Cordage schema version. store-postgres never writes into another application's tables: set the store's "schema" to a new name (it is created), or move those tables away`,
    )
  }
  if (!/^\d+$/.test(version)) {
    throw new CordageError(
      'store_corrupt',
      `PostgreSQL schema ${schema}: its Cordage schema version is ${JSON.stringify(version)}, not a whole number: the meta table was edited. Restore the schema from a backup, or set the store's "schema" to a new name`,
    )
  }
}
