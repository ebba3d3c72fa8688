/**
 * Crashes and races with real processes, part two (part one is crash-recovery.test.ts): a stale worker
 * fenced after its lease was taken over, two processes racing one idempotency key, and runs that meet
 * changed plugin versions when they are resumed, reconciled or picked up by a worker.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, sharedStores, wellFormed } from './fault-lab.ts'

let lab: FaultLab | undefined
afterEach(() => {
  lab?.close()
  lab = undefined
})

const count = (events: RunEvent[], type: string, actionId?: string) =>
  events.filter((e) => e.type === type && (!actionId || e.actionId === actionId)).length
const runIdOf = (exit: { events: RunEvent[] }) => exit.events[0].runId

describe('crash recovery: fencing, idempotency keys and changed versions', () => {
  for (const store of sharedStores)
    it(`fences a stale worker: after its lease expired and another took over, it cannot write (${store})`, async () => {
      lab = new FaultLab({ store, script: [{ tool: 'slow_pay', args: { amount: 4, ms: 400 } }, { final: 'done' }] })
      const stale = lab.spawn(['run', '--json'])
      const [start] = await stale.lines(1)
      while (!(await lab.events(start.runId)).some((e) => e.type === 'tool/start')) await new Promise((r) => setTimeout(r, 10))
      await lab.freeze(stale.child)
      await lab.leaseExpiry()
      const fresh = await lab.run(['resume', start.runId])
      assert.equal(fresh.code, 0, fresh.stderr)
      const before = await lab.events(start.runId)
      stale.child.kill('SIGCONT')
      const staleExit = await stale.exit
      assert.notEqual(staleExit.code, 0)
      assert.match(staleExit.stderr, /lease_lost/)
      const after = await lab.events(start.runId)
      assert.deepEqual(after, before, 'the stale worker wrote nothing')
      assert.equal(wellFormed(after), undefined)
      assert.equal(count(after, 'run/recovered'), 1)
      assert.equal(lab.payments().length, 1, 'both processes ran the payment under one key: one payment')
    })

  for (const store of sharedStores)
    it(`makes one refund when two processes submit the same idempotency key at once (${store})`, async () => {
      lab = new FaultLab({ store, script: [{ tool: 'refund', args: { order: 'O-7', amount: 20 } }, { final: 'refunded' }] })
      const [a, b] = await Promise.all([lab.run(['run', '--json']), lab.run(['run', '--json'])])
      assert.equal(a.code, 0, a.stderr)
      assert.equal(b.code, 0, b.stderr)
      assert.equal(lab.payments().length, 1)
      const ends = [...a.events, ...b.events].filter((e) => e.type === 'tool/end')
      assert.equal(ends.length, 2)
      assert.equal(ends.filter((e) => e.type === 'tool/end' && e.data.deduplicated).length, 1, "the second run used the first one's result")
      assert.equal((await lab.db().effect('refund:order:O-7'))?.status, 'committed')
    })

  it('refuses an idempotency key reused with other arguments, and the run goes on', async () => {
    lab = new FaultLab({
      script: [
        { tool: 'refund', args: { order: 'O-8', amount: 20 } },
        { tool: 'refund', args: { order: 'O-8', amount: 99 } },
        { final: 'ok' },
      ],
    })
    const exit = await lab.run(['run', '--json'])
    assert.equal(exit.code, 0, exit.stderr)
    const error = exit.events.find((e) => e.type === 'tool/error')
    assert.ok(error?.type === 'tool/error' && error.data.code === 'idempotency_conflict' && error.actionId === 's2.a1')
    assert.deepEqual(
      lab.payments().map((p) => p.amount),
      [20],
    )
  })

  it("lets a run blocked behind another run's unknown effect go on once that effect is settled", async () => {
    lab = new FaultLab({
      script: [{ tool: 'charge', args: { invoice: 'INV-1', amount: 50 } }, { final: 'charged' }],
      durability: { effectWaitMs: 200 },
    })
    const first = await lab.run(['run', '--json'], 'kill-in=charge')
    assert.equal(first.signal, 'SIGKILL')
    const second = await lab.run(['run', '--json'])
    assert.equal(second.code, 5)
    const blocked = second.events.at(-1)!
    assert.ok(
      blocked.type === 'run/paused' &&
        blocked.data.status === 'WAITING_RECONCILIATION' &&
        /belongs to .* whose effect is unknown/.test(blocked.data.reason),
    )
    await lab.leaseExpiry()
    assert.equal((await lab.run(['resume', runIdOf(first)])).code, 5, 'the first run waits for a person')
    assert.equal((await lab.run(['reconcile', runIdOf(first), 's1.a1', '--committed'])).code, 0)
    const resumed = await lab.run(['resume', runIdOf(second), '--json'])
    assert.equal(resumed.code, 0, resumed.stderr)
    const end = resumed.events.find((e) => e.type === 'tool/end')
    assert.ok(end?.type === 'tool/end' && end.data.deduplicated?.runId === runIdOf(first))
    assert.equal(lab.payments().length, 1)
  })

  it('leaves a run as it was when a reconcile is refused for a changed plugin version', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 10 } }, { final: 'paid' }] })
    const crashed = await lab.run(['run', '--json'], 'kill-in=pay_once')
    const runId = runIdOf(crashed)
    await lab.leaseExpiry()
    assert.equal((await lab.run(['resume', runId])).code, 5)
    lab.write({
      ...lab.options,
      policy: { path: new URL('fixtures/plugins/policy-rules-1.1', import.meta.url).pathname, config: { default: 'allow' } },
    })
    const refused = await lab.run(['reconcile', runId, 's1.a1', '--committed'])
    assert.equal(refused.code, 2)
    assert.equal((await lab.events(runId)).filter((e) => e.type === 'tool/reconciled').length, 0, 'nothing settled')
    const accepted = await lab.run(['reconcile', runId, 's1.a1', '--committed', '--accept-drift'])
    assert.equal(accepted.code, 0, accepted.stderr)
    assert.equal(lab.payments().length, 1)
  })

  it('suspends, rather than drives, a run a worker picks up under changed plugin versions', async () => {
    lab = new FaultLab({ script: [{ tool: 'lookup', args: {} }, { final: 'done' }] })
    const runId = (await lab.run(['submit'])).stdout.trim()
    lab.write({
      ...lab.options,
      policy: { path: new URL('fixtures/plugins/policy-rules-1.1', import.meta.url).pathname, config: { default: 'allow' } },
    })
    const worker = await lab.run(['worker', '--once', '--json'])
    assert.equal(worker.code, 0, worker.stderr)
    const events = await lab.events(runId)
    const paused = events.at(-1)!
    assert.ok(paused.type === 'run/paused' && paused.data.status === 'SUSPENDED' && paused.data.code === 'version_drift')
    assert.equal((await lab.run(['worker', '--once'])).code, 0)
    assert.equal((await lab.events(runId)).length, events.length, 'no worker takes a suspended run again')
    const accepted = await lab.run(['resume', runId, '--accept-drift'])
    assert.equal(accepted.code, 0, accepted.stderr)
  })

  it('detects a changed plugin version on resume: recorded, refused, then accepted on request', async () => {
    const pause = { id: 'ask', verdict: 'ask', match: { tool: 'pay_once' } }
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 3 } }, { final: 'done' }], rules: [pause] })
    const paused = await lab.run(['run', '--json'])
    assert.equal(paused.code, 5)
    const runId = runIdOf(paused)
    lab.write({
      ...lab.options,
      policy: { path: new URL('fixtures/plugins/policy-rules-1.1', import.meta.url).pathname, config: { allow: ['pay_once'] } },
    })

    const refused = await lab.run(['approve', runId, 's1.a1'])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /error \[version_drift\]: run \S+ started with other plugin versions \(policy-rules 1\.0\.0 → 1\.1\.0\)/)
    assert.equal(lab.payments().length, 0)
    const drift = (await lab.events(runId)).filter((e) => e.type === 'run/version-drift')
    assert.deepEqual(
      drift.map((e) => e.type === 'run/version-drift' && e.data.decision),
      ['refused'],
    )

    // The refused approve recorded nothing: the same command with --accept-drift goes through.
    const accepted = await lab.run(['approve', runId, 's1.a1', '--accept-drift'])
    assert.equal(accepted.code, 0, accepted.stderr)
    assert.equal(lab.payments().length, 1)
    const decisions = (await lab.events(runId)).filter((e) => e.type === 'tool/decision')
    assert.deepEqual(
      decisions.map((e) => e.producer),
      ['policy-rules@1.0.0', 'policy-rules@1.1.0'],
      'decided again under the new policy',
    )
  })
})
