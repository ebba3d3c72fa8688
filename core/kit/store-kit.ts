/**
 * @module store-kit
 * What the stores that keep events as text (store-sqlite, store-postgres) share, so that both check a
 * run's stored history with the same code:
 *
 * - {@link eventsFromRows}: turning stored rows back into events, refusing a history that does not hold
 *   together (a body that does not parse, an event stored under another seq or of another run, a gap)
 *   with `store_corrupt`, naming the run and the first bad seq. A run loaded from a damaged log would
 *   otherwise be replayed into a state that never happened, or fail later with a stack trace.
 * - {@link chainHash} and {@link HistoryChecker}: the hash chain. A store that chains computes, in its
 *   append transaction, `chain_n = H(chain_{n-1} + "\n" + body_n)` over the exact text it writes
 *   (`chain_0` is the empty string; H is SHA-256, or HMAC-SHA-256 under a key), and keeps it beside the
 *   body. Nothing is serialised again: the chain costs one hash of text the store writes anyway.
 *   `verify` recomputes it with {@link HistoryChecker}; every load recomputes the links of the rows it
 *   returns with {@link chainedEventsFromRows}, so an edit refused by `verify` is refused by a resume too.
 * - {@link snapshotLink} and {@link checkedSnapshot}: a snapshot of run state is linked to the chain at
 *   its seq, `H(chain_seq + "\nsnapshot\n" + state text)`, so the state a resume starts from is checked
 *   like the events after it.
 *
 * What the chain proves, and what not, is in docs/concepts/durability.md#integrity-of-the-log.
 */
import * as crypto from 'node:crypto'
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { HistoryCheck } from '../contracts/services/store.ts'

/** One stored event: its seq column and its body as written. */
export interface StoredEventRow {
  seq: number
  body: string
}

/** A stored event with its chain hash (null for an event stored before the store chained). */
export interface ChainedEventRow extends StoredEventRow {
  chain: string | null
}

/** A chain key shorter than this is refused: it could be guessed. */
export const MinChainKeyLength = 16

/**
 * The error of a stored history that does not hold together: `store_corrupt`, with
 * `data: { runId, seq, problem }`.
 */
export function storeCorrupt(runId: string, seq: number, problem: string): CordageError {
  return new CordageError(
    'store_corrupt',
    `run ${runId}, seq ${seq}: ${problem}. The stored log was damaged or edited after it was written: do not resume the run; cordage verify ${runId} shows the first bad event; restore the store from a backup`,
    { data: { runId, seq, problem } },
  )
}

/**
 * The events of stored rows (in seq order, as read), checked: each row's body parses to an event
 * object with a string `type`, whose `seq` is the row's and whose `runId` is the run's, and the rows
 * continue without a gap from `after + 1`. When `lastSeq` (the run's last seq as the store recorded
 * it, read before the rows) is given, the rows must reach it: a missing last event is a gap too.
 * Rows beyond it are fine (a writer appended in between).
 * @throws CordageError `store_corrupt` at the first bad seq
 */
export function eventsFromRows(runId: string, rows: readonly StoredEventRow[], after: number, lastSeq?: number): RunEvent[] {
  const events = new Array<RunEvent>(rows.length)
  let expected = after + 1
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]
    if (row.seq !== expected) throw storeCorrupt(runId, expected, missing(expected, row.seq))
    const event = parseRow(runId, row.seq, row.body)
    if (typeof event === 'string') throw storeCorrupt(runId, row.seq, event)
    events[i] = event
    expected++
  }
  if (lastSeq !== undefined && expected <= lastSeq) throw storeCorrupt(runId, expected, tailMissing(expected, lastSeq))
  return events
}

/**
 * The state of a stored snapshot (taken at `seq`), parsed.
 * @throws CordageError `store_corrupt` when it is not JSON
 */
export function snapshotFromRow(runId: string, seq: number, state: string): unknown {
  try {
    return JSON.parse(state)
  } catch {
    throw storeCorrupt(runId, seq, snapshotNotJson(seq, state))
  }
}

/**
 * The chain key a store reads from the environment variable `variable` at start: undefined when it is
 * unset or empty (the chain is then plain SHA-256), the value with surrounding white space removed
 * otherwise (as runs scrub it: host/secrets.ts).
 * @throws CordageError `plugin_start_failed` for a key shorter than {@link MinChainKeyLength}
 */
