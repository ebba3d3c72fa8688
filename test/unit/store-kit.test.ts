/**
 * core/kit/store-kit.ts: stored rows back into events, refusing a history that does not hold together,
 * and the hash chain that `verify` recomputes.
 */
import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import {
  chainedEventsFromRows,
  chainHash,
  chainKeyOf,
  checkedSnapshot,
  eventsFromRows,
  HistoryChecker,
  MinChainKeyLength,
  snapshotFromRow,
  snapshotLink,
  storeCorrupt,
  type ChainedEventRow,
  type ChainStart,
  type StoredSnapshotRow,
} from '../../core/kit/store-kit.ts'

const body = (seq: number, runId = 'r1', type = seq === 1 ? 'run/start' : 'step/start') => JSON.stringify({ type, seq, runId, time: seq })
const rows = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ({ seq: from + i, body: body(from + i) }))
const corrupt =
  (seq: number, problem: RegExp | string) => (e: Error & { code?: string; data?: { runId: string; seq: number; problem: string } }) => {
    assert.equal(e.code, 'store_corrupt')
    assert.equal(e.data?.runId, 'r1')
    assert.equal(e.data?.seq, seq)
    if (typeof problem === 'string') assert.equal(e.data?.problem, problem)
    else assert.match(e.data?.problem ?? '', problem)
    return true
  }

/** Rows chained as a store writes them. */
function chained(n: number, key?: string): ChainedEventRow[] {
  let previous = ''
  return rows(n).map((r) => {
    previous = chainHash(previous, r.body, key)
    return { ...r, chain: previous }
  })
}

function check(list: ChainedEventRow[], lastSeq = list.length, key?: string, snapshot?: StoredSnapshotRow) {
  const checker = new HistoryChecker('r1', key)
  if (snapshot) checker.snapshot(snapshot)
  for (const row of list) checker.add(row)
  return checker.finish(lastSeq)
}

const Key = 'k'.repeat(16)
const Unkeyed = {
  edited:
    'its chain hash does not match its body and the chain before it: the event was changed, or events before it were removed, inserted or re-chained',
  first:
    'its chain hash does not match its body and the chain before it: the event was changed, or events before it were removed, inserted or re-chained; or the run was chained under a key, and this store has none set to check it with',
}
const Keyed = {
  edited:
    'its chain hash does not match its body and the chain before it under the key: the event was changed, or events before it were removed, inserted or re-chained without the key',
  first:
    'its chain hash does not match its body and the chain before it under the key: the event was changed, or events before it were removed, inserted or re-chained without the key; or the run was chained without a key, or under another one',
}
const removedAt = (seq: number) => `it has no chain hash, but seq ${seq - 1} before it was chained: its chain was removed`
const seqs = (events: { seq: number }[]) => events.map((e) => e.seq)
/** Events 1..n as rows, and a snapshot of `state` taken at `seq`, linked as a store links it. */
const snapshotAt = (list: ChainedEventRow[], seq: number, state = '{"at":1}', key?: string): StoredSnapshotRow => ({
  seq,
  version: 1,
  state,
  chain: snapshotLink(list[seq - 1].chain!, state, key),
})

describe('storeCorrupt', () => {
  it('names the run, the seq and the problem, and says what to do', () => {
    const e = storeCorrupt('r1', 4, 'it is broken')
    assert.equal(e.code, 'store_corrupt')
    assert.deepEqual(e.data, { runId: 'r1', seq: 4, problem: 'it is broken' })
    assert.match(
      e.message,
      /^run r1, seq 4: it is broken\. The stored log was damaged or edited after it was written: do not resume the run; cordage verify r1 shows the first bad event; restore the store from a backup$/,
    )
  })
})

