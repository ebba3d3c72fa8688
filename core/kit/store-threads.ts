/**
 * @module store-threads
 * The checks every store makes for threads and artifacts (store contract 2.3.0), so that memory,
 * SQLite and PostgreSQL refuse the same inputs with the same codes and words:
 *
 * - {@link checkThreadLink} and {@link threadRefusal}: a run that registers as a turn of a thread, and
 *   whether the thread takes that turn now (the store looks the thread up in its append transaction
 *   and asks this; the answer is the same whatever the store).
 * - {@link checkArtifactInput}, {@link parseArtifactRef}, {@link checkArtifactRange}: blobs by content.
 *   The ref names the visibility and the content: `artifact:sha256:<hex>` (shown in the UI) or
 *   `audit:sha256:<hex>` (raw content a guardrail redacted, for the audit view), so the same bytes kept
 *   at both visibilities are two blobs, and a ref alone says which view may show it.
 * - {@link checkedArtifactRow}, {@link checkedThreadRow}: what a store reads back is a trust boundary,
 *   as its events are: a row that does not hold together is `store_corrupt`, never passed on.
 */
import { createHash } from 'node:crypto'
import { CordageError } from '../contracts/errors.ts'
import type { RunEvent } from '../contracts/events.ts'
import type { ArtifactRef, RunStatus, TerminalStatus } from '../contracts/data.ts'
import type { StoredArtifact, ThreadSummary, ThreadTurn } from '../contracts/services/store.ts'

