/**
 * The store contract as one suite. Every store plugin's test calls runStoreContract with a factory,
 * so memory, SQLite and PostgreSQL are held to the same promises.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AppendOptions, ApprovalGrant, CancelRequest, EffectWrite, Lease, RunEvent, StoreService } from 'cordage'
import { KernelWriter } from '../../core/store-writer.ts'

const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }

export function runEvents(runId: string, from: number, count: number, agent = 'a', time = 1000): RunEvent[] {
  const out: RunEvent[] = []
  for (let seq = from; seq < from + count; seq++) {
    out.push(seq === 1
      ? { type: 'run/start', seq, time, runId, schema: 1, producer: 'kernel@test', data: { agent, task: `task of ${runId}`, plugins: {}, services: {}, budgets: { maxSteps: 9, maxRepairs: 0 } } }
      : { type: 'step/start', seq, time: time + seq, runId, stepId: `s${seq}`, schema: 1, producer: 'kernel@test', data: { index: seq } })
  }
  return out
}

const endEvent = (runId: string, seq: number, time = 5000): RunEvent => ({
  type: 'run/end', seq, time, runId, schema: 1, producer: 'kernel@test', data: { status: 'FAILED', failureCode: 'tool_timeout', usage, steps: 0 },
})

/** A store's methods as the kernel calls them, with the kernel's writer added to every write. */
export interface KernelStore extends Omit<StoreService, 'append' | 'claim' | 'renew' | 'release' | 'claimNext' | 'requestCancel' | 'putGrant' | 'revokeGrant'> {
  append(runId: string, events: readonly RunEvent[], expectedSeq: number, options?: AppendOptions): Promise<void> | void
  claim(runId: string, worker: string, ttlMs: number): Promise<Lease | undefined>
  renew(lease: Lease, ttlMs: number): Promise<boolean>
  release(lease: Lease): Promise<void>
  claimNext(worker: string, ttlMs: number, filter?: { agents?: string[] }): Promise<Lease | undefined>
  requestCancel(runId: string, request: CancelRequest): Promise<void>
  putGrant?(grant: ApprovalGrant): Promise<void>
  revokeGrant?(id: string, by: string, at: number, reason?: string): Promise<ApprovalGrant | undefined>
  /** The store itself, for calls without the writer. */
  raw: StoreService
}

/** Write as the kernel does: the project's own tests may import the kernel's writer (core/store-writer.ts). */
export function asKernel(store: StoreService): KernelStore {
  const w = KernelWriter
  return Object.assign(Object.create(store) as StoreService, {
    raw: store,
    append: (runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions = {}) => store.append(runId, events, expectedSeq, { ...options, writer: w }),
    claim: (runId: string, worker: string, ttlMs: number) => store.claim(runId, worker, ttlMs, w),
    renew: (lease: Lease, ttlMs: number) => store.renew(lease, ttlMs, w),
    release: (lease: Lease) => store.release(lease, w),
    claimNext: (worker: string, ttlMs: number, filter?: { agents?: string[] }) => store.claimNext(worker, ttlMs, filter, w),
    requestCancel: (runId: string, request: CancelRequest) => store.requestCancel(runId, request, w),
    putGrant: store.putGrant && ((grant: ApprovalGrant) => store.putGrant!(grant, w)),
    revokeGrant: store.revokeGrant && ((id: string, by: string, at: number, reason?: string) => store.revokeGrant!(id, by, at, reason, w)),
  }) as unknown as KernelStore
}