describe('eventsFromRows', () => {
  it('gives the events of rows that hold together, from any point', () => {
    assert.deepEqual(
      eventsFromRows('r1', rows(3), 0).map((e) => e.seq),
      [1, 2, 3],
    )
    assert.deepEqual(
      eventsFromRows('r1', rows(2, 5), 4, 6).map((e) => e.seq),
      [5, 6],
    )
    assert.deepEqual(eventsFromRows('r1', [], 0), [])
    assert.deepEqual(eventsFromRows('r1', rows(3), 0, 2).length, 3, 'rows beyond the recorded last seq are fine')
    assert.deepEqual(eventsFromRows('r1', rows(3), 0, 3).length, 3)
  })

  it('refuses a gap, naming the missing seq', () => {
    assert.throws(
      () => eventsFromRows('r1', [rows(1)[0], { seq: 3, body: body(3) }], 0),
      corrupt(2, 'the event at seq 2 is missing: the next stored event is seq 3'),
    )
    assert.throws(() => eventsFromRows('r1', rows(2, 2), 0), corrupt(1, 'the event at seq 1 is missing: the next stored event is seq 2'))
  })

  it('refuses a missing tail when the last seq is known', () => {
    assert.throws(
      () => eventsFromRows('r1', rows(2), 0, 4),
      corrupt(3, "the event at seq 3 is missing: the run's last seq is 4, but its stored events end at 2"),
    )
    assert.throws(() => eventsFromRows('r1', [], 0, 1), corrupt(1, /^the event at seq 1 is missing/))
  })

  it('refuses a body that is not an event of this run at this seq', () => {
    const at2 = (text: string) => [rows(1)[0], { seq: 2, body: text }]
    assert.throws(() => eventsFromRows('r1', at2('{oops'), 0), corrupt(2, 'its stored body is not valid JSON (5 characters)'))
    assert.throws(() => eventsFromRows('r1', at2('[1]'), 0), corrupt(2, 'its stored body is not an event object'))
    assert.throws(() => eventsFromRows('r1', at2('null'), 0), corrupt(2, 'its stored body is not an event object'))
    assert.throws(() => eventsFromRows('r1', at2('"x"'), 0), corrupt(2, 'its stored body is not an event object'))
    assert.throws(
      () => eventsFromRows('r1', at2(JSON.stringify({ seq: 2, runId: 'r1' })), 0),
      corrupt(2, 'its stored body has no event type'),
    )
    assert.throws(
      () => eventsFromRows('r1', at2(body(3)), 0),
      corrupt(2, 'the event stored at seq 2 says it is seq 3: events were renumbered or swapped'),
    )
    assert.throws(() => eventsFromRows('r1', at2(body(2, 'r2')), 0), corrupt(2, 'the event stored at seq 2 belongs to run "r2"'))
  })
})

describe('snapshotFromRow', () => {
  it('parses a snapshot, and refuses one that is not JSON', () => {
    assert.deepEqual(snapshotFromRow('r1', 5, '{"a":1}'), { a: 1 })
    assert.throws(
      () => snapshotFromRow('r1', 5, '{"a":'),
      corrupt(5, 'the snapshot of run state taken at seq 5 is not valid JSON (5 characters)'),
    )
  })
})

describe('chainKeyOf', () => {
  it('is undefined when the variable is unset, empty or blank, and the trimmed value otherwise', () => {
    const long = 'k'.repeat(MinChainKeyLength)
    assert.equal(chainKeyOf('KEY', 'store-x', {}), undefined)
    assert.equal(chainKeyOf('KEY', 'store-x', { KEY: '' }), undefined)
    assert.equal(chainKeyOf('KEY', 'store-x', { KEY: '   ' }), undefined)
    assert.equal(chainKeyOf('KEY', 'store-x', { KEY: ` ${long}\n` }), long)
    assert.equal(chainKeyOf('toString', 'store-x', {}), undefined, 'an inherited name is not set')
    assert.equal(chainKeyOf('KEY', 'store-x', { KEY: undefined }), undefined, 'a variable set to undefined is not set')
  })

  it(`refuses a key shorter than ${MinChainKeyLength} characters, saying how long it is`, () => {
    assert.equal(MinChainKeyLength, 16)
    assert.throws(() => chainKeyOf('KEY', 'store-x', { KEY: 'k'.repeat(15) }), {
      code: 'plugin_start_failed',
      message:
        'store-x: the chain key in KEY has 15 characters; use 16 or more (for example: openssl rand -hex 32), or unset KEY to chain without a key',
    })
  })

  it('reads the process environment by default', () => {
    assert.equal(chainKeyOf('CORDAGE_UNIT_TEST_UNSET_VARIABLE', 'store-x'), undefined)
  })
})

