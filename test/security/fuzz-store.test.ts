/**
 * Issue 10, "Proof", stored rows: generated damage to a run's rows in a real SQLite file, made from
 * outside the store as a disk fault or a hand edit would be. Every damage must be caught by every read
 * that returns what was damaged, and by `verify`, at the same seq: damage to an event by `load` and
 * `read` (each recomputes the links of what it reads, so an edit that still reads as a well-formed log
 * is caught too), damage to the snapshot by `loadRun`. Never another error, never a stack trace from a
 * parse, never a silent read of a changed history. Generated deterministically (a fixed seed).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { CordageError, type StoreService } from 'cordage'
import { SqliteStore } from '../../plugins/store-sqlite/sqlite-store.ts'
import { asKernel, runEvents } from '../contracts/store.ts'
import { tempDir } from '../temp.ts'

const Events = 8
const opened: SqliteStore[] = []
after(() => {
  for (const s of opened) s.close()
})

function fresh(): { store: SqliteStore; sql: (text: string, ...params: unknown[]) => void; bodies: string[] } {
  const file = join(tempDir('cordage-fuzz-store-'), 'runs.db')
  const store = new SqliteStore(file, { synchronous: 'normal', snapshotEvery: 0, busyTimeoutMs: 5000 })
  opened.push(store)
  const sql = (text: string, ...params: unknown[]) => {
    const db = new Database(file)
    try {
      db.prepare(text).run(...params)
    } finally {
      db.close()
    }
  }
  return { store, sql, bodies: [] }
}

/** A damage: what it does to the rows of run r1 (seq 1..Events, with a snapshot at SnapshotSeq). */
interface Damage {
  label: string
  /** What it damages: an event, or the snapshot (which only loadRun reads). */
  of?: 'snapshot'
  apply(sql: (text: string, ...params: unknown[]) => void, bodies: string[]): void
}

const SnapshotSeq = 6
const SnapshotState = JSON.stringify({ runId: 'r1', lastSeq: SnapshotSeq, steps: 3, note: 'state as the loop keeps it' })

function bodyOf(seq: number): string {
  return JSON.stringify(runEvents('r1', seq, 1)[0])
}

/** Generated damages: byte flips, cuts, seq and run changes, deletions, swaps, JSON that still parses. */
function damages(): Damage[] {
  const out: Damage[] = []
  const seqs = fc.integer({ min: 1, max: Events })
  for (const [seq, at, char] of fc.sample(fc.tuple(seqs, fc.nat(), fc.string({ minLength: 1, maxLength: 1 })), { seed: 30, numRuns: 25 })) {
    out.push({
      label: `byte ${at} of seq ${seq} set to ${JSON.stringify(char)}`,
      apply: (sql) => {
        const body = bodyOf(seq)
        const i = at % body.length
        const changed = body.slice(0, i) + char + body.slice(i + 1)
        if (changed === body)
          return sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', body.slice(0, i) + 'Z' + body.slice(i + 1), 'r1', seq)
        sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', changed, 'r1', seq)
      },
    })
  }
  for (const [seq, keep] of fc.sample(fc.tuple(seqs, fc.nat()), { seed: 31, numRuns: 10 })) {
    out.push({
      label: `seq ${seq} cut to ${keep} characters`,
      apply: (sql) => sql('UPDATE events SET body = substr(body, 1, ?) WHERE run_id = ? AND seq = ?', keep % bodyOf(seq).length, 'r1', seq),
    })
  }
  for (const seq of [1, 3, Events]) {
    out.push({ label: `seq ${seq} deleted`, apply: (sql) => sql('DELETE FROM events WHERE run_id = ? AND seq = ?', 'r1', seq) })
    out.push({
      label: `seq ${seq} renumbered`,
      apply: (sql) => sql('UPDATE events SET seq = seq + 100 WHERE run_id = ? AND seq = ?', 'r1', seq),
    })
    out.push({
      label: `seq ${seq} moved to another run`,
      apply: (sql) => sql("UPDATE events SET run_id = 'r2' WHERE run_id = ? AND seq = ?", 'r1', seq),
    })
    out.push({
      label: `seq ${seq} body of another run`,
      apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', bodyOf(seq).replace('"r1"', '"r9"'), 'r1', seq),
    })
    out.push({
      label: `seq ${seq} body says another seq`,
      apply: (sql) =>
        sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', bodyOf(seq).replace(`"seq":${seq}`, `"seq":${seq + 1}`), 'r1', seq),
    })
    for (const value of ['null', '[]', '42', '"text"', '{}', '{"type":5}', '']) {
      out.push({
        label: `seq ${seq} body ${value || '(empty)'}`,
        apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', value, 'r1', seq),
      })
    }
  }
  out.push({
    label: 'seqs 2 and 3 swapped',
    apply: (sql) => {
      sql('UPDATE events SET seq = -1 WHERE run_id = ? AND seq = 2', 'r1')
      sql('UPDATE events SET seq = 2 WHERE run_id = ? AND seq = 3', 'r1')
      sql('UPDATE events SET seq = 3 WHERE run_id = ? AND seq = -1', 'r1')
    },
  })
  // Edits that still read as a well-formed log: only the chain can tell.
  for (const seq of [2, 5, Events]) {
    out.push({
      label: `seq ${seq}: a value changed, JSON still valid`,
      apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', bodyOf(seq).replace('"time":', '"time":1'), 'r1', seq),
    })
    out.push({
      label: `seq ${seq}: its chain link replaced`,
      apply: (sql) => sql("UPDATE events SET chain = X'00' WHERE run_id = ? AND seq = ?", 'r1', seq),
    })
    out.push({
      label: `seq ${seq}: its chain link removed`,
      apply: (sql) => sql('UPDATE events SET chain = NULL WHERE run_id = ? AND seq = ?', 'r1', seq),
    })
  }
  // The snapshot: its text (valid JSON or not), its link, its seq.
  for (const [at, char] of fc.sample(fc.tuple(fc.nat(), fc.string({ minLength: 1, maxLength: 1 })), { seed: 32, numRuns: 12 })) {
    out.push({
      label: `snapshot byte ${at} set to ${JSON.stringify(char)}`,
      of: 'snapshot',
      apply: (sql) => {
        const i = at % SnapshotState.length
        const changed = SnapshotState.slice(0, i) + char + SnapshotState.slice(i + 1)
        sql(
          'UPDATE snapshots SET state = ? WHERE run_id = ?',
          changed === SnapshotState ? SnapshotState.slice(0, i) + 'Z' + SnapshotState.slice(i + 1) : changed,
          'r1',
        )
      },
    })
  }
  out.push({
    label: 'snapshot: a value changed, JSON still valid',
    of: 'snapshot',
    apply: (sql) => sql('UPDATE snapshots SET state = ? WHERE run_id = ?', SnapshotState.replace('"steps":3', '"steps":4'), 'r1'),
  })
  out.push({
    label: 'snapshot: its link removed',
    of: 'snapshot',
    apply: (sql) => sql('UPDATE snapshots SET chain = NULL WHERE run_id = ?', 'r1'),
  })
  out.push({
    label: 'snapshot: its link replaced',
    of: 'snapshot',
    apply: (sql) => sql("UPDATE snapshots SET chain = X'00' WHERE run_id = ?", 'r1'),
  })
  for (const seq of [SnapshotSeq - 1, SnapshotSeq + 1, Events + 1, 0]) {
    out.push({
      label: `snapshot moved to seq ${seq}`,
      of: 'snapshot',
      apply: (sql) => sql('UPDATE snapshots SET seq = ? WHERE run_id = ?', seq, 'r1'),
    })
  }
  return out
}

