import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { emptyState } from 'cordage'
import { eventsOf, expectEventOrder, expectFailure, expectSideEffects, expectStatus, startApp, testPreset } from 'cordage/testing'
import { bookingVerifier } from '../plugins/bookings/verifier.ts'

const project = join(import.meta.dirname, '..')
const rooms = { 'R-2': { name: 'Harbour', seats: 8 }, 'R-3': { name: 'Hall', seats: 30 } }

describe('bookings', () => {
  it('runs the default preset: books once, and completes with the booking as evidence', async () => {
    // The preset as written, its store swapped for store-memory: nothing is left on disk.
    const app = await startApp(join(project, 'presets/default.yml'))
    try {
      const run = await app.run()
      expectStatus(run, 'COMPLETED')
      expectSideEffects(run, 1, 'book_room')
      expectEventOrder(run, [
        { type: 'tool/end', tool: 'find_room' },
        { type: 'tool/decision', tool: 'book_room' },
        { type: 'tool/end', tool: 'book_room' },
        'verify/end',
        'run/end',
      ])
      const [verified] = eventsOf(run, 'verify/end')
      assert.deepEqual(
        verified.data.evidence.map((e) => e.ref),
        ['BK-1'],
      )
    } finally {
      await app.stop()
    }
  })

  it('is denied a booking over 10 people by the policy, and cannot claim it anyway', async () => {
    const app = await startApp(
      testPreset({
        script: [{ tool: 'book_room', args: { roomId: 'R-3', day: '2026-03-14', people: 12 } }, { final: 'Booked the Hall (BK-1).' }],
        rules: [
          { id: 'large-bookings', verdict: 'deny', match: { tool: 'book_room', args: { people: { gt: 10 } } } },
          { id: 'bookings', verdict: 'allow', match: { tool: 'book_room' } },
        ],
        plugins: [{ path: 'plugins/bookings', config: { rooms } }],
        budgets: { maxRepairs: 0 },
      }),
      { dir: project },
    )
    try {
      const run = await app.run('Book the Hall for 12 people on 2026-03-14.')
      assert.equal(run.state.actions['s1.a1'].decision?.ruleId, 'large-bookings')
      expectSideEffects(run, 0)
      expectStatus(run, 'FAILED_VERIFICATION')
      expectFailure(run, 'missing_evidence')
    } finally {
      await app.stop()
    }
  })

  it('fails closed: after a denied booking only an answer that says so completes, not "reserved"', async () => {
    const denied = (final: string) =>
      testPreset({
        script: [{ tool: 'book_room', args: { roomId: 'R-3', day: '2026-03-14', people: 12 } }, { final }],
        rules: [{ id: 'large-bookings', verdict: 'deny', match: { tool: 'book_room', args: { people: { gt: 10 } } } }],
        plugins: [{ path: 'plugins/bookings', config: { rooms } }],
        budgets: { maxRepairs: 0 },
      })
    for (const [answer, status] of [
      ['Your room is reserved, all set.', 'FAILED_VERIFICATION'],
      ['I could not book the Hall: bookings over 10 people go to the office manager.', 'COMPLETED'],
    ] as const) {
      const app = await startApp(denied(answer), { dir: project })
      try {
        const run = await app.run('Book the Hall for 12 people on 2026-03-14.')
        expectSideEffects(run, 0)
        expectStatus(run, status)
        if (status === 'FAILED_VERIFICATION') expectFailure(run, 'missing_evidence')
      } finally {
        await app.stop()
      }
    }
  })

  it('asks for a booking reference when an answer names none', () => {
    const signal = new AbortController().signal
    const result = bookingVerifier.verify({ state: emptyState('r'), answer: 'Booked, all done.', signal })
    assert.deepEqual(result, {
      ok: false,
      code: 'missing_evidence',
      reason: 'the answer names no booking made in this run, and does not say that none could be made',
      repairable: true,
    })
  })
})
