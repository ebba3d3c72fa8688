/**
 * Two fault cases of issue 27, through the real `cordage` binary in child processes.
 *
 * Cancel racing a commit: a payment is in flight in a worker that cannot look at anything meanwhile
 * (the call blocks its process, as a request already sent does) when `cordage cancel` stores its
 * request. The cancel is accepted: the payment's outcome is recorded, the run ends CANCELLED at its
 * next safe point, and its `run/end` names the payment. A cancel that comes after the run ended says
 * so with its own exit code (8). On SQLite and, when a server is there, PostgreSQL.
 *
 * Accepting drift: a run waits for approval; its policy plugin changes. The approve is refused by the
 * harness (and says so, naming whose command it refused and how to go on); the same approve with
 * `--accept-drift` continues the run once, without asking for the approval again, unless the new
 * policy wants someone else to approve, or denies.
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

describe('accepting drift at an approval', () => {
  const ask = { id: 'ask-payments', verdict: 'ask', match: { tool: 'pay_once' } }
  const policy11 = { path: new URL('fixtures/plugins/policy-rules-1.1', import.meta.url).pathname, config: { default: 'ask' } }

  async function waiting(l: FaultLab): Promise<string> {
    const paused = await l.run(['run', '--json'])
    assert.equal(paused.code, 5, paused.stderr)
    return paused.events[0].runId
  }

  it('continues the run once: refused by the harness (and says so), then approved with --accept-drift, paid once', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 3 } }, { final: 'paid' }], rules: [ask] })
    const runId = await waiting(lab)
    lab.write({ ...lab.options, policy: policy11 })

    const refused = await lab.run(['approve', runId, 's1.a1', '--by', 'librarian'])
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, /error \[version_drift\]: run \S+ started with other plugin versions \(policy-rules 1\.0\.0 → 1\.1\.0\)/)
    assert.match(refused.stderr, /the harness refused to continue it under them: the approve given by librarian was not carried out/)
    assert.match(refused.stderr, /give the same command again with --accept-drift/)
    const line = (await lab.run(['events', runId])).stdout.split('\n').find((l) => l.includes('run/version-drift'))
    assert.match(
      line ?? '',
      /refused by the harness, not by librarian: plugins changed since the run started \(policy-rules 1\.0\.0 → 1\.1\.0\); librarian's approve was not carried out; to go on, give it again with --accept-drift/,
    )
    assert.equal(lab.payments().length, 0)

    const accepted = await lab.run(['approve', runId, 's1.a1', '--by', 'librarian', '--accept-drift', '--json'])
    assert.equal(accepted.code, 0, `asked for approval again after the drift was accepted: ${accepted.stderr}`)
    assert.equal(lab.payments().length, 1)
    const events = await lab.events(runId)
    assert.equal(wellFormed(events), undefined)
    assert.equal(count(events, 'tool/approval-requested'), 1, 'approval was asked once')
    assert.equal(count(events, 'tool/approval-decided'), 1)
    const decisions = events.filter((e): e is RunEvent<'tool/decision'> => e.type === 'tool/decision')
    assert.deepEqual(
      decisions.map((d) => [d.producer, d.data.verdict]),
      [
        ['policy-rules@1.0.0', 'ask'],
        ['policy-rules@1.1.0', 'ask'],
      ],
      'decided again under the new policy, which asks; the approval given with the accepted drift answers it',
    )
    const approval = events.find((e) => e.type === 'tool/approval-decided')!
    assert.ok(approval.type === 'tool/approval-decided' && approval.data.policyVersion === 'policy-rules@1.1.0')
    const start = events.find((e) => e.type === 'tool/start')!
    assert.equal(start.causation, approval.seq)
    const end = events.at(-1)!
    assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED')
  })

  it('asks again when the new policy names other approvers than the one who accepted the drift', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 3 } }, { final: 'paid' }], rules: [ask] })
    const runId = await waiting(lab)
    lab.write({
      ...lab.options,
      policy: { plugin: 'policy-rules', version: '^2.0.0', config: { default: 'allow', rules: [{ ...ask, approvers: ['alice'] }] } },
    })
    const accepted = await lab.run(['approve', runId, 's1.a1', '--by', 'librarian', '--accept-drift'])
    assert.equal(accepted.code, 5, accepted.stderr)
    assert.equal(lab.payments().length, 0, "librarian's approval does not answer a policy that wants alice")
    const notHers = await lab.run(['approve', runId, 's1.a1', '--by', 'librarian'])
    assert.match(
      notHers.stderr,
      /error \[approver_not_allowed\]: librarian may not decide action s1\.a1/,
      'librarian may not decide it now',
    )
    const alice = await lab.run(['approve', runId, 's1.a1', '--by', 'alice'])
    assert.equal(alice.code, 0, alice.stderr)
    assert.equal(lab.payments().length, 1)
  })

  it('asks again when the approval was given before the drift, not with it', async () => {
    lab = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 3 } }, { final: 'paid' }], rules: [ask] })
    const runId = await waiting(lab)
    const approved = await lab.run(['approve', runId, 's1.a1', '--by', 'librarian', '--no-resume'])
    assert.equal(approved.code, 5, approved.stderr)
    lab.write({ ...lab.options, policy: policy11 })
    const resumed = await lab.run(['resume', runId, '--accept-drift'])
    assert.equal(resumed.code, 5, 'an approval given under policy 1.0.0 does not answer 1.1.0')
    assert.equal(lab.payments().length, 0)
    assert.equal(count(await lab.events(runId), 'tool/approval-requested'), 2)
  })
})
