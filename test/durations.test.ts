/**
 * The order test/run.ts starts files in (test/durations.ts): longest first from test/durations.json,
 * new files guessed from their size, and a missing or broken file falls back to name order with a
 * reason instead of stopping the suite.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { longestFirst, nextDurations, readDurations, writeDurations } from './durations.ts'
import { tempDir } from './temp.ts'

const sizes: Record<string, number> = {
  'a.test.ts': 1000,
  'b.test.ts': 1000,
  'c.test.ts': 1000,
  'new.test.ts': 10_000,
  'small.test.ts': 500,
}
const size = (file: string) => sizes[file] ?? 0

describe('test/run.ts order', () => {
  it('starts known files longest first, ties in name order', () => {
    const durations = new Map([
      ['a.test.ts', 3],
      ['b.test.ts', 40],
      ['c.test.ts', 3],
    ])
    assert.deepEqual(longestFirst(['a.test.ts', 'b.test.ts', 'c.test.ts'], durations, size), ['b.test.ts', 'a.test.ts', 'c.test.ts'])
  })

  it('guesses a file without a duration from its size, never longer than the median known file', () => {
    const files = ['a.test.ts', 'b.test.ts', 'c.test.ts', 'new.test.ts', 'small.test.ts']
    const durations = new Map([
      ['a.test.ts', 10],
      ['b.test.ts', 50],
      ['c.test.ts', 30],
    ])
    // 1000 bytes take 10, 30 or 50 s: at the median, 30 ms per byte, small (500 bytes) takes 15 s, and
    // new (10,000 bytes) 300 s, held to the median file's 30 s: after the long file it does not know,
    // and after the known file it ties with.
    assert.deepEqual(longestFirst(files, durations, size), ['b.test.ts', 'c.test.ts', 'new.test.ts', 'small.test.ts', 'a.test.ts'])
    // With nothing known, larger files first.
    assert.deepEqual(longestFirst(files, new Map(), size), ['new.test.ts', 'a.test.ts', 'b.test.ts', 'c.test.ts', 'small.test.ts'])
  })

  it('reads a missing, non-JSON or wrongly shaped durations file as a problem, never half of it', () => {
    const dir = tempDir('cordage-durations-')
    const file = join(dir, 'durations.json')
    assert.match(readDurations(file).problem ?? '', /^cannot read it \(ENOENT\)/)
    for (const [text, problem] of [
      ['{"a.test.ts": 3,', /^it is not JSON/],
      ['[["a.test.ts", 3]]', /^it is not an object of file → seconds/],
      ['{"a.test.ts": 3, "b.test.ts": "40"}', /^the entry of b\.test\.ts is not a number of seconds >= 0/],
      ['{"a.test.ts": -1}', /^the entry of a\.test\.ts is not a number/],
    ] as const) {
      writeFileSync(file, text)
      const read = readDurations(file)
      assert.match(read.problem ?? '', problem, text)
      assert.equal(read.durations.size, 0, text)
    }
    writeFileSync(file, '{"a.test.ts": 3.5}')
    assert.deepEqual(readDurations(file), { durations: new Map([['a.test.ts', 3.5]]) })
  })

  it('records the passing files of a run, keeps the others that still exist, in name order', () => {
    const old = new Map([
      ['gone.test.ts', 9],
      ['c.test.ts', 7],
      ['b.test.ts', 5],
    ])
    const ran = [
      { file: 'a.test.ts', ms: 12_345, ok: true },
      { file: 'b.test.ts', ms: 900_000, ok: false },
    ]
    const next = nextDurations(old, ran, (file) => file !== 'gone.test.ts')
    assert.deepEqual(
      [...next],
      [
        ['a.test.ts', 12.3],
        ['b.test.ts', 5],
        ['c.test.ts', 7],
      ],
    )
    const file = join(tempDir('cordage-durations-'), 'durations.json')
    writeDurations(file, next)
    assert.equal(readFileSync(file, 'utf8'), '{\n  "a.test.ts": 12.3,\n  "b.test.ts": 5,\n  "c.test.ts": 7\n}\n')
    assert.deepEqual(readDurations(file).durations, next)
  })
})