export function chainKeyOf(variable: string, store: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = Object.hasOwn(env, variable) ? env[variable]?.trim() : undefined
  if (!value) return undefined
  if (value.length < MinChainKeyLength) {
    throw new CordageError(
      'plugin_start_failed',
      `${store}: the chain key in ${variable} has ${value.length} characters; use ${MinChainKeyLength} or more (for example: openssl rand -hex 32), or unset ${variable} to chain without a key`,
    )
  }
  return value
}

/** Node's one-shot hash (20.12 and later): about half the cost of a Hash object for a short text. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash

/** The next link: `H(previous + "\n" + body)`, hex; HMAC-SHA-256 under `key`, else SHA-256 (of the UTF-8 text). */
export function chainHash(previous: string, body: string, key?: string): string {
  // The joined text in one call: each call into native code costs more than the copy.
  const text = `${previous}\n${body}`
  if (key !== undefined) return crypto.createHmac('sha256', key).update(text).digest('hex')
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex')
}

/**
 * Where the chain of a read that starts after `after` (> 0) picks up: the link of the event at `after`.
 * A store reads it in the same statement as the rows, or after them, never before: an append adds the
 * rows after an event only once that event is there, so a start read first could be missing for rows
 * read next. It says:
 *
 * - `link`: the link of the event at `after`; `null` when that event has no link (stored before the
 *   store chained, or its link was removed); `undefined` when there is no event at `after`.
 * - `chainedBefore`: only when `link` is null, the last seq before `after` that has a link, if any (then
 *   the link at `after` was removed: an unchained event is allowed only before the first chained one).
 *
 * A read from the start (`after` 0) begins at the empty link, whatever `start` says.
 */
export interface ChainStart {
  link: string | null | undefined
  chainedBefore?: number
}

/**
 * The events of stored rows (in seq order, as read), checked as {@link eventsFromRows} checks them, and
 * each row's link recomputed from its body as stored, on from `start` (the link at `after`, see
 * {@link ChainStart}), as {@link HistoryChecker} does: rows without a link only before the first
 * chained one, and each link `H(previous + "\n" + body)` under `key` when the store has one. A row
 * whose link does not match, a row without a link after a chained one, or a read that cannot start on
 * the chain (the event at `after` missing, or its link removed) is `store_corrupt` at the first bad seq,
 * in the words `verify` uses. A read from the start names the seq `verify` names. A read after `after`
 * checks what it returns, on from the stored link at `after`: an edit of an event before it is not its
 * to find (a load or `verify` finds it), and a changed link at `after` is named at the first seq it
 * returns (`verify` names `after`). Costs one hash per row, of text the store read anyway.
 * @throws CordageError `store_corrupt` at the first bad seq
 */
export function chainedEventsFromRows(
  runId: string,
  rows: readonly ChainedEventRow[],
  after: number,
  lastSeq: number | undefined,
  start: ChainStart,
  key?: string,
): RunEvent[] {
  let previous = ''
  let chainedFrom: number | undefined
  if (after > 0) {
    if (start.link === undefined) {
      // Nothing to chain the rows to; with nothing to return, only a known event that is gone is damage.
      if (rows.length || (lastSeq !== undefined && after <= lastSeq))
        throw storeCorrupt(runId, after, `the event at seq ${after} is missing: the events after it cannot be checked against the chain`)
      return []
    }
    if (start.link === null) {
      if (start.chainedBefore !== undefined) throw storeCorrupt(runId, start.chainedBefore + 1, removed(start.chainedBefore + 1))
    } else {
      previous = start.link
      chainedFrom = after
    }
  }
  const events = new Array<RunEvent>(rows.length)
  let expected = after + 1
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]
    if (row.seq !== expected) throw storeCorrupt(runId, expected, missing(expected, row.seq))
    const event = parseRow(runId, row.seq, row.body)
    if (typeof event === 'string') throw storeCorrupt(runId, row.seq, event)
    if (row.chain === null) {
      if (chainedFrom !== undefined) throw storeCorrupt(runId, row.seq, removed(row.seq))
    } else {
      chainedFrom ??= row.seq
      const link = chainHash(previous, row.body, key)
      if (row.chain !== link) throw storeCorrupt(runId, row.seq, mismatch(key, chainedFrom === row.seq))
      previous = link
    }
    events[i] = event
    expected++
  }
  if (lastSeq !== undefined && expected <= lastSeq) throw storeCorrupt(runId, expected, tailMissing(expected, lastSeq))
  return events
}

/** A stored snapshot of run state: its seq, version, the text stored and its link (null: none). */
export interface StoredSnapshotRow {
  seq: number
  version: number
  state: string
  chain: string | null
}

