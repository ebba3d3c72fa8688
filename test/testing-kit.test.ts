/**
 * cordage/testing, the kit plugin authors test with: the harness loads real presets on the real host,
 * and each assertion fails, with a message that says what the run did, when the run is not as expected.
 */
import assert from 'node:assert/strict'
import { cpSync, existsSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import {
  eventsOf,
  expectEventOrder,
  expectFailure,
  expectSideEffects,
  expectStatus,
  scriptedModel,
  startApp,
  testPreset,
  type TestRun,
} from 'cordage/testing'
import { tempDir } from './temp.ts'

const templates = resolve(import.meta.dirname, '../templates/init')
const rooms = { 'R-2': { name: 'Harbour', seats: 8 } }
const allowAll = [{ id: 'all', verdict: 'allow', match: {} }]

/** The scaffold's project, copied to a folder outside the repository. */
function project(): string {
  const dir = tempDir('cordage-kit-')
  cpSync(join(templates, 'presets'), join(dir, 'presets'), { recursive: true })
  cpSync(join(templates, 'plugins'), join(dir, 'plugins'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n')
  return dir
}

async function bookTwice(): Promise<TestRun> {
  const app = await startApp(
    testPreset({
      script: [
        { tool: 'book_room', args: { roomId: 'R-2', day: '2026-03-14', people: 2 } },
        { tool: 'book_room', args: { roomId: 'R-2', day: '2026-03-15', people: 2 } },
        { final: 'Booked BK-1 and BK-2.' },
      ],
      rules: allowAll,
      plugins: [{ path: 'plugins/bookings', config: { rooms } }],
    }),
    { dir: templates },
  )
  try {
    return await app.run()
  } finally {
    await app.stop()
  }
}

describe('cordage/testing', () => {
  it('runs a preset object, path entries resolved against dir, and returns state, events and ledger entries', async () => {
    const run = await bookTwice()
    expectStatus(run, 'COMPLETED')
    expectSideEffects(run, 2)
    expectSideEffects(run, 2, 'book_room')
    expectSideEffects(run, 0, 'find_room')
    expectEventOrder(run, ['run/start', { type: 'tool/decision', tool: 'book_room' }, { type: 'tool/end', actionId: 's2.a1' }, 'run/end'])
    assert.deepEqual(
      eventsOf(run, 'tool/end').map((e) => e.data.output),
      [
        { ref: 'BK-1', roomId: 'R-2', day: '2026-03-14' },
        { ref: 'BK-2', roomId: 'R-2', day: '2026-03-15' },
      ],
    )
  })

  it('fails each assertion, saying what the run did, when the run differs', async () => {
    const run = await bookTwice()
    assert.throws(() => expectStatus(run, 'FAILED'), { name: 'AssertionError', message: /is COMPLETED, expected FAILED/ })
    assert.throws(() => expectFailure(run, 'tool_failed'), /COMPLETED, expected a failure with code tool_failed/)
    assert.throws(
      () => expectSideEffects(run, 1),
      /made 2 call\(s\) with side effects, expected 1: book_room \(committed\), book_room \(committed\)/,
    )
    assert.throws(
      () => expectEventOrder(run, ['run/end', 'run/start']),
      /event 2 of the expected order, "run\/start", does not come after "run\/end"; the run wrote:\n {2}1 run\/start/,
    )
    assert.throws(() => expectEventOrder(run, [{ type: 'tool/end', tool: 'find_room' }]), /does not come in the run/)
    assert.throws(() => scriptedModel([]), /non-empty array/)
    // A store that cannot list its ledger must not make "no side effects" pass by counting nothing.
    assert.throws(() => expectSideEffects({ ...run, effects: null }, 0), /cannot list its ledger/)
  })

  it('checks a failed run by its code', async () => {
    const app = await startApp(
      testPreset({
        script: [{ tool: 'book_room', args: { roomId: 'R-9', day: '2026-03-14', people: 2 } }, { final: 'Booked BK-1.' }],
        rules: allowAll,
        plugins: [{ path: 'plugins/bookings', config: { rooms } }],
        budgets: { maxRepairs: 0 },
      }),
      { dir: templates },
    )
    try {
      const run = await app.run()
      expectFailure(run, 'missing_evidence')
      expectSideEffects(run, 1)
      assert.equal(run.effects?.[0]?.status, 'failed')
      assert.throws(
        () => expectFailure(run, 'tool_failed'),
        /is FAILED_VERIFICATION \(missing_evidence\): booking BK-1 was not made in this run, expected failure code tool_failed/,
      )
    } finally {
      await app.stop()
    }
  })

  it('swaps a file preset’s SQLite store for store-memory, unless told to keep it', async () => {
    const dir = project()
    const memory = await startApp(join(dir, 'presets/default.yml'))
    try {
      expectStatus(await memory.run(), 'COMPLETED')
      assert.ok('store-memory' in memory.app.pluginsOf('bookings'))
    } finally {
      await memory.stop()
    }
    assert.equal(existsSync(join(dir, '.cordage')), false, 'nothing written beside the preset')
    const kept = await startApp(join(dir, 'presets/default.yml'), { keepStores: true })
    try {
      expectStatus(await kept.run(), 'COMPLETED')
      assert.ok('store-sqlite' in kept.app.pluginsOf('bookings'))
    } finally {
      await kept.stop()
    }
  })
})