describe('fuzz: damaged rows of a stored run', () => {
  const cases = damages()

  it(`catches each of ${cases.length} damages: every read of what was damaged refuses with store_corrupt at the seq verify names`, async () => {
    const counts = { events: 0, snapshot: 0, byChainOnly: 0 }
    for (const damage of cases) {
      const { store, sql } = fresh()
      const kernel = asKernel(store as StoreService)
      await kernel.append('r1', runEvents('r1', 1, SnapshotSeq), 0, { snapshot: { version: 1, state: JSON.parse(SnapshotState) } })
      await kernel.append('r1', runEvents('r1', SnapshotSeq + 1, Events - SnapshotSeq), SnapshotSeq)
      assert.deepEqual((await store.loadRun('r1')).snapshot?.seq, SnapshotSeq)
      damage.apply(sql, [])
      const check = await store.verify('r1')
      assert.ok(check.firstBad, `${damage.label}: verify passed a damaged history`)
      const refusal = async (label: string, read: () => Promise<unknown>): Promise<CordageError> => {
        try {
          await read()
        } catch (error) {
          assert.ok(CordageError.is(error), `${damage.label}: ${label}: not a CordageError: ${(error as Error)?.stack}`)
          assert.equal(error.code, 'store_corrupt', `${damage.label}: ${label}: ${error.code} ${error.message}`)
          return error
        }
        assert.fail(`${damage.label}: ${label} read a damaged history`)
      }
      const reads: [string, () => Promise<unknown>][] =
        damage.of === 'snapshot'
          ? [['loadRun', () => store.loadRun('r1')]]
          : [
              ['load', () => store.load('r1')],
              ['read', () => store.read('r1', { after: 0 })],
            ]
      for (const [label, read] of reads) {
        const error = await refusal(label, read)
        assert.equal(
          (error.data as { seq: number }).seq,
          check.firstBad.seq,
          `${damage.label}: ${label} and verify name the same seq: ${error.message} / ${check.firstBad.problem}`,
        )
      }
      if (damage.of === 'snapshot') counts.snapshot++
      else counts.events++
      if (/chain hash does not match|chain was removed|link/.test(check.firstBad.problem)) counts.byChainOnly++
    }
    console.log(
      `fuzz-store: ${cases.length} damages (${counts.events} to events, ${counts.snapshot} to the snapshot), every one refused on read; ${counts.byChainOnly} of them caught by the chain`,
    )
    assert.ok(counts.byChainOnly >= 10, 'the edits that keep the log well-formed were caught by the chain')
  })
})