/**
 * The link of a snapshot taken at a chained event: `H(eventLink + "\nsnapshot\n" + state)`, over the
 * exact text stored and under the chain's key, so it cannot be made for another state, another seq or
 * another run without the key. The word sets it apart from the links of events, `H(link + "\n" +
 * body)`: a body is a JSON object, it never begins with `snapshot`, so the next event's body and link
 * cannot pass for a snapshot, nor a snapshot for an event.
 */
export function snapshotLink(eventLink: string, state: string, key?: string): string {
  return chainHash(`${eventLink}\nsnapshot`, state, key)
}

/**
 * A stored snapshot, checked against the chain and parsed. `eventLink` is the link of the event at the
 * snapshot's seq, read with it: `null` when that event has no link, `undefined` when there is no event
 * at that seq. A store that chains takes a snapshot only at the last event of an append, which it has
 * just chained, and links every snapshot it keeps ({@link snapshotLink}); snapshots kept before it
 * linked them were dropped when it migrated. So a snapshot is trusted only when:
 *
 * - its seq is an event of the run, and that event is chained;
 * - its link is there and matches its text under the key;
 * - its text parses.
 *
 * A snapshot that fails is not trusted: `store_corrupt` at its seq. It is refused rather than skipped:
 * a link that does not match is proof that the database was written behind the store's back, and the
 * answer must be the one `verify` gives (which reports it), not a resume that goes on quietly.
 * The text is parsed once, after the link is checked.
 * @throws CordageError `store_corrupt` at the snapshot's seq
 */
export function checkedSnapshot(
  runId: string,
  row: StoredSnapshotRow,
  eventLink: string | null | undefined,
  key?: string,
): { seq: number; version: number; state: unknown } {
  const problem = snapshotLinkProblem(row, eventLink, key)
  if (problem !== undefined) throw storeCorrupt(runId, row.seq, problem)
  return { seq: row.seq, version: row.version, state: snapshotFromRow(runId, row.seq, row.state) }
}

/** Why a snapshot's link is not trusted (see {@link checkedSnapshot}), or undefined. */
function snapshotLinkProblem(row: StoredSnapshotRow, eventLink: string | null | undefined, key: string | undefined): string | undefined {
  const what = `the snapshot of run state taken at seq ${row.seq}`
  if (eventLink === undefined) return `${what} is of an event the run does not have`
  if (eventLink === null)
    return `${what} is of an event that has no chain hash: the event's chain was removed (a snapshot is only taken at an event the store chained)`
  if (row.chain === null)
    return `${what} has no link, but the event at its seq is chained: its link was removed (this store links every snapshot it keeps)`
  if (row.chain !== snapshotLink(eventLink, row.state, key))
    return `${what} does not match its link${key === undefined ? '' : ' under the key'}: it was changed after it was written${key === undefined ? '' : ', or linked without the key'}; do not resume from it`
  return undefined
}

/** Why a snapshot is not trusted, its text included (for {@link HistoryChecker}), or undefined. */
function snapshotProblem(row: StoredSnapshotRow, eventLink: string | null | undefined, key: string | undefined): string | undefined {
  const problem = snapshotLinkProblem(row, eventLink, key)
  if (problem !== undefined) return problem
  try {
    JSON.parse(row.state)
  } catch {
    return snapshotNotJson(row.seq, row.state)
  }
  return undefined
}

/**
 * Checks a run's stored history row by row (feed it the rows in seq order, then ask {@link finish}),
 * so a long run can be read in pages. Every row is checked as {@link eventsFromRows} checks it, and
 * its chain recomputed from the body as stored:
 *
 * - rows without a chain are allowed only as a prefix (events stored before the store chained, which
 *   `unchainedUpTo` reports); the first chained row links to the empty string;
 * - after a chained row, every row must have a chain, and each must equal `H(previous + "\n" + body)`;
 * - a snapshot given to {@link snapshot} (before the rows) is checked as a load checks it
 *   ({@link checkedSnapshot}) when its seq is reached, against the link recomputed there.
 *
 * The first problem is the answer (`firstBad`); a damaged history is a result, not an error.
 */
export class HistoryChecker {
  private expected = 1
  private count = 0
  private previous = ''
  private chainedFrom: number | undefined
  private bad: { seq: number; problem: string } | undefined
  private snap: StoredSnapshotRow | undefined
  private snapChecked = false

  constructor(
    readonly runId: string,
    private readonly key?: string,
  ) {}