export function runStoreContract(name: string, makeRawStore: () => Promise<StoreService> | StoreService) {
  const makeStore = async () => asKernel(await makeRawStore())
  describe(`store contract: ${name}`, () => {
    it('refuses every write that does not carry the kernel\'s writer, and writes nothing', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 2), 0)
      const raw = store.raw as unknown as Record<string, (...args: unknown[]) => unknown>
      const lease = { runId: 'r1', worker: 'w', token: 1, expiresAt: Date.now() + 1000 }
      const forged = { writer: 'cordage-kernel' }
      const writes: [string, unknown[]][] = [
        ['append', ['r1', runEvents('r1', 3, 1), 2]],
        ['append', ['r1', runEvents('r1', 3, 1), 2, { writer: forged }]],
        ['claim', ['r1', 'w', 1000]],
        ['claim', ['r1', 'w', 1000, forged]],
        ['renew', [lease, 1000]],
        ['release', [lease]],
        ['claimNext', ['w', 1000, undefined]],
        ['requestCancel', ['r1', { by: 'plugin', at: 1 }]],
        ...(raw.putGrant ? [['putGrant', [grant('g1', 'a', 'tool', 1)]], ['revokeGrant', ['g1', 'plugin', 1, 'x']]] as [string, unknown[]][] : []),
      ]
      for (const [method, args] of writes) {
        await assert.rejects(async () => raw[method].apply(store.raw, args), { code: 'store_write_refused' }, `${method} without the writer`)
      }
      assert.equal((await store.load('r1')).length, 2)
      assert.equal(await store.cancelRequest('r1'), undefined)
      if (store.grants) assert.deepEqual(await store.grants({ inactive: true }), [])
    })

    it('appends a batch and loads it back in seq order', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 3), 0)
      await store.append('r1', runEvents('r1', 4, 2), 3)
      assert.deepEqual((await store.load('r1')).map((e) => e.seq), [1, 2, 3, 4, 5])
      assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 5))
    })

    it('refuses a writer that is behind with seq_conflict and writes nothing', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 3), 0)
      await assert.rejects(async () => store.append('r1', runEvents('r1', 3, 2), 2), { code: 'seq_conflict' })
      await assert.rejects(async () => store.append('r1', runEvents('r1', 1, 1), 0), { code: 'seq_conflict' })
      assert.equal((await store.load('r1')).length, 3)
    })

    it('lets exactly one of two concurrent writers with the same expected seq win', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      const append = async (events: RunEvent[]) => store.append('r1', events, 1)
      const results = await Promise.allSettled([append(runEvents('r1', 2, 1)), append(runEvents('r1', 2, 2))])
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult
      assert.equal(rejected.reason.code, 'seq_conflict')
      const seqs = (await store.load('r1')).map((e) => e.seq)
      seqs.forEach((seq, i) => assert.equal(seq, i + 1))
    })

    it('refuses a batch with a gap or from another run, writing nothing of it', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      await assert.rejects(async () => store.append('r1', [...runEvents('r1', 2, 1), ...runEvents('r1', 4, 1)], 1), { code: 'invalid_event' })
      await assert.rejects(async () => store.append('r1', runEvents('r2', 2, 1), 1), { code: 'invalid_event' })
      assert.equal((await store.load('r1')).length, 1)
    })

    it('refuses a new run that does not begin with run/start', async () => {
      const store = await makeStore()
      await assert.rejects(async () => store.append('r9', runEvents('r9', 1, 2).slice(1).map((e) => ({ ...e, seq: 1 })), 0), { code: 'invalid_event' })
    })

    it('reads after a cursor, with a limit', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 6), 0)
      assert.deepEqual((await store.read('r1', { after: 2 })).map((e) => e.seq), [3, 4, 5, 6])
      assert.deepEqual((await store.read('r1', { after: 2, limit: 2 })).map((e) => e.seq), [3, 4])
      assert.deepEqual(await store.read('r1', { after: 6 }), [])
    })

    it('says run_not_found for a run it does not have', async () => {
      const store = await makeStore()
      await assert.rejects(store.load('nope'), { code: 'run_not_found' })
      await assert.rejects(store.read('nope'), { code: 'run_not_found' })
    })

    it('lists runs newest first with their status, filtered by status and agent', async () => {
      const store = await makeStore()
      await store.append('old', runEvents('old', 1, 2, 'a', 1000), 0)
      await store.append('new', runEvents('new', 1, 1, 'b', 2000), 0)
      await store.append('old', [endEvent('old', 3)], 2)
      const all = await store.list()
      assert.deepEqual(all.map((r) => [r.runId, r.agent, r.status, r.lastSeq]), [['new', 'b', 'RUNNING', 1], ['old', 'a', 'FAILED', 3]])
      assert.equal(all[1].failureCode, 'tool_timeout')
      assert.equal(all[1].task, 'task of old')
      assert.deepEqual((await store.list({ status: 'FAILED' })).map((r) => r.runId), ['old'])
      assert.deepEqual((await store.list({ agent: 'b' })).map((r) => r.runId), ['new'])
      assert.deepEqual((await store.list({ limit: 1 })).map((r) => r.runId), ['new'])
    })

    it('keeps what it returned unaffected by later appends', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 2), 0)
      const loaded = await store.load('r1')
      await store.append('r1', runEvents('r1', 3, 1), 2)
      assert.equal(loaded.length, 2)
    })

    it('records an intent and its outcome in the ledger with the events, atomically', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      await store.append('r1', runEvents('r1', 2, 1), 1, { effects: [intent('k1', 'r1', 's1.a1', 'h1')] })
      assert.equal((await store.effect('k1'))?.status, 'pending')
      await store.append('r1', runEvents('r1', 3, 1), 2, { effects: [{ op: 'outcome', key: 'k1', status: 'committed', receipt: 'FU-1', output: { ok: true }, at: 3 }] })
      const effect = await store.effect('k1')
      assert.deepEqual([effect?.status, effect?.receipt, effect?.output, effect?.attempts], ['committed', 'FU-1', { ok: true }, 1])
      // A failing append writes neither its events nor its ledger rows.
      await assert.rejects(async () => store.append('r1', runEvents('r1', 9, 1), 3, { effects: [intent('k2', 'r1', 's2.a1', 'h2')] }), { code: 'invalid_event' })
      assert.equal(await store.effect('k2'), undefined)
    })

    it('refuses an idempotency key used with other arguments, and reports one held by another run', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, { effects: [intent('k', 'r1', 's1.a1', 'h1')] })
      await store.append('r2', runEvents('r2', 1, 1), 0)
      await assert.rejects(async () => store.append('r2', runEvents('r2', 2, 1), 1, { effects: [intent('k', 'r2', 's1.a1', 'OTHER')] }), { code: 'idempotency_conflict' })
      await assert.rejects(async () => store.append('r2', runEvents('r2', 2, 1), 1, { effects: [intent('k', 'r2', 's1.a1', 'h1')] }), (e: { code: string; data: { runId: string } }) => e.code === 'effect_exists' && e.data.runId === 'r1')
      assert.equal((await store.load('r2')).length, 1, 'the refused batch wrote nothing')
      // The same run and action may try again: that is a retry, counted.
      await store.append('r1', runEvents('r1', 2, 1), 1, { effects: [intent('k', 'r1', 's1.a1', 'h1')] })
      assert.equal((await store.effect('k'))?.attempts, 2)
    })

    it('lets another run take over a key whose effect did not happen', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, { effects: [intent('k', 'r1', 's1.a1', 'h')] })
      await store.append('r1', runEvents('r1', 2, 1), 1, { effects: [{ op: 'outcome', key: 'k', status: 'not_committed', at: 2 }] })
      await store.append('r2', runEvents('r2', 1, 1), 0, { effects: [intent('k', 'r2', 's1.a1', 'h')] })
      assert.deepEqual([(await store.effect('k'))?.runId, (await store.effect('k'))?.status], ['r2', 'pending'])
    })

    it('gives a run to one worker at a time, fences a stale worker and lets an expired lease be taken', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      const a = await store.claim('r1', 'worker-a', 60_000)
      assert.ok(a)
      assert.equal(await store.claim('r1', 'worker-b', 60_000), undefined, 'a live lease is not taken')
      await store.append('r1', runEvents('r1', 2, 1), 1, { lease: a })
      assert.equal((await store.list())[0].owner, 'worker-a')

      const short = await store.claim('r1', 'worker-a', 1)
      await new Promise((r) => setTimeout(r, 20))
      const b = await store.claim('r1', 'worker-b', 60_000)
      assert.ok(b && b.token > short!.token, 'an expired lease is taken, with a larger token')
      await assert.rejects(async () => store.append('r1', runEvents('r1', 3, 1), 2, { lease: short! }), { code: 'lease_lost' })
      await store.append('r1', runEvents('r1', 3, 1), 2, { lease: b })
      // Behind and fenced at once: the lease is what the stale writer needs to hear about.
      await assert.rejects(async () => store.append('r1', runEvents('r1', 3, 1), 2, { lease: short! }), { code: 'lease_lost' })
      assert.equal(await store.renew(short!, 1000), false)
      assert.equal(await store.renew(b, 1000), true)
      await store.release(b)
      await assert.rejects(async () => store.append('r1', runEvents('r1', 4, 1), 3, { lease: b }), { code: 'lease_lost' })
      assert.ok(await store.claim('r1', 'worker-c', 1000), 'a released lease is free')
    })

    it('makes the writer of a new run its owner from the first event when it brings lease 1', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, { lease: { runId: 'r1', worker: 'starter', token: 1, expiresAt: Date.now() + 60_000 } })
      assert.equal(await store.claimNext('other', 60_000), undefined, 'nobody can claim it between its first event and its first step')
      assert.equal(await store.claim('r1', 'other', 60_000), undefined)
      await store.append('r1', runEvents('r1', 2, 1), 1, { lease: { runId: 'r1', worker: 'starter', token: 1, expiresAt: 0 } })
      assert.equal((await store.list())[0].owner, 'starter')
    })

    it('lets an idempotent tool take over a key whose effect is pending in another run', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, { effects: [intent('k', 'r1', 's1.a1', 'h')] })
      await store.append('r2', runEvents('r2', 1, 1), 0)
      await assert.rejects(async () => store.append('r2', runEvents('r2', 2, 1), 1, { effects: [intent('k', 'r2', 's1.a1', 'h')] }), { code: 'effect_exists' })
      await store.append('r2', runEvents('r2', 2, 1), 1, { effects: [{ ...intent('k', 'r2', 's1.a1', 'h'), takeover: true } as EffectWrite] })
      assert.equal((await store.effect('k'))?.runId, 'r2')
    })

    it('hands each run that needs a driver to one worker, oldest first', async () => {
      const store = await makeStore()
      await store.append('old', runEvents('old', 1, 1, 'a', 1000), 0)
      await store.append('new', runEvents('new', 1, 1, 'b', 2000), 0)
      await store.append('done', [...runEvents('done', 1, 1, 'a', 500), endEvent('done', 2)], 0)
      const claims = await Promise.all([store.claimNext('w1', 60_000), store.claimNext('w2', 60_000), store.claimNext('w3', 60_000)])
      assert.deepEqual(claims.map((c) => c?.runId).sort(), ['new', 'old', undefined].sort())
      assert.equal(claims[0]?.runId, 'old')
      assert.equal(await store.claimNext('w4', 60_000, { agents: ['a'] }), undefined)
    })

    it('keeps a cancel request until the run ends', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      assert.equal(await store.cancelRequest('r1'), undefined)
      await store.requestCancel('r1', { by: 'ops', reason: 'stop', at: 5 })
      await store.requestCancel('r1', { by: 'later', at: 6 })
      assert.deepEqual(await store.cancelRequest('r1'), { by: 'ops', reason: 'stop', at: 5 })
      await store.append('r1', [endEvent('r1', 2)], 1)
      assert.equal(await store.cancelRequest('r1'), undefined)
    })

    it('keeps standing grants: by agent and tool, active ones unless asked, revoked once', async () => {
      const store = await makeStore()
      assert.ok(store.putGrant && store.grants && store.revokeGrant, 'store contract 2.1.0: grants')
      const now = 10_000
      await store.putGrant(grant('g1', 'support', 'refund', now - 3))
      await store.putGrant(grant('g2', 'support', 'email', now - 2, { expiresAt: now - 1 }))
      await store.putGrant(grant('g3', 'other', 'refund', now - 1))
      await assert.rejects(store.putGrant(grant('g1', 'support', 'refund', now)), { code: 'invalid_input' })
      assert.deepEqual((await store.grants({ agent: 'support', now })).map((g) => g.id), ['g1'])
      assert.deepEqual((await store.grants({ agent: 'support', now, inactive: true })).map((g) => g.id), ['g1', 'g2'])
      assert.deepEqual((await store.grants({ tool: 'refund', now })).map((g) => g.id), ['g1', 'g3'])
      assert.deepEqual((await store.grants({ agent: 'support', now }))[0], grant('g1', 'support', 'refund', now - 3))
      const revoked = await store.revokeGrant('g1', 'alice', now, 'no longer needed')
      assert.deepEqual([revoked?.revokedBy, revoked?.revokedAt, revoked?.revokeReason], ['alice', now, 'no longer needed'])
      assert.equal((await store.revokeGrant('g1', 'bob', now + 1))?.revokedBy, 'alice', 'the first revocation stands')
      assert.equal(await store.revokeGrant('nope', 'bob', now), undefined)
      assert.deepEqual((await store.grants({ agent: 'support', now })).map((g) => g.id), [])
    })
  })
}

function grant(id: string, agent: string, tool: string, createdAt: number, extra: Partial<ApprovalGrant> = {}): ApprovalGrant {
  return { id, scope: 'grant', agent, tool, args: { pattern: { amount: { lte: 100 } } }, policyVersion: 'p@1+abc', by: 'alice', createdAt, source: { runId: 'r1', actionId: 's1.a1' }, ...extra }
}

function intent(key: string, runId: string, actionId: string, argsHash: string): EffectWrite {
  return { op: 'intent', key, runId, actionId, tool: 't', argsHash, policyVersion: 'p', attempt: 1, at: 1 }
}
