/**
 * Two fault cases of issue 27, through the real `cordage` binary in child processes.
 *
 * Cancel racing a commit: a payment is in flight in a worker that cannot look at anything meanwhile
 * (the call blocks its process, as a request already sent does) when `cordage cancel` stores its
 * request. The cancel is accepted: the payment's outcome is recorded, the run ends CANCELLED at its
 * next safe point, and its `run/end` names the payment. A cancel that comes after the run ended says
 * so with its own exit code (8). On SQLite and, when a server is there, PostgreSQL.
 */
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, sharedStores, wellFormed } from './fault-lab.ts'

let lab: FaultLab | undefined
afterEach(() => {
  lab?.close()
  lab = undefined
})

const count = (events: RunEvent[], type: string) => events.filter((e) => e.type === type).length

async function until(test: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A run whose payment (pay_gated) is in flight, blocking its worker until the gate opens. */
async function paymentInFlight(l: FaultLab) {
  const running = l.spawn(['run', '--json'])
  const [start] = await running.lines(1)
  await until(() => existsSync(join(l.dir, 'payments.jsonl.in-flight')), 'the payment is in flight')
  return { running, runId: start.runId, open: () => writeFileSync(join(l.dir, 'payments.jsonl.gate'), 'go') }
}

/** A worker that holds its lease through the whole call: the cancel cannot take the run, it must ask. */
function gatedLab(store: 'sqlite' | 'postgres') {
  return new FaultLab({
    store,
    script: [{ tool: 'pay_gated', args: { amount: 12 } }, { final: 'paid' }],
    durability: { leaseTtlMs: 30_000, cancelWatchMs: 25 },
  })
}

describe('cancel racing a commit', () => {
  for (const store of sharedStores)
    it(`accepts a cancel that arrives while a payment is in flight: CANCELLED, and run/end names the payment (${store})`, async () => {
      lab = gatedLab(store)
      const { running, runId, open } = await paymentInFlight(lab)
      const cancel = lab.spawn(['cancel', runId, '--by', 'carol', '--reason', 'customer called'])
      // The request is on record while the payment is still in flight; only then does the payment go through.
      await until(async () => !!(await lab!.db().cancelRequest(runId)), 'the cancel request is in the store')
      open()
      const [run, cancelled] = await Promise.all([running.exit, cancel.exit])
      assert.equal(cancelled.code, 6, `the cancel was accepted: ${cancelled.stderr}`)
      assert.match(cancelled.stderr, /cancel accepted/)
      assert.equal(run.code, 6, run.stderr)
      const events = await lab.events(runId)
      assert.equal(wellFormed(events), undefined)
      const end = events.at(-1)!
      assert.ok(end.type === 'run/end' && end.data.status === 'CANCELLED', JSON.stringify(end))
      assert.deepEqual(
        end.data.effects?.committed.map((e) => [e.actionId, e.tool, e.receipt]),
        [['s1.a1', 'pay_gated', 'PAY-1']],
      )
      assert.equal(count(events, 'tool/end'), 1, "the payment's outcome is on record")
      const requested = events.find((e) => e.type === 'run/cancel-requested')
      assert.ok(requested?.type === 'run/cancel-requested' && requested.data.by === 'carol')
      assert.ok(
        events.indexOf(requested) > events.findIndex((e) => e.type === 'tool/end'),
        'the run acted on the cancel at the safe point after the call',
      )
      assert.equal(count(events, 'step/model-request'), 1, 'no step began after the cancel')
      assert.equal(lab.payments().length, 1)
    })

  it('acts on a stored cancel whose process was killed before the run ended', async () => {
    lab = gatedLab('sqlite')
    const { running, runId, open } = await paymentInFlight(lab)
    const cancel = lab.spawn(['cancel', runId, '--by', 'carol'])
    await until(async () => !!(await lab!.db().cancelRequest(runId)), 'the cancel request is in the store')
    cancel.child.kill('SIGKILL')
    assert.equal((await cancel.exit).signal, 'SIGKILL')
    open()
    const run = await running.exit
    assert.equal(run.code, 6, run.stderr)
    const end = (await lab.events(runId)).at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'CANCELLED', JSON.stringify(end))
    assert.deepEqual(
      end.data.effects?.committed.map((e) => e.receipt),
      ['PAY-1'],
    )
  })

  it('says, with exit code 8, that the run ended before the cancel could act, and changes nothing', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 4 } }, { final: 'paid' }] })
    const done = await lab.run(['run', '--json'])
    assert.equal(done.code, 0, done.stderr)
    const runId = done.events[0].runId
    const before = await lab.events(runId)
    const late = await lab.run(['cancel', runId, '--by', 'carol'])
    assert.equal(late.code, 8, late.stderr)
    assert.match(
      late.stderr,
      /error \[run_ended\]: run \S+ had already ended COMPLETED before this cancel could act: nothing was cancelled/,
    )
    assert.deepEqual(await lab.events(runId), before, 'nothing recorded')
    const json = await lab.run(['cancel', runId, '--json'])
    assert.equal(json.code, 8)
    assert.equal(JSON.parse(json.stderr.trim().split('\n').at(-1)!).error.code, 'run_ended')
  })
})