/** A thread id: 1..128 of letters, digits and `. _ : -` (it goes into file names, URLs and SQL keys). */
export const ThreadIdPattern = /^[A-Za-z0-9._:-]{1,128}$/
/** The largest blob `putArtifact` takes. */
export const MaxArtifactBytes = 64 * 1024 * 1024
/** The most bytes one `readArtifact` range returns. */
export const MaxArtifactRead = 16 * 1024 * 1024
/** `artifact:sha256:<hex>` (visibility ui) or `audit:sha256:<hex>` (visibility audit). */
export const ArtifactRefPattern = /^(artifact|audit):sha256:([0-9a-f]{64})$/
const MediaTypePattern =
  /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,62}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,62}(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"\\\r\n]*"|[A-Za-z0-9!#$&^_.+-]+))*$/
const terminal: readonly TerminalStatus[] = ['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED']
const statuses: readonly RunStatus[] = [
  'CREATED',
  'RUNNING',
  'WAITING_APPROVAL',
  'WAITING_USER',
  'WAITING_RECONCILIATION',
  'SUSPENDED',
  'CANCELLING',
  ...terminal,
]

/**
 * A thread id given to a read (`threadTurns`, `thread`), checked.
 * @throws CordageError `invalid_input`
 */
export function checkThreadId(threadId: unknown, where: string): string {
  if (typeof threadId !== 'string' || !ThreadIdPattern.test(threadId))
    throw new CordageError(
      'invalid_input',
      `${where}: ${JSON.stringify(typeof threadId === 'string' ? threadId.slice(0, 200) : threadId)} is not a thread id (1 to 128 of [A-Za-z0-9._:-])`,
    )
  return threadId
}

export type ThreadAppend = { id: string; turn: number; agent: string }

/**
 * `AppendOptions.thread` as given, checked before the store looks anything up: only for a new run
 * (`expectedSeq` 0), a well-formed id and turn, and the agent the run starts as.
 * @throws CordageError `invalid_input`
 */
export function checkThreadLink(runId: string, thread: unknown, expectedSeq: number, first: RunEvent | undefined): ThreadAppend {
  const bad = (problem: string) =>
    new CordageError('invalid_input', `run ${runId}: the thread it joins ${problem}`, { data: { runId, thread } })
  if (expectedSeq !== 0) throw bad(`is set on an append after seq ${expectedSeq}: a run joins a thread with its first events only`)
  if (typeof thread !== 'object' || thread === null || Array.isArray(thread)) throw bad('is not an object { id, turn, agent }')
  const { id, turn, agent } = thread as Record<string, unknown>
  const unknown = Object.keys(thread).filter((k) => k !== 'id' && k !== 'turn' && k !== 'agent')
  if (unknown.length) throw bad(`has the unknown key(s) ${unknown.join(', ')}; it takes id, turn and agent`)
  if (typeof id !== 'string' || !ThreadIdPattern.test(id))
    throw bad(`has the id ${JSON.stringify(id)}; a thread id is 1 to 128 letters, digits, '.', '_', ':' or '-'`)
  if (typeof turn !== 'number' || !Number.isSafeInteger(turn) || turn < 1)
    throw bad(`has the turn ${JSON.stringify(turn)}; turns count from 1`)
  if (typeof agent !== 'string' || !agent) throw bad(`names no agent (${JSON.stringify(agent)})`)
  const starts = first?.type === 'run/start' ? first.data.agent : undefined
  if (starts !== agent) throw bad(`is for agent ${agent}, but the run starts as agent ${starts}`)
  return { id, turn, agent }
}

/** What a store found of a thread in its append transaction, for {@link threadRefusal}. */
export interface ThreadFound {
  agent: string
  closed: boolean
  /** The run that is turn `turn` already, if any. */
  taken?: string
  /** The run of turn `turn - 1` and its status, if it exists. */
  previous?: { runId: string; status: RunStatus }
}

/**
 * Whether `thread` (undefined: no such thread) takes turn `link.turn` now; the error to throw when not.
 * Turn 1 creates the thread; turn n needs turn n - 1 to exist and to have ended, and turn n free.
 */
export function threadRefusal(link: ThreadAppend, thread: ThreadFound | undefined): CordageError | undefined {
  const { id, turn } = link
  const data = { threadId: id, turn }
  if (!thread) {
    if (turn === 1) return undefined
    return new CordageError('thread_busy', `thread ${id} has no turn ${turn - 1} (it does not exist yet): turn ${turn} cannot follow it`, {
      data: { ...data, missing: turn - 1 },
    })
  }
  if (thread.agent !== link.agent)
    return new CordageError('invalid_input', `thread ${id} belongs to agent ${thread.agent}, not ${link.agent}`, {
      data: { ...data, agent: thread.agent },
    })
  if (thread.closed)
    return new CordageError('thread_closed', `thread ${id} was closed: it takes no more turns; start a new thread`, { data })
  if (turn === 1)
    return new CordageError('thread_busy', `thread ${id} exists already: turn 1 was taken`, { data: { ...data, runId: thread.taken } })
  if (thread.taken)
    return new CordageError('thread_busy', `thread ${id} has a turn ${turn} already (run ${thread.taken})`, {
      data: { ...data, runId: thread.taken },
    })
  if (!thread.previous)
    return new CordageError('thread_busy', `thread ${id} has no turn ${turn - 1}: turn ${turn} cannot follow it`, {
      data: { ...data, missing: turn - 1 },
    })
  if (!isTerminalStatus(thread.previous.status))
    return new CordageError(
      'thread_busy',
      `thread ${id}: turn ${turn - 1} (run ${thread.previous.runId}) is ${thread.previous.status}, not ended; turn ${turn} waits for it`,
      { data: { ...data, previousRunId: thread.previous.runId, status: thread.previous.status } },
    )
  return undefined
}

export function isTerminalStatus(status: string): boolean {
  return (terminal as readonly string[]).includes(status)
}

/**
 * The close of a thread as given to `closeThread`, checked.
 * @throws CordageError `invalid_input`
 */
export function checkThreadClose(threadId: unknown, close: unknown): { threadId: string; by: string; at: number; reason?: string } {
  checkThreadId(threadId, 'closeThread')
  const c = (typeof close === 'object' && close !== null ? close : {}) as Record<string, unknown>
  if (typeof c.by !== 'string' || !c.by || c.by.length > 200)
    throw new CordageError('invalid_input', `closeThread ${threadId}: "by" must name who closes it (1 to 200 characters)`)
  if (typeof c.at !== 'number' || !Number.isSafeInteger(c.at) || c.at < 0)
    throw new CordageError('invalid_input', `closeThread ${threadId}: "at" must be a time in epoch milliseconds`)
  if (c.reason !== undefined && (typeof c.reason !== 'string' || c.reason.length > 2000))
    throw new CordageError('invalid_input', `closeThread ${threadId}: "reason" must be a string of at most 2000 characters`)
  return { threadId: threadId as string, by: c.by, at: c.at, reason: c.reason as string | undefined }
}

/** The limit of `threads()`, checked (default 100). */
export function threadListLimit(limit: unknown): number {
  if (limit === undefined) return 100
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > 10_000)
    throw new CordageError('invalid_input', `threads: limit ${JSON.stringify(limit)} must be a whole number from 1 to 10000`)
  return limit
}

export function artifactRefOf(sha256: string, visibility: 'ui' | 'audit'): string {
  return `${visibility === 'audit' ? 'audit' : 'artifact'}:sha256:${sha256}`
}

/**
 * A ref, checked: its visibility and content hash.
 * @throws CordageError `invalid_input` for anything but `artifact:sha256:<64 hex>` or `audit:sha256:<64 hex>`
 */
export function parseArtifactRef(ref: unknown): { ref: string; sha256: string; visibility: 'ui' | 'audit' } {
  const match = typeof ref === 'string' ? ArtifactRefPattern.exec(ref) : null
  if (!match)
    throw new CordageError(
      'invalid_input',
      `${JSON.stringify(typeof ref === 'string' ? ref.slice(0, 200) : ref)} is not an artifact ref: it is artifact:sha256:<64 lowercase hex> or audit:sha256:<64 lowercase hex>`,
    )
  return { ref: match[0], sha256: match[2], visibility: match[1] === 'audit' ? 'audit' : 'ui' }
}

export interface ArtifactInput {
  runId: string
  actionId?: string
  bytes: Uint8Array
  mediaType: string
  visibility: 'ui' | 'audit'
  sha256: string
  ref: string
}

/**
 * `putArtifact`'s argument, checked, with its hash and ref.
 * @throws CordageError `invalid_input`
 */
export function checkArtifactInput(input: unknown): ArtifactInput {
  const bad = (problem: string) => new CordageError('invalid_input', `putArtifact: ${problem}`)
  if (typeof input !== 'object' || input === null) throw bad('takes { runId, actionId?, bytes, mediaType, visibility? }')
  const a = input as Record<string, unknown>
  if (typeof a.runId !== 'string' || !a.runId) throw bad(`runId ${JSON.stringify(a.runId)} is not a run id`)
  if (a.actionId !== undefined && (typeof a.actionId !== 'string' || !a.actionId || a.actionId.length > 200))
    throw bad(`actionId ${JSON.stringify(a.actionId)} must be a non-empty string of at most 200 characters`)
  if (!(a.bytes instanceof Uint8Array)) throw bad('bytes must be a Uint8Array')
  if (a.bytes.byteLength > MaxArtifactBytes)
    throw bad(`${a.bytes.byteLength} bytes is more than the ${MaxArtifactBytes} (64 MiB) an artifact may hold`)
  if (typeof a.mediaType !== 'string' || a.mediaType.length > 100 || !MediaTypePattern.test(a.mediaType))
    throw bad(
      `mediaType ${JSON.stringify(a.mediaType)} is not a media type such as text/plain or application/json (at most 100 characters)`,
    )
  if (a.visibility !== undefined && a.visibility !== 'ui' && a.visibility !== 'audit')
    throw bad(`visibility ${JSON.stringify(a.visibility)} is not ui or audit`)
  const visibility = a.visibility ?? 'ui'
  const sha256 = sha256Hex(a.bytes)
  return {
    runId: a.runId,
    actionId: a.actionId,
    bytes: a.bytes,
    mediaType: a.mediaType,
    visibility,
    sha256,
    ref: artifactRefOf(sha256, visibility),
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/**
 * A read range, checked (undefined: the whole blob).
 * @throws CordageError `invalid_input`
 */
export function checkArtifactRange(range: unknown): { offset: number; length: number } | undefined {
  if (range === undefined) return undefined
  const r = (typeof range === 'object' && range !== null ? range : {}) as Record<string, unknown>
  const whole = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
  if (!whole(r.offset) || !whole(r.length))
    throw new CordageError('invalid_input', `readArtifact: the range ${JSON.stringify(range)} needs offset and length, whole numbers >= 0`)
  if ((r.length as number) > MaxArtifactRead)
    throw new CordageError(
      'invalid_input',
      `readArtifact: length ${r.length} is more than the ${MaxArtifactRead} bytes (16 MiB) one read returns; read in ranges`,
    )
  return { offset: r.offset as number, length: r.length as number }
}

/** The error of a stored artifact that does not hold together. */
export function artifactCorrupt(ref: string, problem: string): CordageError {
  return new CordageError(
    'store_corrupt',
    `artifact ${ref}: ${problem}. The store was damaged or edited after it was written: do not trust this artifact; restore the store from a backup`,
    { data: { ref, problem } },
  )
}

/** The bytes of a whole read, checked against the hash in their ref. */
export function checkedArtifactBytes(ref: string, bytes: Uint8Array): Uint8Array {
  const { sha256 } = parseArtifactRef(ref)
  const found = sha256Hex(bytes)
  if (found !== sha256) throw artifactCorrupt(ref, `its stored bytes hash to sha256 ${found}`)
  return bytes
}

/** One stored artifact and its first listing, as a store read them (the columns as they came). */
export interface StoredArtifactRow {
  ref: unknown
  bytes: unknown
  mediaType: unknown
  runId: unknown
  actionId: unknown
  createdAt: unknown
}

/**
 * A stored artifact's row, checked: the ref is well formed and its hash and visibility are what the
 * metadata says, the size a whole number within bounds, the media type one putArtifact would take.
 * @throws CordageError `store_corrupt`
 */
export function checkedArtifactRow(row: StoredArtifactRow): StoredArtifact {
  const ref = String(row.ref)
  let parsed: ReturnType<typeof parseArtifactRef>
  try {
    parsed = parseArtifactRef(row.ref)
  } catch {
    throw artifactCorrupt(ref.slice(0, 200), 'its stored ref is malformed')
  }
  const size = Number(row.bytes)
  if (!Number.isSafeInteger(size) || size < 0 || size > MaxArtifactBytes)
    throw artifactCorrupt(ref, `its stored size ${row.bytes} is impossible`)
  if (typeof row.mediaType !== 'string' || row.mediaType.length > 100 || !MediaTypePattern.test(row.mediaType))
    throw artifactCorrupt(ref, 'its stored media type is malformed')
  if (typeof row.runId !== 'string' || !row.runId) throw artifactCorrupt(ref, 'its listing names no run')
  if (row.actionId !== null && row.actionId !== undefined && row.actionId !== '' && typeof row.actionId !== 'string')
    throw artifactCorrupt(ref, 'its listing has a malformed action id')
  const createdAt = Number(row.createdAt)
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw artifactCorrupt(ref, 'its listing has a malformed time')
  return {
    ref: parsed.ref,
    sha256: parsed.sha256,
    bytes: size,
    mediaType: row.mediaType,
    visibility: parsed.visibility,
    runId: row.runId,
    ...(typeof row.actionId === 'string' && row.actionId ? { actionId: row.actionId } : {}),
    createdAt,
  }
}

/** A stored run status, checked: a status the store did not write is `store_corrupt`. */
export function checkedStatus(runId: string, status: unknown): RunStatus {
  if (typeof status !== 'string' || !(statuses as readonly string[]).includes(status))
    throw new CordageError(
      'store_corrupt',
      `run ${runId}: its stored status ${JSON.stringify(status)} is not a run status; restore the store from a backup`,
      {
        data: { runId },
      },
    )
  return status as RunStatus
}

/** One thread's row and the aggregate of its runs, as a store read them. */
export interface StoredThreadRow {
  threadId: unknown
  agent: unknown
  turns: unknown
  lastRunId: unknown
  lastStatus: unknown
  createdAt: unknown
  updatedAt: unknown
  closedBy: unknown
  closedAt: unknown
  closedReason: unknown
}

/**
 * A thread's row, checked.
 * @throws CordageError `store_corrupt`
 */
export function checkedThreadRow(row: StoredThreadRow): ThreadSummary {
  const id = String(row.threadId)
  const corrupt = (problem: string) =>
    new CordageError('store_corrupt', `thread ${id.slice(0, 200)}: ${problem}; the store was damaged or edited; restore it from a backup`, {
      data: { threadId: id },
    })
  if (typeof row.threadId !== 'string' || !ThreadIdPattern.test(row.threadId)) throw corrupt('its stored id is malformed')
  if (typeof row.agent !== 'string' || !row.agent) throw corrupt('its stored agent is malformed')
  const turns = Number(row.turns)
  if (!Number.isSafeInteger(turns) || turns < 1) throw corrupt(`it has ${row.turns} turns stored`)
  if (typeof row.lastRunId !== 'string' || !row.lastRunId) throw corrupt('its last turn names no run')
  const createdAt = Number(row.createdAt)
  const updatedAt = Number(row.updatedAt)
  if (!Number.isSafeInteger(createdAt) || !Number.isSafeInteger(updatedAt)) throw corrupt('its stored times are malformed')
  const summary: ThreadSummary = {
    threadId: row.threadId,
    agent: row.agent,
    turns,
    lastRunId: row.lastRunId,
    lastStatus: checkedStatus(row.lastRunId, row.lastStatus),
    createdAt,
    updatedAt,
  }
  if (row.closedBy !== null && row.closedBy !== undefined) {
    const at = Number(row.closedAt)
    if (typeof row.closedBy !== 'string' || !Number.isSafeInteger(at)) throw corrupt('its stored close is malformed')
    summary.closed = { by: row.closedBy, at, ...(typeof row.closedReason === 'string' ? { reason: row.closedReason } : {}) }
  }
  return summary
}

/** One turn's row (the run's columns), as a store read it. */
export interface StoredTurnRow {
  turn: unknown
  runId: unknown
  agent: unknown
  task: unknown
  status: unknown
  failureCode: unknown
  createdAt: unknown
  updatedAt: unknown
}

/**
 * A thread's turns as read (in turn order), checked: numbered 1..n without a gap, each a run with a
 * status the store writes.
 * @throws CordageError `store_corrupt`
 */
export function checkedThreadTurns(threadId: string, rows: readonly StoredTurnRow[]): ThreadTurn[] {
  return rows.map((row, i) => {
    const turn = Number(row.turn)
    const corrupt = (problem: string) =>
      new CordageError(
        'store_corrupt',
        `thread ${threadId}, turn ${i + 1}: ${problem}; the store was damaged or edited; restore it from a backup`,
        {
          data: { threadId, turn: i + 1 },
        },
      )
    if (turn !== i + 1) throw corrupt(`the turns stored go ${rows.map((r) => r.turn).join(', ')}, with a gap`)
    if (typeof row.runId !== 'string' || !row.runId || typeof row.agent !== 'string' || typeof row.task !== 'string')
      throw corrupt('its run is malformed')
    const createdAt = Number(row.createdAt)
    const updatedAt = Number(row.updatedAt)
    if (!Number.isSafeInteger(createdAt) || !Number.isSafeInteger(updatedAt)) throw corrupt('its stored times are malformed')
    return {
      threadId,
      turn,
      runId: row.runId,
      agent: row.agent,
      task: row.task,
      status: checkedStatus(row.runId, row.status),
      ...(typeof row.failureCode === 'string' && row.failureCode ? { failureCode: row.failureCode as ThreadTurn['failureCode'] } : {}),
      createdAt,
      updatedAt,
    }
  })
}

/** The ref metadata of a stored artifact, without its listing. */
export function artifactRefOfStored(a: StoredArtifact): ArtifactRef {
  return { ref: a.ref, sha256: a.sha256, bytes: a.bytes, mediaType: a.mediaType, visibility: a.visibility }
}
