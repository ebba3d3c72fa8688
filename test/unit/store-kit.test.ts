/**
 * core/store-kit.ts: stored rows back into events, refusing a history that does not hold together,
 * and the hash chain that `verify` recomputes.
 */
import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import { chainHash, chainKeyOf, eventsFromRows, HistoryChecker, MinChainKeyLength, snapshotFromRow, storeCorrupt, type ChainedEventRow } from '../../core/store-kit.ts'

const body = (seq: number, runId = 'r1', type = seq === 1 ? 'run/start' : 'step/start') => JSON.stringify({ type, seq, runId, time: seq })
const rows = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ({ seq: from + i, body: body(from + i) }))
const corrupt = (seq: number, problem: RegExp | string) => (e: Error & { code?: string; data?: { runId: string; seq: number; problem: string } }) => {
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

function check(list: ChainedEventRow[], lastSeq = list.length, key?: string) {
  const checker = new HistoryChecker('r1', key)
  for (const row of list) checker.add(row)
  return checker.finish(lastSeq)
}

describe('storeCorrupt', () => {
  it('names the run, the seq and the problem, and says what to do', () => {
    const e = storeCorrupt('r1', 4, 'it is broken')
    assert.equal(e.code, 'store_corrupt')
    assert.deepEqual(e.data, { runId: 'r1', seq: 4, problem: 'it is broken' })
    assert.match(e.message, /^run r1, seq 4: it is broken\. The stored log was damaged or edited after it was written: do not resume the run; cordage verify r1 shows the first bad event; restore the store from a backup$/)
  })
})

describe('eventsFromRows', () => {
  it('gives the events of rows that hold together, from any point', () => {
    assert.deepEqual(eventsFromRows('r1', rows(3), 0).map((e) => e.seq), [1, 2, 3])
    assert.deepEqual(eventsFromRows('r1', rows(2, 5), 4, 6).map((e) => e.seq), [5, 6])
    assert.deepEqual(eventsFromRows('r1', [], 0), [])
    assert.deepEqual(eventsFromRows('r1', rows(3), 0, 2).length, 3, 'rows beyond the recorded last seq are fine')
    assert.deepEqual(eventsFromRows('r1', rows(3), 0, 3).length, 3)
  })

  it('refuses a gap, naming the missing seq', () => {
    assert.throws(() => eventsFromRows('r1', [rows(1)[0], { seq: 3, body: body(3) }], 0), corrupt(2, 'the event at seq 2 is missing: the next stored event is seq 3'))
    assert.throws(() => eventsFromRows('r1', rows(2, 2), 0), corrupt(1, 'the event at seq 1 is missing: the next stored event is seq 2'))
  })

  it('refuses a missing tail when the last seq is known', () => {
    assert.throws(() => eventsFromRows('r1', rows(2), 0, 4), corrupt(3, 'the event at seq 3 is missing: the run\'s last seq is 4, but its stored events end at 2'))
    assert.throws(() => eventsFromRows('r1', [], 0, 1), corrupt(1, /^the event at seq 1 is missing/))
  })

  it('refuses a body that is not an event of this run at this seq', () => {
    const at2 = (text: string) => [rows(1)[0], { seq: 2, body: text }]
    assert.throws(() => eventsFromRows('r1', at2('{oops'), 0), corrupt(2, 'its stored body is not valid JSON (5 characters)'))
    assert.throws(() => eventsFromRows('r1', at2('[1]'), 0), corrupt(2, 'its stored body is not an event object'))
    assert.throws(() => eventsFromRows('r1', at2('null'), 0), corrupt(2, 'its stored body is not an event object'))
    assert.throws(() => eventsFromRows('r1', at2('"x"'), 0), corrupt(2, 'its stored body is not an event object'))
    assert.throws(() => eventsFromRows('r1', at2(JSON.stringify({ seq: 2, runId: 'r1' })), 0), corrupt(2, 'its stored body has no event type'))
    assert.throws(() => eventsFromRows('r1', at2(body(3)), 0), corrupt(2, 'the event stored at seq 2 says it is seq 3: events were renumbered or swapped'))
    assert.throws(() => eventsFromRows('r1', at2(body(2, 'r2')), 0), corrupt(2, 'the event stored at seq 2 belongs to run "r2"'))
  })
})

describe('snapshotFromRow', () => {
  it('parses a snapshot, and refuses one that is not JSON', () => {
    assert.deepEqual(snapshotFromRow('r1', 5, '{"a":1}'), { a: 1 })
    assert.throws(() => snapshotFromRow('r1', 5, '{"a":'), corrupt(5, 'the snapshot of run state taken at seq 5 is not valid JSON (5 characters)'))
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
  })

  it(`refuses a key shorter than ${MinChainKeyLength} characters, saying how long it is`, () => {
    assert.equal(MinChainKeyLength, 16)
    assert.throws(() => chainKeyOf('KEY', 'store-x', { KEY: 'k'.repeat(15) }), { code: 'plugin_start_failed', message: 'store-x: the chain key in KEY has 15 characters; use 16 or more (for example: openssl rand -hex 32), or unset KEY to chain without a key' })
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
    const mixed: ChainedEventRow[] = rows(3).map((r) => (r.seq === 1 ? { ...r, chain: null } : { ...r, chain: (previous = chainHash(previous, r.body)) }))
    assert.deepEqual(check(mixed), { runId: 'r1', events: 3, chained: true, keyed: false, unchainedUpTo: 1, head: mixed[2].chain! })
    const none = rows(2).map((r) => ({ ...r, chain: null }))
    assert.deepEqual(check(none), { runId: 'r1', events: 2, chained: true, keyed: false, unchainedUpTo: 2 })
  })

  it('finds a chain removed after a chained event', () => {
    const list = chained(3)
    list[2] = { ...list[2], chain: null }
    assert.deepEqual(check(list).firstBad, { seq: 3, problem: 'it has no chain hash, but seq 1 before it was chained: its chain was removed' })
  })

  it('finds an edited body, a wrong key and a missing key at the first link they break', () => {
    const list = chained(3)
    list[1] = { ...list[1], body: list[1].body.replace('step/start', 'step/end') }
    const edited = check(list)
    assert.equal(edited.firstBad?.seq, 2)
    assert.match(edited.firstBad!.problem, /^its chain hash does not match its body and the chain before it: the event was changed, or events before it were removed, inserted or re-chained/)
    assert.equal(edited.head, undefined)
    const keyed = chained(2, 'k'.repeat(16))
    const wrongKey = check(keyed, 2, 'x'.repeat(16))
    assert.equal(wrongKey.firstBad?.seq, 1)
    assert.match(wrongKey.firstBad!.problem, /^its chain hash does not match its body and the chain before it under the key: the event was changed, or events before it were removed, inserted or re-chained without the key/)
    assert.equal(check(keyed).firstBad?.seq, 1)
  })

  it('finds a gap, a missing tail and a bad body, and keeps the first problem', () => {
    const list = chained(4)
    assert.deepEqual(check([list[0], list[2], list[3]], 4).firstBad, { seq: 2, problem: 'the event at seq 2 is missing: the next stored event is seq 3' })
    assert.equal(check([list[0], list[2], list[3]], 4).events, 3, 'every row is counted')
    assert.deepEqual(check(list.slice(0, 2), 4).firstBad, { seq: 3, problem: 'the event at seq 3 is missing: the run\'s last seq is 4, but its stored events end at 2' })
    const bad = [...list]
    bad[1] = { ...bad[1], body: '{' }
    assert.deepEqual(check(bad).firstBad, { seq: 2, problem: 'its stored body is not valid JSON (1 characters)' })
    assert.deepEqual(check([{ seq: 1, body: body(1, 'r2'), chain: null }]).firstBad, { seq: 1, problem: 'the event stored at seq 1 belongs to run "r2"' })
  })

  it('is sealed: a plugin sharing the module cannot make a check pass', () => {
    assert.ok(Object.isFrozen(HistoryChecker.prototype))
  })
})
