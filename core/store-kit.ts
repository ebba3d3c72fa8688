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
 *   `verify` recomputes it with {@link HistoryChecker}.
 *
 * What the chain proves, and what not, is in docs/durability.md#integrity-of-the-log.
 */
import * as crypto from 'node:crypto'
import { CordageError } from './errors.ts'
import type { RunEvent } from './events.ts'
import type { HistoryCheck } from './services/store.ts'

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
  return new CordageError('store_corrupt', `run ${runId}, seq ${seq}: ${problem}. The stored log was damaged or edited after it was written: do not resume the run; cordage verify ${runId} shows the first bad event; restore the store from a backup`, { data: { runId, seq, problem } })
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
    throw storeCorrupt(runId, seq, `the snapshot of run state taken at seq ${seq} is not valid JSON (${state.length} characters)`)
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
    throw new CordageError('plugin_start_failed', `${store}: the chain key in ${variable} has ${value.length} characters; use ${MinChainKeyLength} or more (for example: openssl rand -hex 32), or unset ${variable} to chain without a key`)
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
 * Checks a run's stored history row by row (feed it the rows in seq order, then ask {@link finish}),
 * so a long run can be read in pages. Every row is checked as {@link eventsFromRows} checks it, and
 * its chain recomputed from the body as stored:
 *
 * - rows without a chain are allowed only as a prefix (events stored before the store chained, which
 *   `unchainedUpTo` reports); the first chained row links to the empty string;
 * - after a chained row, every row must have a chain, and each must equal `H(previous + "\n" + body)`.
 *
 * The first problem is the answer (`firstBad`); a damaged history is a result, not an error.
 */
export class HistoryChecker {
  private expected = 1
  private count = 0
  private previous = ''
  private chainedFrom: number | undefined
  private bad: { seq: number; problem: string } | undefined

  constructor(readonly runId: string, private readonly key?: string) {}

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
      if (this.chainedFrom !== undefined) this.bad = { seq: row.seq, problem: `it has no chain hash, but seq ${this.chainedFrom} before it was chained: its chain was removed` }
      return
    }
    this.chainedFrom ??= row.seq
    const link = chainHash(this.previous, row.body, this.key)
    if (row.chain !== link) {
      // At the first link, another key (or a key where none is set now) fails the same way as an edit.
      const first = this.chainedFrom === row.seq
        ? this.key === undefined ? '; or the run was chained under a key, and this store has none set to check it with' : '; or the run was chained without a key, or under another one'
        : ''
      this.bad = { seq: row.seq, problem: `its chain hash does not match its body and the chain before it${this.key === undefined ? '' : ' under the key'}: the event was changed, or events before it were removed, inserted or re-chained${this.key === undefined ? '' : ' without the key'}${first}` }
      return
    }
    this.previous = link
  }

  /** The result, given the run's last seq as the store recorded it (read before the rows). */
  finish(lastSeq: number): HistoryCheck {
    const result: HistoryCheck = { runId: this.runId, events: this.count, chained: true, keyed: this.key !== undefined }
    if (!this.bad && this.expected <= lastSeq) this.bad = { seq: this.expected, problem: tailMissing(this.expected, lastSeq) }
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

function missing(expected: number, next: number): string {
  return `the event at seq ${expected} is missing: the next stored event is seq ${next}`
}

function tailMissing(expected: number, lastSeq: number): string {
  return `the event at seq ${expected} is missing: the run's last seq is ${lastSeq}, but its stored events end at ${expected - 1}`
}
