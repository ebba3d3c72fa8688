/**
 * Opening the database file, checked. SQLite's own words for a file it cannot use ("file is not a
 * database", "database disk image is malformed", "table runs already exists") say neither which file
 * nor what to do, so each is turned into an error that names the file and the way out. A database is
 * used only when it is empty, or is Cordage's: a database of another application is never written to.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { CordageError } from 'cordage'
import { migrate, migrations, SchemaVersion } from './schema.ts'

export interface OpenOptions {
  synchronous: 'full' | 'normal'
  busyTimeoutMs: number
}

/**
 * Open (creating it if missing) and migrate the database at `file`, and check that its tables are the
 * ones this store-sqlite uses.
 * @throws CordageError `store_corrupt` (not a SQLite file, damaged, not a Cordage database, tables that
 *   differ from the schema), `plugin_start_failed` (cannot be opened: a folder, no permission, locked)
 */
export function openDatabase(file: string, options: OpenOptions): Database.Database {
  if (file !== ':memory:') {
    if (existsSync(file) && statSync(file).isDirectory()) {
      throw new CordageError(
        'plugin_start_failed',
        `store-sqlite: ${file} is a folder; the store's "path" names the database file (it is created if missing), such as ${file}/cordage.db`,
      )
    }
    try {
      mkdirSync(dirname(file), { recursive: true })
    } catch (error) {
      throw new CordageError(
        'plugin_start_failed',
        `store-sqlite: cannot create the folder of the database ${file} (${(error as Error).message}); set the store's "path" to a file in a folder you can write`,
        { cause: error },
      )
    }
  }
  let db: Database.Database | undefined
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.pragma(`synchronous = ${options.synchronous.toUpperCase()}`)
    db.pragma(`busy_timeout = ${options.busyTimeoutMs}`)
    const version = checkOwner(db, file)
    // The tables a database says it has are checked before a migration alters them, so a changed
    // table is named as such rather than failing inside the migration.
    if (version > 0 && version <= SchemaVersion) checkTables(db, file, version)
    migrate(db, file)
    checkTables(db, file, SchemaVersion)
    return db
  } catch (error) {
    try {
      db?.close()
    } catch {
      /* closing a database that failed to open */
    }
    throw explain(error, file)
  }
}

/**
 * Before migrating: an empty database, or one that says it is Cordage's, at a schema version we can
 * read. Returns that version (0 for a new database).
 */
function checkOwner(db: Database.Database, file: string): number {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]
  ).map((t) => t.name)
  const others = tables.filter((t) => t !== 'meta')
  const version = tables.includes('meta')
    ? (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: unknown } | undefined)?.value
    : undefined
  if (version === undefined) {
    // Empty, or only the meta table of a first migration that did not commit: a new database.
    if (!others.length) return 0
    throw new CordageError(
      'store_corrupt',
      `${file} is a SQLite database, but not Cordage's: it has the table(s) ${others.slice(0, 8).join(', ')}${others.length > 8 ? ', ...' : ''} and no Cordage schema version. store-sqlite never writes into another application's database: point the store's "path" at a new file (it is created), or move this one away`,
    )
  }
  const number = Number(version)
  if (typeof version !== 'string' || !Number.isInteger(number) || number < 0) {
    throw new CordageError(
      'store_corrupt',
      `${file}: its Cordage schema version is ${JSON.stringify(version)}, not a whole number: the database was edited or damaged. Restore it from a backup, or move it away to start an empty store (its runs would be lost)`,
    )
  }
  return number
}

const expected = new Map<number, Map<string, string[]>>()

/**
 * The tables and columns a database at schema `version` has: learnt once per version, from an empty
 * database in memory migrated that far.
 */
function expectedTables(version: number): Map<string, string[]> {
  let tables = expected.get(version)
  if (!tables) {
    const memory = new Database(':memory:')
    try {
      memory.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
      for (const step of migrations.slice(0, version)) step(memory)
      tables = tablesOf(memory)
      expected.set(version, tables)
    } finally {
      memory.close()
    }
  }
  return tables
}

function tablesOf(db: Database.Database): Map<string, string[]> {
  const names = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]
  ).map((t) => t.name)
  return new Map(
    names.map((name) => [name, (db.prepare('SELECT name FROM pragma_table_info(?)').all(name) as { name: string }[]).map((c) => c.name)]),
  )
}

/** Every table and column of schema `version` is there (extra ones are left alone). */
function checkTables(db: Database.Database, file: string, version: number): void {
  const actual = tablesOf(db)
  const problems: string[] = []
  for (const [table, columns] of expectedTables(version)) {
    const have = actual.get(table)
    if (!have) {
      problems.push(`table ${table} is missing`)
      continue
    }
    const missing = columns.filter((c) => !have.includes(c))
    if (missing.length) problems.push(`table ${table} lacks the column(s) ${missing.join(', ')}`)
  }
  if (problems.length) {
    throw new CordageError(
      'store_corrupt',
      `${file} says it has Cordage schema version ${version}, but ${problems.join('; ')}: it was changed by something else. Restore it from a backup, or move it away to start an empty store (its runs would be lost)`,
    )
  }
}

/** SQLite's error, as one that names the file and says what to do. */
function explain(error: unknown, file: string): unknown {
  if (CordageError.is(error)) return error
  const code = String((error as { code?: unknown })?.code ?? '')
  const said = `SQLite says: ${(error as Error)?.message ?? error}`
  const away = 'Restore it from a backup, or move it away to start an empty store (its runs would be lost)'
  if (code === 'SQLITE_NOTADB') {
    return new CordageError(
      'store_corrupt',
      `${file} is not a SQLite database (${said}). store-sqlite keeps runs in a database file it creates: point the store's "path" at a new file, or move this one away if it is a damaged database`,
      { cause: error },
    )
  }
  if (code.startsWith('SQLITE_CORRUPT')) {
    return new CordageError(
      'store_corrupt',
      `the database ${file} is damaged (${said}). ${away}; sqlite3 ${file} ".recover" may save what is left`,
      { cause: error },
    )
  }
  if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_LOCKED')) {
    return new CordageError(
      'plugin_start_failed',
      `the database ${file} is locked by another process (${said}); try again when it is done, or raise the store's busyTimeoutMs`,
      { cause: error },
    )
  }
  if (code.startsWith('SQLITE_')) {
    return new CordageError(
      'plugin_start_failed',
      `cannot open the database ${file} (${said}); check that it is a file this user can read and write, in a folder it can write (SQLite keeps -wal and -shm files beside it)`,
      { cause: error },
    )
  }
  return new CordageError('plugin_start_failed', `cannot open the database ${file}: ${(error as Error)?.message ?? error}`, {
    cause: error,
  })
}
