/**
 * Crashes with real processes: the `cordage` binary runs an agent in a child process that SIGKILLs
 * itself at a chosen point (fault-desk's CORDAGE_FAULT), then a new process takes the run over from
 * the SQLite store. Each test checks status, the side effects in the payment system, and the log.
 */
import assert from 'node:assert/strict'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, wellFormed } from './fault-lab.ts'

let lab: FaultLab | undefined
afterEach(() => {
  lab?.close()
  lab = undefined
})

const count = (events: RunEvent[], type: string, actionId?: string) =>
  events.filter((e) => e.type === type && (!actionId || e.actionId === actionId)).length
const runIdOf = (exit: { events: RunEvent[] }) => exit.events[0].runId

describe('crash recovery', () => {
  it('resumes a run killed right after the model asked for a tool, without asking the model again', async () => {
    // A long lease, so the run is still owned when the next process starts, however slow the machine.
    lab = new FaultLab({ script: [{ tool: 'lookup', args: {} }, { final: 'done' }], durability: { leaseTtlMs: 120_000 } })
    const crashed = await lab.run(['run', '--json'], 'kill-after=tool/start#1')
    assert.equal(crashed.signal, 'SIGKILL')
    const runId = runIdOf(crashed)

    const busy = await lab.run(['resume', runId])
    assert.equal(busy.code, 7, "while the dead worker's lease lasts, the run is still owned")
    assert.match(busy.stderr, /run_busy/)

    await lab.expireLease(runId)
    const resumed = await lab.run(['resume', runId, '--json'])
    assert.equal(resumed.code, 0, resumed.stderr)
    const events = await lab.events(runId)
    assert.equal(wellFormed(events), undefined)
    const end = events.at(-1)!
    assert.equal(end.type === 'run/end' && end.data.status, 'COMPLETED')
    assert.equal(count(events, 'step/model-request', undefined), 2, 'step 1 was not asked again: one request for s1, one for s2')
    assert.equal(events.filter((e) => e.type === 'step/model-request' && e.stepId === 's1').length, 1)
    assert.equal(count(events, 'run/recovered'), 1)
    assert.equal(count(events, 'tool/end', 's1.a1'), 1)
  })

  it('asks the model again, for the same step, when the process died before its answer was on record', async () => {
    lab = new FaultLab({
      script: [
        { tool: 'lookup', args: {} },
        { final: 'done', delayMs: 300 },
      ],
    })
    const crashed = await lab.run(['run', '--json'], 'kill-after=step/model-request#2')
    assert.equal(crashed.signal, 'SIGKILL')
    await lab.leaseExpiry()
    const resumed = await lab.run(['resume', runIdOf(crashed)])
    assert.equal(resumed.code, 0, resumed.stderr)
    const events = await lab.events(runIdOf(crashed))
    assert.deepEqual(
      events.filter((e) => e.type === 'step/start').map((e) => e.stepId),
      ['s1', 's2'],
      'no step was skipped or added',
    )
    assert.deepEqual(
      events.filter((e) => e.type === 'step/model-request').map((e) => e.stepId),
      ['s1', 's2', 's2'],
    )
    assert.equal(events.filter((e) => e.type === 'step/model-response').length, 2)
  })

  it('verifies a final answer that was on record when the process died, without asking the model again', async () => {
    lab = new FaultLab({ script: [{ final: 'done' }] })
    const crashed = await lab.run(['run', '--json'], 'kill-after=verify/start#1')
    assert.equal(crashed.signal, 'SIGKILL')
    await lab.leaseExpiry()
    assert.equal((await lab.run(['resume', runIdOf(crashed)])).code, 0)
    const events = await lab.events(runIdOf(crashed))
    assert.equal(events.filter((e) => e.type === 'step/model-request').length, 1)
    assert.deepEqual(
      events.slice(-5).map((e) => e.type),
      ['verify/start', 'verify/end', 'step/end', 'turn/end', 'run/end'],
    )
  })

  it('pays once when the process died after an idempotent payment committed', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_idempotent', args: { amount: 10 } }, { final: 'paid' }] })
    const crashed = await lab.run(['run', '--json'], 'kill-in=pay_idempotent')
    assert.equal(crashed.signal, 'SIGKILL')
    assert.equal(lab.payments().length, 1, 'the payment committed before the crash')
    await lab.leaseExpiry()
    const resumed = await lab.run(['resume', runIdOf(crashed)])
    assert.equal(resumed.code, 0, resumed.stderr)
    assert.equal(lab.payments().length, 1, 'retried under the same key: the payment system deduplicated it')
    const starts = (await lab.events(runIdOf(crashed))).filter((e) => e.type === 'tool/start')
    assert.deepEqual(
      starts.map((e) => e.type === 'tool/start' && [e.data.attempt, e.data.idempotencyKey]),
      [
        [1, `${runIdOf(crashed)}/s1.a1`],
        [2, `${runIdOf(crashed)}/s1.a1`],
      ],
    )
  })

  it('waits for a person when a non-idempotent payment was lost, and completes with one payment once told it committed', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 10 } }, { final: 'paid' }] })
    const crashed = await lab.run(['run', '--json'], 'kill-in=pay_once')
    const runId = runIdOf(crashed)
    await lab.leaseExpiry()
    const resumed = await lab.run(['resume', runId, '--json'])
    assert.equal(resumed.code, 5)
    const paused = resumed.events.at(-1)!
    assert.ok(paused.type === 'run/paused' && paused.data.status === 'WAITING_RECONCILIATION' && paused.data.code === 'unknown_effect')
    assert.equal(lab.payments().length, 1, 'not paid a second time')

    const refused = await lab.run(['resume', runId])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /cordage reconcile/)

    const settled = await lab.run(['reconcile', runId, 's1.a1', '--committed', '--receipt', 'PAY-1', '--by', 'alice', '--json'])
    assert.equal(settled.code, 0, settled.stderr)
    assert.equal(lab.payments().length, 1)
    const reconciled = (await lab.events(runId)).find((e) => e.type === 'tool/reconciled')
    assert.ok(
      reconciled?.type === 'tool/reconciled' &&
        reconciled.data.committed &&
        reconciled.data.by === 'operator:alice' &&
        reconciled.data.receipt === 'PAY-1',
    )
    assert.equal((await lab.db().effect(`${runId}/s1.a1`))?.status, 'committed')
  })

  it('runs a lost non-idempotent call again, under the same key, once told it did not commit', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 10 } }, { final: 'paid' }] })
    const crashed = await lab.run(['run', '--json'], 'kill-after=tool/start#1')
    assert.equal(lab.payments().length, 0, 'the process died before the tool ran')
    await lab.leaseExpiry()
    assert.equal((await lab.run(['resume', runIdOf(crashed)])).code, 5)
    const settled = await lab.run(['reconcile', runIdOf(crashed), 's1.a1', '--not-committed'])
    assert.equal(settled.code, 0, settled.stderr)
    assert.deepEqual(
      lab.payments().map((p) => p.key),
      [`${runIdOf(crashed)}/s1.a1`],
    )
  })

  it('asks a tool that can reconcile, and neither pays twice nor waits for a person', async () => {
    lab = new FaultLab({
      script: [{ tool: 'pay_checked', args: { amount: 10 } }, { tool: 'pay_checked', args: { amount: 20 } }, { final: 'paid' }],
    })
    const first = await lab.run(['run', '--json'], 'kill-in=pay_checked')
    const runId = runIdOf(first)
    await lab.leaseExpiry()
    // The second call is killed before it runs: the payment system says it did not happen.
    const second = await lab.run(['resume', runId], 'kill-after=tool/start#1')
    assert.equal(second.signal, 'SIGKILL')
    await lab.leaseExpiry()
    const done = await lab.run(['resume', runId])
    assert.equal(done.code, 0, done.stderr)
    assert.deepEqual(
      lab.payments().map((p) => p.amount),
      [10, 20],
    )
    const reconciled = (await lab.events(runId)).filter((e) => e.type === 'tool/reconciled')
    assert.deepEqual(
      reconciled.map((e) => e.type === 'tool/reconciled' && [e.actionId, e.data.committed, e.data.by]),
      [
        ['s1.a1', true, 'fault-desk@1.0.0:reconcile'],
        ['s2.a1', false, 'fault-desk@1.0.0:reconcile'],
      ],
    )
  })

  it('survives a restart while waiting for approval: a new process approves and the payment happens once', async () => {
    lab = new FaultLab({
      script: [{ tool: 'pay_once', args: { amount: 10 } }, { final: 'paid' }],
      rules: [{ id: 'payments-ask', verdict: 'ask', match: { tool: 'pay_*' } }],
    })
    const crashed = await lab.run(['run', '--json'], 'kill-after=run/paused#1')
    assert.equal(crashed.signal, 'SIGKILL')
    const runId = runIdOf(crashed)
    const types = (await lab.events(runId)).map((e) => e.type)
    assert.ok(types.indexOf('run/checkpoint') < types.indexOf('tool/approval-requested'))
    // The pause released nothing (the process died), but a paused run's lease is given up before the pause is recorded? It is not: wait it out.
    await lab.leaseExpiry()
    const approved = await lab.run(['approve', runId, 's1.a1', '--by', 'bob'])
    assert.equal(approved.code, 0, approved.stderr)
    assert.equal(lab.payments().length, 1)
  })

  it('keeps the result of one of two calls when the other times out, and asks whether the slow one took effect', async () => {
    lab = new FaultLab({
      script: [
        {
          calls: [
            { tool: 'pay_idempotent', args: { amount: 5 } },
            { tool: 'slow_pay', args: { amount: 7, ms: 600 } },
          ],
        },
        { final: 'done' },
      ],
      desk: { slowPayTimeoutMs: 150 },
    })
    const exit = await lab.run(['run', '--json'])
    assert.equal(exit.code, 5)
    const runId = runIdOf(exit)
    const events = await lab.events(runId)
    assert.equal(count(events, 'tool/end', 's1.a1'), 1)
    const timeout = events.find((e) => e.type === 'tool/error' && e.actionId === 's1.a2')
    assert.ok(timeout?.type === 'tool/error' && timeout.data.code === 'tool_timeout')
    const paused = events.at(-1)!
    assert.ok(paused.type === 'run/paused' && paused.data.status === 'WAITING_RECONCILIATION' && paused.data.actionId === 's1.a2')
    // The slow call went on and committed after its time limit; a person who checks says so.
    assert.deepEqual(
      lab
        .payments()
        .map((p) => p.amount)
        .sort(),
      [5, 7],
    )
    assert.equal((await lab.run(['reconcile', runId, 's1.a2', '--committed'])).code, 0)
    assert.equal(lab.payments().length, 2)
  })

  it('ends CANCELLED listing the payment that committed while the cancel raced it', async () => {
    // The payment waits (up to 8 s, under its 10 s limit) and commits as soon as the cancel reaches it,
    // within the grace: a commit racing the cancel, however long the second process takes to start.
    lab = new FaultLab({
      script: [{ tool: 'slow_pay', args: { amount: 9, ms: 8000 } }, { final: 'done' }],
      durability: { cancelGraceMs: 4000 },
    })
    const running = lab.spawn(['run', '--json'])
    const [start] = await running.lines(1)
    while (!(await lab.events(start.runId)).some((e) => e.type === 'tool/start')) await new Promise((r) => setTimeout(r, 20))
    const cancel = await lab.run(['cancel', start.runId, '--by', 'carol', '--reason', 'customer called'])
    const run = await running.exit
    assert.equal(run.code, 6, run.stderr)
    assert.equal(cancel.code, 6, cancel.stderr)
    const events = await lab.events(start.runId)
    const end = events.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'CANCELLED')
    assert.deepEqual(
      end.data.effects?.committed.map((e) => [e.actionId, e.tool, e.receipt]),
      [['s1.a1', 'slow_pay', 'PAY-1']],
    )
    const requested = events.find((e) => e.type === 'run/cancel-requested')
    const paid = events.find((e) => e.type === 'tool/end')
    assert.ok(
      requested?.type === 'run/cancel-requested' && requested.data.by === 'carol' && paid && requested.data.requestedAt <= paid.time,
    )
    assert.equal(lab.payments().length, 1)
  })
})
