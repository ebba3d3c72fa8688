/**
 * Fencing beyond the store (issue 10, finding 13), with real processes frozen by SIGSTOP and thawed by
 * SIGCONT. A worker frozen past its lease lets another worker take the run over; when it thaws it must
 * not land a second effect. The kernel checks the lease before a side-effecting call starts, and hands
 * tools the lease's fencing token for the system they write to; what is left (a call already in flight
 * at a target that ignores the token) is the documented residual window, shown by the last case.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { type Exit, FaultLab, sharedStores } from '../fault-lab.ts'

const labs: FaultLab[] = []
after(() => {
  for (const lab of labs) lab.close()
})

/** The process's state letter from /proc (T: stopped). */
function state(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0]
}

async function until(test: () => boolean, what: string, ms = 15_000) {
  const end = Date.now() + ms
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * Resolves once the run's tool/start is in the store: the call is under way. Fails at once, with what
 * the worker printed, when the worker ended first.
 */
async function callStarted(l: FaultLab, worker: { exit: Promise<Exit> }) {
  let ended: Exit | undefined
  void worker.exit.then((exit) => {
    ended = exit
  })
  const end = Date.now() + 15_000
  for (;;) {
    if (ended) throw new Error(`the worker ended (exit ${ended.code}) before the call started: ${ended.stderr}`)
    const runs = await l.db().list({ limit: 1 })
    // The tool's own marker, not tool/start: a freeze between the two would stop the call before it is in flight.
    if (runs.length && existsSync(join(l.dir, 'payments.jsonl.in-flight'))) return
    if (Date.now() > end) throw new Error('the call never started')
    await new Promise((r) => setTimeout(r, 10))
  }
}

function lab(store: 'sqlite' | 'postgres', tool: string, ms: number) {
  const made = new FaultLab({ store, script: [{ tool, args: { amount: 25, ms } }, { final: 'paid' }], durability: { leaseTtlMs: 1000 } })
  labs.push(made)
  return made
}

for (const store of sharedStores) {
  describe(`a worker frozen past its lease (${store})`, () => {
    it('does not start a side-effecting call when it thaws after another worker took the run over', async () => {
      const l = lab(store, 'pay_late', 0)
      // Worker A freezes itself the moment its intent and tool/start are durable, before the call starts.
      const a = l.spawn(['run', '--json'], 'stop-after=tool/start#1')
      await until(() => state(a.child.pid!) === 'T', 'worker A is stopped')
      const runId = (await l.db().list({ limit: 1 }))[0].runId
      await l.leaseExpiry()
      // Worker B takes the run over: the call has no outcome, the payment system says it did not happen.
      const b = await l.run(['resume', runId, '--json'])
      assert.equal(b.code, 0, b.stderr)
      assert.equal(l.payments().length, 1)
      a.child.kill('SIGCONT')
      const thawed = await a.exit
      assert.notEqual(thawed.code, 0, 'worker A stops: it no longer owns the run')
      assert.match(thawed.stderr, /lease_lost/)
      assert.deepEqual(
        l.payments().map((p) => p.tool),
        ['pay_late'],
        'one payment, made by worker B',
      )
      const events = await l.events(runId)
      assert.equal(events.at(-1)!.type, 'run/end')
      assert.equal(events.filter((e) => e.type === 'run/recovered').length, 1)
    })

    it("hands tools the fencing token: a target that checks it refuses the thawed worker's late write", async () => {
      const l = lab(store, 'pay_fenced', 1500)
      const a = l.spawn(['run', '--json'])
      // Freeze worker A inside the call, while it waits before paying.
      await callStarted(l, a)
      await l.freeze(a.child)
      const runId = (await l.db().list({ limit: 1 }))[0].runId
      await l.leaseExpiry()
      const b = await l.run(['resume', runId, '--json'])
      assert.equal(b.code, 0, b.stderr)
      const starts = (await l.events(runId)).filter((e): e is RunEvent<'tool/start'> => e.type === 'tool/start')
      assert.equal(starts.length, 2, 'B ran the call again after reconcile said it had not happened')
      a.child.kill('SIGCONT')
      await a.exit
      assert.equal(l.payments().length, 1, "the payment system refused worker A's older token")
    })

    it('without a fencing token at the target, a call already in flight when the worker froze can still land (the residual window)', async () => {
      const l = lab(store, 'pay_late', 1500)
      const a = l.spawn(['run', '--json'])
      await callStarted(l, a)
      await l.freeze(a.child)
      const runId = (await l.db().list({ limit: 1 }))[0].runId
      await l.leaseExpiry()
      assert.equal((await l.run(['resume', runId, '--json'])).code, 0)
      a.child.kill('SIGCONT')
      await a.exit
      // docs/concepts/durability.md, "Fencing": this is why tools should pass io.fencingToken on.
      assert.equal(l.payments().length, 2)
      // The log shows one committed outcome: A could not record its own.
      const ends = (await l.events(runId)).filter((e) => e.type === 'tool/end')
      assert.equal(ends.length, 1)
    })
  })
}
