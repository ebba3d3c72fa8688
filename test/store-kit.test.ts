/**
 * core/kit/store-kit.ts on its own: the checks both text stores run on every read, the chain's formula,
 * and the checker `verify` uses. The stores themselves are held to it by test/contracts/store.ts.
 */
import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import { chainHash, chainKeyOf, eventsFromRows, HistoryChecker, snapshotFromRow, type CordageError } from 'cordage'
import { runEvents } from './contracts/store.ts'

const rowsOf = (runId: string, from: number, count: number) =>
  runEvents(runId, from, count).map((e) => ({ seq: e.seq, body: JSON.stringify(e) }))

function corrupt(seq: number, problem: RegExp) {
  return (error: CordageError) => {
    assert.equal(error.code, 'store_corrupt')
    assert.deepEqual(error.data, { runId: 'r1', seq, problem: (error.data as { problem: string }).problem })
    assert.match((error.data as { problem: string }).problem, problem)
    return true
  }
}

describe('eventsFromRows', () => {
  it('returns the events of rows that hold together, from after + 1 up to the last seq', () => {
    assert.deepEqual(eventsFromRows('r1', rowsOf('r1', 1, 4), 0, 4), runEvents('r1', 1, 4))
    assert.deepEqual(eventsFromRows('r1', rowsOf('r1', 3, 2), 2, 4), runEvents('r1', 3, 2))
    assert.deepEqual(
      eventsFromRows('r1', rowsOf('r1', 1, 5), 0, 4).length,
      5,
      'rows beyond the last seq read before them: a writer appended in between',
    )
    assert.deepEqual(eventsFromRows('r1', [], 4, 4), [])
  })

  it('refuses with store_corrupt at the first bad seq', () => {
    const rows = rowsOf('r1', 1, 4)
    assert.throws(
      () => eventsFromRows('r1', [rows[0], rows[2], rows[3]], 0, 4),
      corrupt(2, /seq 2 is missing: the next stored event is seq 3/),
    )
    assert.throws(() => eventsFromRows('r1', rows.slice(0, 3), 0, 4), corrupt(4, /last seq is 4, but its stored events end at 3/))
    assert.throws(() => eventsFromRows('r1', [rows[0], { seq: 2, body: '{"type":' }], 0), corrupt(2, /not valid JSON/))
    assert.throws(() => eventsFromRows('r1', [rows[0], { seq: 2, body: 'null' }], 0), corrupt(2, /not an event object/))
    assert.throws(
      () => eventsFromRows('r1', [rows[0], { seq: 2, body: '{"seq":2,"runId":"r1","type":7}' }], 0),
      corrupt(2, /no event type/),
    )
    assert.throws(() => eventsFromRows('r1', [rows[0], { seq: 2, body: rows[2].body }], 0), corrupt(2, /says it is seq 3/))
    assert.throws(() => eventsFromRows('r1', [rows[0], rowsOf('r2', 2, 1)[0]], 0), corrupt(2, /belongs to run "r2"/))
  })

  it('says what to do, and never echoes the stored text', () => {
    assert.throws(
      () => eventsFromRows('r1', [{ seq: 1, body: 'sk-secret-not-json' }], 0),
      (error: Error) => {
        assert.match(error.message, /^run r1, seq 1: its stored body is not valid JSON \(18 characters\)\. .*cordage verify r1/)
        assert.doesNotMatch(error.message, /sk-secret/)
        return true
      },
    )
  })

  it('refuses a snapshot that does not parse, naming its seq', () => {
    assert.deepEqual(snapshotFromRow('r1', 500, '{"a":1}'), { a: 1 })
    assert.throws(() => snapshotFromRow('r1', 500, '{'), corrupt(500, /snapshot .* taken at seq 500 is not valid JSON/))
  })
})

