/**
 * The database schema as a list of migrations. The database records how many have run; opening a
 * database runs the missing ones in one transaction, and refuses a database newer than this code.
 */
import type Database from 'better-sqlite3'
import { CordageError } from 'cordage'

export const migrations: ((db: Database.Database) => void)[] = [
  // 1: runs, events, snapshots, the ledger
  (db) =>
    db.exec(`
    CREATE TABLE runs (
      run_id TEXT PRIMARY KEY,
      agent TEXT NOT NULL,
      task TEXT NOT NULL,
      status TEXT NOT NULL,
      failure_code TEXT,
      last_seq INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      lease_worker TEXT,
      lease_token INTEGER NOT NULL DEFAULT 0,
      lease_expires INTEGER NOT NULL DEFAULT 0,
      lease_released INTEGER NOT NULL DEFAULT 1,
      cancel_by TEXT,
      cancel_reason TEXT,
      cancel_at INTEGER
    );
    CREATE INDEX runs_created ON runs (created_at);
    CREATE INDEX runs_claimable ON runs (status, lease_expires);
    CREATE TABLE events (
      run_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID;
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
      started_at INTEGER NOT NULL,
      ended_at INTEGER
    );
  `),
  // 2: standing grants (store contract 2.1.0); the grant itself as JSON, the columns queries use beside it
  (db) =>
    db.exec(`
    CREATE TABLE grants (
      id TEXT PRIMARY KEY,
      agent TEXT NOT NULL,
      tool TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      body TEXT NOT NULL
    );
    CREATE INDEX grants_agent_tool ON grants (agent, tool);
  `),
  // 3: each event's link in the run's hash chain, the 32 bytes of the digest (NULL for events stored
  // before: "not chained up to seq N"), and the observation the model was told of an effect
  (db) =>
    db.exec(`
    ALTER TABLE events ADD COLUMN chain BLOB;
    ALTER TABLE effects ADD COLUMN observation TEXT;
  `),
  // 4: each snapshot's link to the chain at its seq, H(link + "\nsnapshot\n" + state), 32 bytes. A
  // snapshot kept before has none and would not be trusted: they are dropped (a snapshot is a cache;
  // those runs are replayed from their events until they have gone on another snapshotEvery events).
  (db) =>
    db.exec(`
    ALTER TABLE snapshots ADD COLUMN chain BLOB;
    DELETE FROM snapshots;
  `),
  // 5: threads and artifacts (store contract 2.3.0). A run's thread and turn are columns of the run, one
  // run per (thread, turn) by a unique index; the thread row holds its agent and its close. A blob is
  // kept once per ref (visibility and content hash); a listing ties it to a run and an action ('' for
  // none, so the unique key holds), in insertion order (id).
  (db) =>
    db.exec(`
    ALTER TABLE runs ADD COLUMN thread_id TEXT;
    ALTER TABLE runs ADD COLUMN turn INTEGER;
    CREATE UNIQUE INDEX runs_thread_turn ON runs (thread_id, turn) WHERE thread_id IS NOT NULL;
    CREATE TABLE threads (
      thread_id TEXT PRIMARY KEY,
      agent TEXT NOT NULL,
      closed_by TEXT,
      closed_at INTEGER,
      closed_reason TEXT
    );
    CREATE TABLE artifact_blobs (
      ref TEXT PRIMARY KEY,
      size INTEGER NOT NULL,
      media_type TEXT NOT NULL,
      body BLOB NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE TABLE artifact_listings (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      run_id TEXT NOT NULL,
      ref TEXT NOT NULL,
      action_id TEXT NOT NULL DEFAULT '',
      created_at INTEGER NOT NULL,
      UNIQUE (run_id, ref, action_id)
    );
    CREATE INDEX artifact_listings_ref ON artifact_listings (ref, id);
  `),
]

export const SchemaVersion = migrations.length

export function migrate(db: Database.Database, file: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
  const read = () =>
    Number((db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined)?.value ?? 0)
  db.transaction(() => {
    const current = read()
    if (current > SchemaVersion) {
      throw new CordageError(
        'plugin_start_failed',
        `database ${file} has schema version ${current}; this store-sqlite knows up to ${SchemaVersion}: use a newer store-sqlite`,
      )
    }
    for (let version = current; version < SchemaVersion; version++) migrations[version](db)
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
      String(SchemaVersion),
    )
  }).immediate()
}
