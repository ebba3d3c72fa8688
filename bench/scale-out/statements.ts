/**
 * Every SQL statement a process sends, counted by what it is for: pg's Client.query wrapped once per
 * process (store-postgres and the order book both go through it). The kinds name store-postgres's
 * statements by their text, so the counts can be compared line by line with postgres-store.ts.
 */
import pg from 'pg'

export interface Statement {
  kind: string
  /** Wall-clock milliseconds (comparable across processes of one machine) when the answer came. */
  at: number
  /** Round trip, milliseconds. */
  ms: number
  rows: number
  /** A write that commits on its own (not inside BEGIN ... COMMIT). */
  auto: boolean
  /** The run a successful claim returned. */
  runId?: string
}

const kinds: [RegExp, string][] = [
  [/^BEGIN/, 'tx: BEGIN'],
  [/^COMMIT/, 'tx: COMMIT'],
  [/^ROLLBACK/, 'tx: ROLLBACK'],
  [/^WITH candidate AS/, 'claimNext'],
  [/^UPDATE runs SET lease_expires/, 'renew'],
  [/^UPDATE runs SET lease_released = TRUE/, 'release'],
  [/^SELECT cancel_by/, 'cancel watch'],
  [/^SELECT runs\.\*, \(SELECT encode\(chain/, 'append: lock run row'],
  [/^INSERT INTO runs/, 'append: insert run'],
  [/^UPDATE runs SET status/, 'append: update run'],
  [/^INSERT INTO effects/, 'append: ledger intent'],
  [/^UPDATE effects SET status/, 'append: ledger outcome'],
  [/^SELECT \* FROM effects WHERE key = \$1 FOR UPDATE/, 'append: ledger key taken'],
  [/^SELECT \* FROM effects WHERE key = \$1$/, 'ledger: read entry'],
  [/^INSERT INTO events/, 'append: insert events'],
  [/^UPDATE runs SET cancel_by = NULL/, 'append: clear cancel'],
  [/^INSERT INTO snapshots/, 'append: snapshot'],
  [/^SELECT last_seq FROM runs/, 'load: last seq'],
  [/FROM snapshots s LEFT JOIN events/, 'load: snapshot'],
  [/^SELECT seq, .*FROM events/s, 'load: events'],
  [/^SELECT \*, .* FROM runs WHERE run_id = \$1 FOR UPDATE/s, 'claim by id'],
  [/pg_advisory_xact_lock|^CREATE |information_schema|\.meta |^SET LOCAL|^INSERT INTO \w+\.meta/, 'migrate'],
  [/^INSERT INTO \w+\.orders/, 'tool: order row'],
]

/** Statements that write and so commit (a WAL flush) when sent outside a transaction and they touch a row. */
const autoWrites = new Set(['claimNext', 'renew', 'release', 'tool: order row'])

export function classify(text: string): string {
  const sql = text.trim()
  for (const [pattern, kind] of kinds) if (pattern.test(sql)) return kind
  return `other: ${sql.slice(0, 50).replace(/\s+/g, ' ')}`
}

const wallNow = () => performance.timeOrigin + performance.now()
/** Per client in a transaction: its BEGIN, so a migration's BEGIN and COMMIT are counted as the migration's. */
const inTx = new WeakMap<object, { begin?: Statement; migrate: boolean }>()
const quiet = new WeakSet<object>()
let installed: Statement[] | undefined

type Callback = (error: Error | null, result?: pg.QueryResult) => void

/** Wrap pg's Client.query in this process (once); returns the list every statement is pushed to. */
export function countStatements(): Statement[] {
  if (installed) return installed
  const log: Statement[] = []
  const original = pg.Client.prototype.query as unknown as (this: pg.Client, ...args: unknown[]) => unknown
  const wrapped = function (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) {
    if (quiet.has(this)) return original.call(this, config, values, callback)
    const text = typeof config === 'string' ? config : String((config as { text?: string })?.text ?? '')
    let kind = classify(text)
    if (kind === 'tx: BEGIN') inTx.set(this, { migrate: false })
    const tx = inTx.get(this)
    if (tx && kind === 'migrate') {
      tx.migrate = true
      if (tx.begin) tx.begin.kind = 'migrate'
    }
    const auto = !tx && autoWrites.has(kind)
    if (kind === 'tx: COMMIT' || kind === 'tx: ROLLBACK') {
      if (tx?.migrate) kind = 'migrate'
      inTx.delete(this)
    }
    const started = performance.now()
    const note = (result?: pg.QueryResult) => {
      const rows = result?.rowCount ?? 0
      const entry: Statement = { kind, at: wallNow(), ms: performance.now() - started, rows, auto }
      if (kind === 'claimNext' && rows > 0) entry.runId = (result!.rows[0] as { run_id: string }).run_id
      if (kind === 'tx: BEGIN' && tx) tx.begin = entry
      log.push(entry)
    }
    const wrap =
      (cb: Callback): Callback =>
      (error, result) => {
        note(error ? undefined : result)
        cb(error, result)
      }
    if (typeof values === 'function') return original.call(this, config, wrap(values as Callback))
    if (typeof callback === 'function') return original.call(this, config, values, wrap(callback as Callback))
    return (original.call(this, config, values) as Promise<pg.QueryResult>).then(
      (result) => {
        note(result)
        return result
      },
      (error: unknown) => {
        note()
        throw error
      },
    )
  }
  pg.Client.prototype.query = wrapped as unknown as typeof pg.Client.prototype.query
  installed = log
  return log
}

/** A client whose statements are not counted (the bench's own bookkeeping). */
export function uncounted(client: pg.Client): pg.Client {
  quiet.add(client)
  return client
}