describe('chainHash', () => {
  it('is SHA-256, or HMAC-SHA-256 under a key, of previous + "\\n" + body as UTF-8, in hex', () => {
    const body = JSON.stringify({ note: 'café ☕ 東京', seq: 2 })
    assert.equal(chainHash('', body), createHash('sha256').update(`\n${body}`, 'utf8').digest('hex'))
    assert.equal(chainHash('ab12', body), createHash('sha256').update(`ab12\n${body}`, 'utf8').digest('hex'))
    assert.equal(
      chainHash('ab12', body, 'a-key-of-sixteen+'),
      createHmac('sha256', 'a-key-of-sixteen+').update(`ab12\n${body}`, 'utf8').digest('hex'),
    )
    assert.notEqual(chainHash('ab12', body, 'a-key-of-sixteen+'), chainHash('ab12', body))
  })
})

describe('chainKeyOf', () => {
  it('reads the key from the variable, trimmed; unset or empty is no key; a short key is refused', () => {
    assert.equal(chainKeyOf('K', 'store-x', { K: '  0123456789abcdef\n' }), '0123456789abcdef')
    assert.equal(chainKeyOf('K', 'store-x', {}), undefined)
    assert.equal(chainKeyOf('K', 'store-x', { K: '   ' }), undefined)
    assert.throws(() => chainKeyOf('K', 'store-x', { K: 'short' }), {
      code: 'plugin_start_failed',
      message: /^store-x: the chain key in K has 5 characters; use 16 or more/,
    })
  })
})

describe('HistoryChecker', () => {
  const chained = (key?: string) => {
    let link = ''
    return rowsOf('r1', 1, 4).map((row) => ({ ...row, chain: (link = chainHash(link, row.body, key)) }))
  }
  const check = (rows: { seq: number; body: string; chain: string | null }[], lastSeq = 4, key?: string) => {
    const checker = new HistoryChecker('r1', key)
    for (const row of rows) checker.add(row)
    return checker.finish(lastSeq)
  }

  it('passes an intact chain and gives its head', () => {
    const rows = chained()
    assert.deepEqual(check(rows), { runId: 'r1', events: 4, chained: true, keyed: false, head: rows[3].chain })
    assert.deepEqual(check(chained('k'.repeat(16)), 4, 'k'.repeat(16)).keyed, true)
  })

  it('reports the first bad seq: an edit, a missing row, a removed link, the wrong key', () => {
    const rows = chained()
    assert.equal(check(rows.map((r) => (r.seq === 3 ? { ...r, body: r.body.replace('"index":3', '"index":4') } : r))).firstBad?.seq, 3)
    assert.deepEqual(check([rows[0], rows[1], rows[3]]).firstBad, {
      seq: 3,
      problem: 'the event at seq 3 is missing: the next stored event is seq 4',
    })
    assert.equal(check(rows.slice(0, 3)).firstBad?.seq, 4)
    assert.equal(check(rows.map((r) => (r.seq === 3 ? { ...r, chain: null } : r))).firstBad?.seq, 3)
    assert.match(check(rows, 4, 'k'.repeat(16)).firstBad?.problem ?? '', /chained without a key, or under another one$/)
    assert.match(check(chained('k'.repeat(16))).firstBad?.problem ?? '', /chained under a key, and this store has none set/)
  })

  it('accepts an unchained prefix (events stored before chaining) and reports how far it reaches', () => {
    const rows = rowsOf('r1', 1, 4)
    let link = ''
    const mixed = rows.map((row) => ({ ...row, chain: row.seq <= 2 ? null : (link = chainHash(link, row.body)) }))
    assert.deepEqual(check(mixed), { runId: 'r1', events: 4, chained: true, keyed: false, unchainedUpTo: 2, head: link })
    assert.deepEqual(check(rows.map((r) => ({ ...r, chain: null }))), {
      runId: 'r1',
      events: 4,
      chained: true,
      keyed: false,
      unchainedUpTo: 4,
    })
  })

  it('cannot be patched by a plugin sharing the module', () => {
    assert.throws(() => {
      ;(HistoryChecker.prototype as unknown as Record<string, unknown>).add = () => {}
    }, TypeError)
  })
})