  /**
   * The run's stored snapshot, to check at its seq; give it before the rows (read before them, so the
   * rows reach its seq even when an append came in between).
   */
  snapshot(row: StoredSnapshotRow): void {
    this.snap = row
  }

  /** At the event `seq` (fine so far), with its link: the snapshot, when it was taken there. */
  private checkSnapshot(seq: number, link: string | null): void {
    if (this.snap?.seq !== seq) return
    this.snapChecked = true
    const problem = snapshotProblem(this.snap, link, this.key)
    if (problem !== undefined) this.bad = { seq, problem }
  }

  add(row: ChainedEventRow): void {
    this.count++
    if (this.bad) return
    if (row.seq !== this.expected) {
      this.bad = { seq: this.expected, problem: missing(this.expected, row.seq) }
      return
    }
    this.expected++
    const event = parseRow(this.runId, row.seq, row.body)
    if (typeof event === 'string') {
      this.bad = { seq: row.seq, problem: event }
      return
    }
    if (row.chain === null) {
      if (this.chainedFrom !== undefined) this.bad = { seq: row.seq, problem: removed(row.seq) }
      else this.checkSnapshot(row.seq, null)
      return
    }
    this.chainedFrom ??= row.seq
    const link = chainHash(this.previous, row.body, this.key)
    if (row.chain !== link) {
      this.bad = { seq: row.seq, problem: mismatch(this.key, this.chainedFrom === row.seq) }
      return
    }
    this.previous = link
    this.checkSnapshot(row.seq, link)
  }

  /** The result, given the run's last seq as the store recorded it (read before the rows). */
  finish(lastSeq: number): HistoryCheck {
    const result: HistoryCheck = { runId: this.runId, events: this.count, chained: true, keyed: this.key !== undefined }
    if (!this.bad && this.expected <= lastSeq) this.bad = { seq: this.expected, problem: tailMissing(this.expected, lastSeq) }
    // A snapshot no stored event was found for (beyond them, or at no seq an event can have).
    if (!this.bad && this.snap && !this.snapChecked)
      this.bad = { seq: this.snap.seq, problem: snapshotProblem(this.snap, undefined, this.key)! }
    const unchained = (this.chainedFrom ?? this.expected) - 1
    if (unchained > 0) result.unchainedUpTo = unchained
    if (this.bad) result.firstBad = this.bad
    else if (this.chainedFrom !== undefined) result.head = this.previous
    return result
  }
}

// Sealed like the kernel's other classes: a plugin sharing this module cannot make a check pass.
Object.freeze(HistoryChecker.prototype)

/** The event a row holds, or why it holds none of this run at this seq. */
function parseRow(runId: string, seq: number, body: string): RunEvent | string {
  let event: unknown
  try {
    event = JSON.parse(body)
  } catch {
    return `its stored body is not valid JSON (${body.length} characters)`
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return 'its stored body is not an event object'
  const e = event as Partial<RunEvent>
  if (typeof e.type !== 'string') return 'its stored body has no event type'
  if (e.seq !== seq) return `the event stored at seq ${seq} says it is seq ${JSON.stringify(e.seq)}: events were renumbered or swapped`
  if (e.runId !== runId) return `the event stored at seq ${seq} belongs to run ${JSON.stringify(e.runId)}`
  return event as RunEvent
}

/** The row at `seq` has no link, but the one before it has (so every read names the same seq). */
function removed(seq: number): string {
  return `it has no chain hash, but seq ${seq - 1} before it was chained: its chain was removed`
}

/** A link that does not match; at the first link, another key (or a key where none is set now) fails the same way as an edit. */
function mismatch(key: string | undefined, first: boolean): string {
  const hint = first
    ? key === undefined
      ? '; or the run was chained under a key, and this store has none set to check it with'
      : '; or the run was chained without a key, or under another one'
    : ''
  return `its chain hash does not match its body and the chain before it${key === undefined ? '' : ' under the key'}: the event was changed, or events before it were removed, inserted or re-chained${key === undefined ? '' : ' without the key'}${hint}`
}

function snapshotNotJson(seq: number, state: string): string {
  return `the snapshot of run state taken at seq ${seq} is not valid JSON (${state.length} characters)`
}

function missing(expected: number, next: number): string {
  return `the event at seq ${expected} is missing: the next stored event is seq ${next}`
}

function tailMissing(expected: number, lastSeq: number): string {
  return `the event at seq ${expected} is missing: the run's last seq is ${lastSeq}, but its stored events end at ${expected - 1}`
}