describe('chainHash', () => {
  it('is SHA-256 of previous, a newline and the body, or HMAC-SHA-256 under a key', () => {
    assert.equal(chainHash('p', 'b'), createHash('sha256').update('p\nb').digest('hex'))
    assert.equal(chainHash('p', 'b', 'k'.repeat(16)), createHmac('sha256', 'k'.repeat(16)).update('p\nb').digest('hex'))
  })
})

describe('chainedEventsFromRows', () => {
  /** The rows read after `after`; the last seq is where they end unless given (undefined too). */
  const read = (list: ChainedEventRow[], after = 0, ...more: [lastSeq: number | undefined, start?: ChainStart, key?: string] | []) => {
    const [lastSeq, start = { link: '' }, key] = more.length ? more : [after + list.length]
    return chainedEventsFromRows('r1', list, after, lastSeq, start, key)
  }

  it('gives the events of rows chained from the empty link, under the key when there is one', () => {
    const list = chained(3)
    assert.deepEqual(
      read(list),
      list.map((r) => JSON.parse(r.body)),
    )
    assert.deepEqual(seqs(read(chained(3, Key), 0, 3, { link: '' }, Key)), [1, 2, 3])
    assert.deepEqual(read([], 0, 0), [])
    assert.deepEqual(seqs(read(list, 0, 2)), [1, 2, 3], 'rows beyond the last seq read before them are fine')
    assert.deepEqual(seqs(read(list, 0, undefined)), [1, 2, 3])
  })

  it('starts a read from the start at the empty link, whatever start says', () => {
    assert.deepEqual(seqs(read(chained(2), 0, 2, { link: undefined })), [1, 2])
    assert.deepEqual(seqs(read(chained(2), 0, 2, { link: null, chainedBefore: 1 })), [1, 2])
    assert.deepEqual(seqs(read(chained(2), 0, 2, { link: 'f'.repeat(64) })), [1, 2])
  })

  it('finds an edited body at its seq, with the hint for another key at the first link only', () => {
    const list = chained(3)
    const edit = (i: number) => list.map((r, j) => (j === i ? { ...r, body: r.body.replace('"time"', '"edited":1,"time"') } : r))
    assert.throws(() => read(edit(1)), corrupt(2, Unkeyed.edited))
    assert.throws(() => read(edit(0)), corrupt(1, Unkeyed.first))
    assert.throws(() => read(chained(3, Key)), corrupt(1, Unkeyed.first), 'chained under a key, read without one')
    assert.throws(() => read(list, 0, 3, { link: '' }, Key), corrupt(1, Keyed.first), 'chained without a key, read under one')
    const keyed = chained(3, Key)
    keyed[2] = { ...keyed[2], chain: list[2].chain }
    assert.throws(() => read(keyed, 0, 3, { link: '' }, Key), corrupt(3, Keyed.edited))
  })

  it('allows rows without a link only before the first linked one, which links to the empty string', () => {
    let previous = ''
    const mixed: ChainedEventRow[] = rows(4).map((r) =>
      r.seq <= 2 ? { ...r, chain: null } : { ...r, chain: (previous = chainHash(previous, r.body)) },
    )
    assert.deepEqual(seqs(read(mixed)), [1, 2, 3, 4])
    assert.deepEqual(seqs(read(rows(3).map((r) => ({ ...r, chain: null })))), [1, 2, 3])
    const list = chained(3)
    list[1] = { ...list[1], chain: null }
    assert.throws(() => read(list), corrupt(2, removedAt(2)))
    // The first linked row after an unlinked prefix must link to the empty string, not go on from nowhere.
    mixed[2] = { ...mixed[2], chain: chainHash('x', mixed[2].body) }
    assert.throws(() => read(mixed), corrupt(3, Unkeyed.first))
  })

  it('checks each row as eventsFromRows does, before its link', () => {
    const list = chained(4)
    assert.throws(
      () => read([list[0], list[2], list[3]], 0, 4),
      corrupt(2, 'the event at seq 2 is missing: the next stored event is seq 3'),
    )
    assert.throws(
      () => read(list.slice(0, 2), 0, 4),
      corrupt(3, "the event at seq 3 is missing: the run's last seq is 4, but its stored events end at 2"),
    )
    assert.throws(() => read([], 0, 1), corrupt(1, /^the event at seq 1 is missing: the run's last seq is 1/))
    assert.throws(
      () => read([list[0], { ...list[1], body: '{', chain: 'x' }], 0, 2),
      corrupt(2, 'its stored body is not valid JSON (1 characters)'),
    )
    assert.throws(
      () => read([list[0], { ...list[1], body: body(2, 'r2') }], 0, 2),
      corrupt(2, 'the event stored at seq 2 belongs to run "r2"'),
    )
  })

  it('goes on from the link at `after`', () => {
    const list = chained(5)
    assert.deepEqual(
      read(list.slice(2), 2, 5, { link: list[1].chain }),
      list.slice(2).map((r) => JSON.parse(r.body)),
    )
    assert.deepEqual(seqs(read(list.slice(2, 3), 2, undefined, { link: list[1].chain })), [3], 'a page')
    // A wrong link at `after`: named at the first seq the read returns, with no hint (it is not the first link).
    assert.throws(() => read(list.slice(2), 2, 5, { link: list[0].chain }), corrupt(3, Unkeyed.edited))
    assert.throws(() => read(list.slice(2), 2, 5, { link: '' }), corrupt(3, Unkeyed.edited))
    const keyed = chained(5, Key)
    assert.throws(() => read(keyed.slice(2), 2, 5, { link: keyed[0].chain }, Key), corrupt(3, Keyed.edited))
    // A row without a link after a linked `after`.
    assert.throws(() => read([{ ...list[2], chain: null }, ...list.slice(3)], 2, 5, { link: list[1].chain }), corrupt(3, removedAt(3)))
    assert.throws(() => read([list[2], { ...list[3], chain: null }], 2, 4, { link: list[1].chain }), corrupt(4, removedAt(4)))
  })

  it('starts after an event without a link: on from the empty link, unless one before it was chained', () => {
    let previous = ''
    const mixed: ChainedEventRow[] = rows(5).map((r) =>
      r.seq <= 3 ? { ...r, chain: null } : { ...r, chain: (previous = chainHash(previous, r.body)) },
    )
    assert.deepEqual(seqs(read(mixed.slice(3), 3, 5, { link: null })), [4, 5])
    assert.deepEqual(seqs(read(mixed.slice(2), 2, 5, { link: null })), [3, 4, 5])
    assert.throws(() => read(mixed.slice(3), 3, 5, { link: null, chainedBefore: 2 }), corrupt(3, removedAt(3)))
    assert.throws(() => read(mixed.slice(3), 3, 5, { link: null, chainedBefore: 1 }), corrupt(2, removedAt(2)))
    assert.throws(() => read(chained(5).slice(3), 3, 5, { link: null }), corrupt(4, Unkeyed.first), 'rows linked to a link that is gone')
  })

  it('cannot start after an event that is not there: with rows to return, or one the run is known to have', () => {
    const problem = (after: number) => `the event at seq ${after} is missing: the events after it cannot be checked against the chain`
    const list = chained(5)
    assert.throws(() => read(list.slice(3), 3, 5, { link: undefined }), corrupt(3, problem(3)))
    assert.throws(() => read(list.slice(3), 3, undefined, { link: undefined }), corrupt(3, problem(3)), 'a page')
    assert.throws(() => read([], 5, 5, { link: undefined }), corrupt(5, problem(5)), 'the last event is gone')
    assert.throws(() => read([], 4, 5, { link: undefined }), corrupt(4, problem(4)))
    assert.deepEqual(read([], 6, 5, { link: undefined }), [], 'beyond the last seq: nothing to read')
    assert.deepEqual(read([], 6, undefined, { link: undefined }), [])
  })
})

describe('snapshotLink and checkedSnapshot', () => {
  const list = chained(3)
  const keyed = chained(3, Key)

  it('links a snapshot as H(link of its event + "\\nsnapshot\\n" + its text), under the key', () => {
    assert.equal(snapshotLink('ab', '{"a":1}'), createHash('sha256').update('ab\nsnapshot\n{"a":1}').digest('hex'))
    assert.equal(snapshotLink('ab', '{"a":1}', Key), createHmac('sha256', Key).update('ab\nsnapshot\n{"a":1}').digest('hex'))
  })

  it('cannot be passed off as the next event, nor the next event as it', () => {
    // The next event's body and link, copied into the snapshot: not a snapshot's link.
    assert.throws(
      () => checkedSnapshot('r1', { seq: 2, version: 1, state: list[2].body, chain: list[2].chain }, list[1].chain),
      corrupt(2, /does not match its link/),
    )
    assert.notEqual(snapshotLink(list[1].chain!, list[2].body), list[2].chain)
  })

  it('gives the state of a snapshot that holds', () => {
    assert.deepEqual(checkedSnapshot('r1', snapshotAt(list, 2, '{"at":2}'), list[1].chain), { seq: 2, version: 1, state: { at: 2 } })
    assert.deepEqual(checkedSnapshot('r1', { ...snapshotAt(keyed, 3, '[1]', Key), version: 4 }, keyed[2].chain, Key), {
      seq: 3,
      version: 4,
      state: [1],
    })
  })

  it('refuses a snapshot that does not hold, at its seq, in the words verify uses', () => {
    const what = 'the snapshot of run state taken at seq 2'
    const snap = snapshotAt(list, 2, '{"at":2}')
    assert.throws(() => checkedSnapshot('r1', snap, undefined), corrupt(2, `${what} is of an event the run does not have`))
    assert.throws(
      () => checkedSnapshot('r1', snap, null),
      corrupt(
        2,
        `${what} is of an event that has no chain hash: the event's chain was removed (a snapshot is only taken at an event the store chained)`,
      ),
    )
    assert.throws(() => checkedSnapshot('r1', { ...snap, chain: null }, null), corrupt(2, /is of an event that has no chain hash/))
    assert.throws(
      () => checkedSnapshot('r1', { ...snap, chain: null }, list[1].chain),
      corrupt(
        2,
        `${what} has no link, but the event at its seq is chained: its link was removed (this store links every snapshot it keeps)`,
      ),
    )
    assert.throws(
      () => checkedSnapshot('r1', { ...snap, state: '{"at":3}' }, list[1].chain),
      corrupt(2, `${what} does not match its link: it was changed after it was written; do not resume from it`),
    )
    assert.throws(() => checkedSnapshot('r1', snap, list[2].chain), corrupt(2, /does not match its link/), 'linked to another event')
    assert.throws(
      () => checkedSnapshot('r1', snap, list[1].chain, Key),
      corrupt(
        2,
        `${what} does not match its link under the key: it was changed after it was written, or linked without the key; do not resume from it`,
      ),
    )
    // Linked right, but not JSON: the link proves it was written so; it still cannot be resumed from.
    assert.throws(
      () => checkedSnapshot('r1', snapshotAt(list, 2, '{"at":'), list[1].chain),
      corrupt(2, `${what} is not valid JSON (6 characters)`),
    )
  })
})

describe('HistoryChecker', () => {
  it('finds an intact chained history intact, and gives its head', () => {
    const list = chained(3)
    assert.deepEqual(check(list), { runId: 'r1', events: 3, chained: true, keyed: false, head: list[2].chain! })
    const keyed = chained(2, 'k'.repeat(16))
    assert.deepEqual(check(keyed, 2, 'k'.repeat(16)), { runId: 'r1', events: 2, chained: true, keyed: true, head: keyed[1].chain! })
  })

  it('reports events stored before the store chained, as a prefix only', () => {
    // seq 1 stored before the store chained; the chain starts at seq 2, linked to the empty string.
    let previous = ''
    const mixed: ChainedEventRow[] = rows(3).map((r) =>
      r.seq === 1 ? { ...r, chain: null } : { ...r, chain: (previous = chainHash(previous, r.body)) },
    )
    assert.deepEqual(check(mixed), { runId: 'r1', events: 3, chained: true, keyed: false, unchainedUpTo: 1, head: mixed[2].chain! })
    const none = rows(2).map((r) => ({ ...r, chain: null }))
    assert.deepEqual(check(none), { runId: 'r1', events: 2, chained: true, keyed: false, unchainedUpTo: 2 })
  })

  it('finds a chain removed after a chained event', () => {
    const list = chained(3)
    list[2] = { ...list[2], chain: null }
    assert.deepEqual(check(list).firstBad, {
      seq: 3,
      problem: 'it has no chain hash, but seq 2 before it was chained: its chain was removed',
    })
  })

  it('finds an edited body, a wrong key and a missing key at the first link they break', () => {
    const list = chained(3)
    list[1] = { ...list[1], body: list[1].body.replace('step/start', 'step/end') }
    const edited = check(list)
    assert.equal(edited.firstBad?.seq, 2)
    assert.equal(edited.firstBad!.problem, Unkeyed.edited, 'no hint about keys past the first link')
    assert.equal(edited.head, undefined)
    const keyed = chained(2, 'k'.repeat(16))
    const wrongKey = check(keyed, 2, 'x'.repeat(16))
    assert.equal(wrongKey.firstBad?.seq, 1)
    assert.match(
      wrongKey.firstBad!.problem,
      /^its chain hash does not match its body and the chain before it under the key: the event was changed, or events before it were removed, inserted or re-chained without the key/,
    )
    assert.equal(check(keyed).firstBad?.seq, 1)
  })

  it('finds a gap, a missing tail and a bad body, and keeps the first problem', () => {
    const list = chained(4)
    assert.deepEqual(check([list[0], list[2], list[3]], 4).firstBad, {
      seq: 2,
      problem: 'the event at seq 2 is missing: the next stored event is seq 3',
    })
    assert.equal(check([list[0], list[2], list[3]], 4).events, 3, 'every row is counted')
    assert.deepEqual(check(list.slice(0, 2), 4).firstBad, {
      seq: 3,
      problem: "the event at seq 3 is missing: the run's last seq is 4, but its stored events end at 2",
    })
    const bad = [...list]
    bad[1] = { ...bad[1], body: '{' }
    assert.deepEqual(check(bad).firstBad, { seq: 2, problem: 'its stored body is not valid JSON (1 characters)' })
    assert.deepEqual(check([{ seq: 1, body: body(1, 'r2'), chain: null }]).firstBad, {
      seq: 1,
      problem: 'the event stored at seq 1 belongs to run "r2"',
    })
  })

  it('checks the snapshot it is given at its seq, against the link recomputed there', () => {
    const list = chained(4)
    const intact = check(list, 4, undefined, snapshotAt(list, 2))
    assert.deepEqual(intact, { runId: 'r1', events: 4, chained: true, keyed: false, head: list[3].chain! })
    const keyed = chained(3, Key)
    assert.equal(check(keyed, 3, Key, snapshotAt(keyed, 3, '{}', Key)).firstBad, undefined)
    assert.deepEqual(check(list, 4, undefined, { ...snapshotAt(list, 2), state: '{"at":2}' }).firstBad, {
      seq: 2,
      problem:
        'the snapshot of run state taken at seq 2 does not match its link: it was changed after it was written; do not resume from it',
    })
    assert.deepEqual(check(keyed, 3, Key, snapshotAt(keyed, 3)).firstBad, {
      seq: 3,
      problem:
        'the snapshot of run state taken at seq 3 does not match its link under the key: it was changed after it was written, or linked without the key; do not resume from it',
    })
    assert.deepEqual(check(list, 4, undefined, { ...snapshotAt(list, 4), chain: null }).firstBad?.seq, 4)
    assert.deepEqual(check(list, 4, undefined, snapshotAt(list, 1, '{"at":')).firstBad, {
      seq: 1,
      problem: 'the snapshot of run state taken at seq 1 is not valid JSON (6 characters)',
    })
    assert.equal(check(list, 4, undefined, snapshotAt(list, 2)).head, list[3].chain, 'a head only for a history that holds')
    assert.equal(check(list, 4, undefined, snapshotAt(list, 3, '{"x":1}')).firstBad, undefined)
  })

  it('finds a snapshot of an event the run does not have', () => {
    const list = chained(3)
    const problem = (seq: number) => ({
      seq,
      problem: `the snapshot of run state taken at seq ${seq} is of an event the run does not have`,
    })
    const at = (seq: number) => ({ seq, version: 1, state: '{}', chain: 'ab' })
    assert.deepEqual(check(list, 3, undefined, at(4)).firstBad, problem(4))
    assert.deepEqual(check(list, 3, undefined, at(0)).firstBad, problem(0))
    assert.deepEqual(check(list, 3, undefined, at(1.5)).firstBad, problem(1.5))
    assert.deepEqual(check([], 0, undefined, at(1)).firstBad, problem(1))
    // A missing tail is found first.
    assert.deepEqual(
      check(list.slice(0, 2), 3, undefined, at(9)).firstBad?.problem,
      "the event at seq 3 is missing: the run's last seq is 3, but its stored events end at 2",
    )
  })

  it('finds a snapshot at an event without a link, even in a prefix stored before chaining', () => {
    let previous = ''
    const mixed: ChainedEventRow[] = rows(3).map((r) =>
      r.seq === 1 ? { ...r, chain: null } : { ...r, chain: (previous = chainHash(previous, r.body)) },
    )
    const problem =
      "the snapshot of run state taken at seq 1 is of an event that has no chain hash: the event's chain was removed (a snapshot is only taken at an event the store chained)"
    assert.deepEqual(check(mixed, 3, undefined, { seq: 1, version: 1, state: '{}', chain: null }).firstBad, { seq: 1, problem })
    assert.deepEqual(check(mixed, 3, undefined, { seq: 1, version: 1, state: '{}', chain: 'ab' }).firstBad, { seq: 1, problem })
    const result = check(mixed, 3, undefined, { seq: 2, version: 1, state: '{}', chain: snapshotLink(mixed[1].chain!, '{}') })
    assert.deepEqual([result.firstBad, result.unchainedUpTo, result.head], [undefined, 1, mixed[2].chain])
  })

  it("keeps the first problem, the snapshot's or a row's", () => {
    const list = chained(4)
    const badSnapshot = { ...snapshotAt(list, 2), state: '{"x":1}' }
    const bad3 = [...list]
    bad3[2] = { ...bad3[2], body: bad3[2].body.replace('"time"', '"x":1,"time"') }
    assert.equal(check(bad3, 4, undefined, badSnapshot).firstBad?.seq, 2, 'the snapshot at 2 before the row at 3')
    const bad1 = [...list]
    bad1[0] = { ...bad1[0], chain: 'ab' }
    assert.deepEqual(
      check(bad1, 4, undefined, badSnapshot).firstBad,
      { seq: 1, problem: Unkeyed.first },
      'the row at 1 before the snapshot at 2',
    )
    const bad2 = [...list]
    bad2[1] = { ...bad2[1], chain: null }
    assert.deepEqual(
      check(bad2, 4, undefined, snapshotAt(list, 2)).firstBad,
      { seq: 2, problem: removedAt(2) },
      "the row at the snapshot's seq first",
    )
    assert.deepEqual(check([list[0], list[2], list[3]], 4, undefined, snapshotAt(list, 3)).firstBad?.seq, 2, 'a gap before the snapshot')
  })

  it('names the seq before a row whose link was removed, as every read does', () => {
    const list = chained(4)
    list[3] = { ...list[3], chain: null }
    assert.deepEqual(check(list).firstBad, { seq: 4, problem: removedAt(4) })
    assert.equal(removedAt(4), 'it has no chain hash, but seq 3 before it was chained: its chain was removed')
  })

  it('is sealed: a plugin sharing the module cannot make a check pass', () => {
    assert.ok(Object.isFrozen(HistoryChecker.prototype))
  })
})
