/**
 * Following a run by cursor across processes, and workers: submitted runs driven by `cordage worker`,
 * each by one worker only, and a dead worker's run taken over by another.
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

const lookups = (n: number) => [...Array.from({ length: n }, () => ({ tool: 'lookup', args: {}, delayMs: 60 })), { final: 'done' }]

describe('following a run by cursor', () => {
  it('lets a client that lost its connection reconnect with its last seq: nothing missed, nothing twice', async () => {
    lab = new FaultLab({ script: lookups(8) })
    const running = lab.spawn(['run', '--json'])
    const [start] = await running.lines(1)

    const first = lab.spawn(['events', start.runId, '--follow', '--json'])
    const seen = await first.lines(12)
    first.child.kill('SIGKILL')
    await first.exit
    const received = seen.slice(0, 12)
    const cursor = received.at(-1)!.seq

    const second = await lab.run(['events', start.runId, '--follow', '--json', '--after', String(cursor)])
    assert.equal(second.code, 0, second.stderr)
    await running.exit
    const all = [...received, ...second.events]
    assert.deepEqual(
      all.map((e) => e.seq),
      (await lab.events(start.runId)).map((e) => e.seq),
    )
    assert.equal(wellFormed(all), undefined)
    assert.equal(all.at(-1)!.type, 'run/end', 'follow stops at the end of the run')
  })

  it('follows in code, from a cursor, until the run ends', async () => {
    lab = new FaultLab({ script: lookups(3) })
    const { Cordage } = await import('../core/host/app.ts')
    const app = await Cordage.fromPreset(lab.presetFile)
    const agent = app.agent('pay')
    const handle = agent.start()
    const got: RunEvent[] = []
    for await (const event of agent.follow(handle.runId, { after: 2 })) got.push(event)
    await handle.done
    assert.deepEqual(
      got.map((e) => e.seq),
      (await agent.store().load(handle.runId)).slice(2).map((e) => e.seq),
    )
    await app.stop()
  })
})

describe('workers', () => {
  for (const store of sharedStores)
    it(`drive submitted runs, each run by exactly one of them (${store})`, async () => {
      // Nobody dies here, so leases are long: on a busy machine a short one lapses between two heartbeats,
      // and the worker that took the run over rightly fences the first out (lease_lost), which is not this test.
      lab = new FaultLab({ store, script: lookups(2), durability: { leaseTtlMs: 10_000 } })
      const ids: string[] = []
      for (let i = 0; i < 6; i++) ids.push((await lab.run(['submit'])).stdout.trim())
      const workers = await Promise.all([
        lab.run(['worker', '--once', '--json']),
        lab.run(['worker', '--once', '--json']),
        lab.run(['worker', '--once', '--json']),
      ])
      for (const w of workers) assert.equal(w.code, 0, w.stderr)
      const drivenBy = new Map<string, number>()
      workers.forEach((w, i) => {
        for (const e of w.events) if (e.type === 'run/end') drivenBy.set(e.runId, drivenBy.has(e.runId) ? -1 : i)
      })
      assert.deepEqual([...drivenBy.keys()].sort(), [...ids].sort(), 'every submitted run was driven to its end')
      assert.ok(![...drivenBy.values()].includes(-1), 'no run was driven by two workers')
      for (const id of ids) {
        const events = await lab.events(id)
        assert.equal(wellFormed(events), undefined)
        assert.equal(events.filter((e) => e.type === 'run/recovered').length, 0, 'a submitted run is driven, not recovered')
      }
    })

  for (const store of sharedStores)
    it(`take over a run whose worker died, and record it (${store})`, async () => {
      lab = new FaultLab({ store, script: [{ tool: 'pay_idempotent', args: { amount: 3 } }, { final: 'done' }] })
      const id = (await lab.run(['submit'])).stdout.trim()
      const dead = await lab.run(['worker', '--once'], 'kill-in=pay_idempotent')
      assert.equal(dead.signal, 'SIGKILL')
      await lab.leaseExpiry()
      const next = await lab.run(['worker', '--once', '--json'])
      assert.equal(next.code, 0, next.stderr)
      const events = await lab.events(id)
      const recovered = events.find((e) => e.type === 'run/recovered')
      assert.ok(recovered?.type === 'run/recovered' && recovered.data.token === 2 && recovered.data.previous !== undefined)
      const end = events.at(-1)!
      assert.equal(end.type === 'run/end' && end.data.status, 'COMPLETED')
      assert.equal(lab.payments().length, 1)
    })
})
