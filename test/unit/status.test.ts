/**
 * core/kernel/status.ts: the run statuses and every transition allowed between them, written out here
 * independently of the table, so a change to the table is a change to this test.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { assertTransition, isTerminal, isWaiting, Transitions, type RunStatus } from '../../core/kernel/status.ts'

const All: RunStatus[] = [
  'CREATED',
  'RUNNING',
  'WAITING_APPROVAL',
  'WAITING_USER',
  'WAITING_RECONCILIATION',
  'SUSPENDED',
  'CANCELLING',
  'COMPLETED',
  'FAILED',
  'FAILED_VERIFICATION',
  'STOPPED',
  'CANCELLED',
]
const Waiting = ['WAITING_APPROVAL', 'WAITING_USER', 'WAITING_RECONCILIATION', 'SUSPENDED']
const Terminal = ['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED']

/** Every allowed transition, as `FROM>TO`. */
const Allowed = new Set([
  'CREATED>RUNNING',
  'CREATED>CANCELLED',
  'CREATED>FAILED',
  ...[...Waiting, 'CANCELLING', ...Terminal].map((to) => `RUNNING>${to}`),
  ...Waiting.flatMap((from) => [`${from}>RUNNING`, `${from}>CANCELLING`, `${from}>CANCELLED`]),
  'CANCELLING>CANCELLED',
])

describe('run statuses', () => {
  it('allows exactly the transitions of the table, and refuses every other pair', () => {
    for (const from of All) {
      for (const to of All) {
        const allowed = Allowed.has(`${from}>${to}`)
        if (allowed) assert.doesNotThrow(() => assertTransition(from, to), `${from} → ${to}`)
        else assert.throws(() => assertTransition(from, to), { code: 'illegal_transition' }, `${from} → ${to}`)
      }
    }
    assert.deepEqual(Object.keys(Transitions).sort(), [...All].sort())
  })

  it('says what is allowed from where the run is, or that it is final', () => {
    assert.throws(() => assertTransition('CANCELLING', 'RUNNING'), {
      message: 'a run cannot go from CANCELLING to RUNNING (allowed from CANCELLING: CANCELLED)',
    })
    assert.throws(() => assertTransition('CREATED', 'COMPLETED'), {
      message: 'a run cannot go from CREATED to COMPLETED (allowed from CREATED: RUNNING, CANCELLED, FAILED)',
    })
    assert.throws(() => assertTransition('COMPLETED', 'RUNNING'), {
      message: 'a run cannot go from COMPLETED to RUNNING (allowed from COMPLETED: none, it is final)',
    })
  })

  it('knows which statuses are terminal and which are waiting', () => {
    for (const s of All) {
      assert.equal(isTerminal(s), Terminal.includes(s), s)
      assert.equal(isWaiting(s), Waiting.includes(s), s)
    }
  })

  it('keeps the table frozen', () => {
    assert.ok(Object.isFrozen(Transitions))
    assert.ok(Object.isFrozen(Transitions.RUNNING))
    assert.throws(() => {
      ;(Transitions.COMPLETED as RunStatus[]).push('RUNNING')
    }, TypeError)
  })
})
