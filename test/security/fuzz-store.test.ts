/**
 * Issue 10, "Proof", stored rows: generated damage to a run's rows in a real SQLite file, made from
 * outside the store as a disk fault or a hand edit would be. Every damage must be caught: a read of the
 * run (load, loadRun, read) ends in `store_corrupt` naming the first bad seq, or, for an edit that still
 * reads as a well-formed log (valid JSON, right seq and run), `verify` reports the first bad seq from
 * the hash chain. Never another error, never a stack trace from a parse, never a silent read of a
 * changed history. Generated deterministically (a fixed seed).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { CordageError, type StoreService } from 'cordage'
import { SqliteStore } from '../../plugins/store-sqlite/sqlite-store.ts'
import { asKernel, runEvents } from '../contracts/store.ts'
import { tempDir } from '../helpers.ts'

const Events = 8
const opened: SqliteStore[] = []
after(() => { for (const s of opened) s.close() })

function fresh(): { store: SqliteStore; sql: (text: string, ...params: unknown[]) => void; bodies: string[] } {
  const file = join(tempDir('cordage-fuzz-store-'), 'runs.db')
  const store = new SqliteStore(file, { synchronous: 'normal', snapshotEvery: 0, busyTimeoutMs: 5000 })
  opened.push(store)
  const sql = (text: string, ...params: unknown[]) => {
    const db = new Database(file)
    try { db.prepare(text).run(...params) } finally { db.close() }
  }
  return { store, sql, bodies: [] }
}

/** A damage: what it does to the rows of run r1 (seq 1..Events). */
interface Damage {
  label: string
  apply(sql: (text: string, ...params: unknown[]) => void, bodies: string[]): void
}

function bodyOf(seq: number): string {
  return JSON.stringify(runEvents('r1', seq, 1)[0])
}

/** Generated damages: byte flips, cuts, seq and run changes, deletions, swaps, JSON that still parses. */
function damages(): Damage[] {
  const out: Damage[] = []
  const seqs = fc.integer({ min: 1, max: Events })
  for (const [seq, at, char] of fc.sample(fc.tuple(seqs, fc.nat(), fc.string({ minLength: 1, maxLength: 1 })), { seed: 30, numRuns: 25 })) {
    out.push({ label: `byte ${at} of seq ${seq} set to ${JSON.stringify(char)}`, apply: (sql) => {
      const body = bodyOf(seq)
      const i = at % body.length
      const changed = body.slice(0, i) + char + body.slice(i + 1)
      if (changed === body) return sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', body.slice(0, i) + 'Z' + body.slice(i + 1), 'r1', seq)
      sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', changed, 'r1', seq)
    } })
  }
  for (const [seq, keep] of fc.sample(fc.tuple(seqs, fc.nat()), { seed: 31, numRuns: 10 })) {
    out.push({ label: `seq ${seq} cut to ${keep} characters`, apply: (sql) => sql('UPDATE events SET body = substr(body, 1, ?) WHERE run_id = ? AND seq = ?', keep % bodyOf(seq).length, 'r1', seq) })
  }
  for (const seq of [1, 3, Events]) {
    out.push({ label: `seq ${seq} deleted`, apply: (sql) => sql('DELETE FROM events WHERE run_id = ? AND seq = ?', 'r1', seq) })
    out.push({ label: `seq ${seq} renumbered`, apply: (sql) => sql('UPDATE events SET seq = seq + 100 WHERE run_id = ? AND seq = ?', 'r1', seq) })
    out.push({ label: `seq ${seq} moved to another run`, apply: (sql) => sql("UPDATE events SET run_id = 'r2' WHERE run_id = ? AND seq = ?", 'r1', seq) })
    out.push({ label: `seq ${seq} body of another run`, apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', bodyOf(seq).replace('"r1"', '"r9"'), 'r1', seq) })
    out.push({ label: `seq ${seq} body says another seq`, apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', bodyOf(seq).replace(`"seq":${seq}`, `"seq":${seq + 1}`), 'r1', seq) })
    for (const value of ['null', '[]', '42', '"text"', '{}', '{"type":5}', '']) {
      out.push({ label: `seq ${seq} body ${value || '(empty)'}`, apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', value, 'r1', seq) })
    }
  }
  out.push({ label: 'seqs 2 and 3 swapped', apply: (sql) => {
    sql('UPDATE events SET seq = -1 WHERE run_id = ? AND seq = 2', 'r1')
    sql('UPDATE events SET seq = 2 WHERE run_id = ? AND seq = 3', 'r1')
    sql('UPDATE events SET seq = 3 WHERE run_id = ? AND seq = -1', 'r1')
  } })
  // Edits that still read as a well-formed log: only the chain can tell.
  for (const seq of [2, 5, Events]) {
    out.push({ label: `seq ${seq}: a value changed, JSON still valid`, apply: (sql) => sql('UPDATE events SET body = ? WHERE run_id = ? AND seq = ?', bodyOf(seq).replace('"time":', '"time":1'), 'r1', seq) })
    out.push({ label: `seq ${seq}: its chain link replaced`, apply: (sql) => sql("UPDATE events SET chain = X'00' WHERE run_id = ? AND seq = ?", 'r1', seq) })
  }
  return out
}

describe('fuzz: damaged rows of a stored run', () => {
  const cases = damages()

  it(`catches each of ${cases.length} damages: a read refuses with store_corrupt, or verify names the first bad seq`, async () => {
    let byRead = 0
    let byChain = 0
    for (const damage of cases) {
      const { store, sql } = fresh()
      const kernel = asKernel(store as StoreService)
      await kernel.append('r1', runEvents('r1', 1, Events), 0)
      damage.apply(sql, [])
      let refused: CordageError | undefined
      for (const read of [() => store.load('r1'), () => store.loadRun('r1'), () => store.read('r1', { after: 0 })]) {
        try {
          await read()
        } catch (error) {
          assert.ok(CordageError.is(error), `${damage.label}: not a CordageError: ${(error as Error)?.stack}`)
          assert.ok(error.code === 'store_corrupt' || error.code === 'run_not_found', `${damage.label}: ${error.code} ${error.message}`)
          if (error.code === 'store_corrupt') assert.ok(Number.isInteger((error.data as { seq: number }).seq), `${damage.label}: no seq in data`)
          refused = error
        }
      }
      const check = await store.verify('r1').catch((error: unknown) => {
        assert.ok(CordageError.is(error, 'run_not_found') || CordageError.is(error, 'store_corrupt'), `${damage.label}: verify threw ${(error as Error)?.message}`)
        return undefined
      })
      if (refused) byRead++
      else {
        assert.ok(check?.firstBad, `${damage.label}: read as intact, and verify found nothing`)
        byChain++
      }
      if (check) assert.ok(check.firstBad || refused, `${damage.label}: verify passed a damaged history`)
    }
    console.log(`fuzz-store: ${cases.length} damages; ${byRead} refused on read, ${byChain} caught by the chain only`)
    assert.ok(byChain >= 3, 'the edits that keep the log well-formed were caught by the chain')
  })
})
