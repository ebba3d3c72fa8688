/**
 * The store contract as one suite. Every store plugin's test calls runStoreContract with a factory,
 * so memory, SQLite and PostgreSQL are held to the same promises.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  chainHash,
  snapshotLink,
  type AppendOptions,
  type ApprovalGrant,
  type CancelRequest,
  type ClaimFilter,
  type CordageError,
  type EffectWrite,
  type Lease,
  type RunEvent,
  type StoreService,
} from 'cordage'
import { KernelWriter } from '../../core/kernel/store-writer.ts'
import { runThreadContract } from './store-threads.ts'
import { runArtifactContract } from './store-artifacts.ts'

const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }

export function runEvents(runId: string, from: number, count: number, agent = 'a', time = 1000): RunEvent[] {
  const out: RunEvent[] = []
  for (let seq = from; seq < from + count; seq++) {
    out.push(
      seq === 1
        ? {
            type: 'run/start',
            seq,
            time,
            runId,
            schema: 1,
            producer: 'kernel@test',
            data: { agent, task: `task of ${runId}`, plugins: {}, services: {}, budgets: { maxSteps: 9, maxRepairs: 0 } },
          }
        : { type: 'step/start', seq, time: time + seq, runId, stepId: `s${seq}`, schema: 1, producer: 'kernel@test', data: { index: seq } },
    )
  }
  return out
}

export const endEvent = (runId: string, seq: number, time = 5000): RunEvent => ({
  type: 'run/end',
  seq,
  time,
  runId,
  schema: 1,
  producer: 'kernel@test',
  data: { status: 'FAILED', failureCode: 'tool_timeout', usage, steps: 0 },
})

/** A store's methods as the kernel calls them, with the kernel's writer added to every write. */
export interface KernelStore
  extends Omit<
    StoreService,
    'append' | 'claim' | 'renew' | 'release' | 'claimNext' | 'requestCancel' | 'putGrant' | 'revokeGrant' | 'closeThread' | 'putArtifact'
  > {
  append(runId: string, events: readonly RunEvent[], expectedSeq: number, options?: AppendOptions): Promise<void> | void
  claim(runId: string, worker: string, ttlMs: number): Promise<Lease | undefined>
  renew(lease: Lease, ttlMs: number): Promise<boolean>
  release(lease: Lease): Promise<void>
  claimNext(worker: string, ttlMs: number, filter?: ClaimFilter): Promise<Lease | undefined>
  requestCancel(runId: string, request: CancelRequest): Promise<void>
  putGrant?(grant: ApprovalGrant): Promise<void>
  revokeGrant?(id: string, by: string, at: number, reason?: string): Promise<ApprovalGrant | undefined>
  closeThread?(threadId: string, close: { by: string; at: number; reason?: string }): Promise<void>
  putArtifact?(artifact: Parameters<NonNullable<StoreService['putArtifact']>>[0]): ReturnType<NonNullable<StoreService['putArtifact']>>
  /** The store itself, for calls without the writer. */
  raw: StoreService
}

/** Write as the kernel does: the project's own tests may import the kernel's writer (core/kernel/store-writer.ts). */
export function asKernel(store: StoreService): KernelStore {
  const w = KernelWriter
  const writes = {
    raw: store,
    append: (runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions = {}) =>
      store.append(runId, events, expectedSeq, { ...options, writer: w }),
    claim: (runId: string, worker: string, ttlMs: number) => store.claim(runId, worker, ttlMs, w),
    renew: (lease: Lease, ttlMs: number) => store.renew(lease, ttlMs, w),
    release: (lease: Lease) => store.release(lease, w),
    claimNext: (worker: string, ttlMs: number, filter?: ClaimFilter) => store.claimNext(worker, ttlMs, filter, w),
    requestCancel: (runId: string, request: CancelRequest) => store.requestCancel(runId, request, w),
    putGrant: store.putGrant && ((grant: ApprovalGrant) => store.putGrant!(grant, w)),
    revokeGrant: store.revokeGrant && ((id: string, by: string, at: number, reason?: string) => store.revokeGrant!(id, by, at, reason, w)),
    closeThread:
      store.closeThread &&
      ((threadId: string, close: { by: string; at: number; reason?: string }) => store.closeThread!(threadId, close, w)),
    putArtifact:
      store.putArtifact && ((artifact: Parameters<NonNullable<StoreService['putArtifact']>>[0]) => store.putArtifact!(artifact, w)),
  }
  // Defined, not assigned: the store's class is frozen, so its inherited write methods cannot be
  // shadowed by assignment on an object made from it.
  const view = Object.create(store) as StoreService
  for (const [key, value] of Object.entries(writes)) Object.defineProperty(view, key, { value, enumerable: true })
  return view as unknown as KernelStore
}

/** What a store plugin's test gives the suite besides a way to make stores. */
export interface ContractOptions {
  /**
   * Run SQL on the database of `store` from outside it, as damage or an edit would (a store that keeps
   * events as text: store-sqlite, store-postgres). With it the suite checks that reads refuse a history
   * that does not hold together, and that `verify` finds edits.
   */
  damage?: (store: StoreService, sql: string) => Promise<void> | void
  /** The SQL literal of a chain link (the digest's bytes) given as hex, in the store's dialect; with `damage`. */
  link?: (hex: string) => string
}

/** The factory's options: `chainKey` for a store that chains events under a key (HMAC). */
export interface MakeOptions {
  chainKey?: string
}

export function runStoreContract(
  name: string,
  makeRawStore: (options?: MakeOptions) => Promise<StoreService> | StoreService,
  contract: ContractOptions = {},
) {
  const makeStore = async (options?: MakeOptions) => asKernel(await makeRawStore(options))
  describe(`store contract: ${name}`, () => {
    it("refuses every write that does not carry the kernel's writer, and writes nothing", async () => {
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
        ...(raw.putGrant
          ? ([
              ['putGrant', [grant('g1', 'a', 'tool', 1)]],
              ['revokeGrant', ['g1', 'plugin', 1, 'x']],
            ] as [string, unknown[]][])
          : []),
      ]
      for (const [method, args] of writes) {
        await assert.rejects(
          async () => raw[method].apply(store.raw, args),
          { code: 'store_write_refused' },
          `${method} without the writer`,
        )
      }
      assert.equal((await store.load('r1')).length, 2)
      assert.equal(await store.cancelRequest('r1'), undefined)
      if (store.grants) assert.deepEqual(await store.grants({ inactive: true }), [])
    })

    it('appends a batch and loads it back in seq order', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 3), 0)
      await store.append('r1', runEvents('r1', 4, 2), 3)
      assert.deepEqual(
        (await store.load('r1')).map((e) => e.seq),
        [1, 2, 3, 4, 5],
      )
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
      await assert.rejects(async () => store.append('r1', [...runEvents('r1', 2, 1), ...runEvents('r1', 4, 1)], 1), {
        code: 'invalid_event',
      })
      await assert.rejects(async () => store.append('r1', runEvents('r2', 2, 1), 1), { code: 'invalid_event' })
      assert.equal((await store.load('r1')).length, 1)
    })

    it('refuses a new run that does not begin with run/start', async () => {
      const store = await makeStore()
      await assert.rejects(
        async () =>
          store.append(
            'r9',
            runEvents('r9', 1, 2)
              .slice(1)
              .map((e) => ({ ...e, seq: 1 })),
            0,
          ),
        { code: 'invalid_event' },
      )
    })

    it('reads after a cursor, with a limit', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 6), 0)
      assert.deepEqual(
        (await store.read('r1', { after: 2 })).map((e) => e.seq),
        [3, 4, 5, 6],
      )
      assert.deepEqual(
        (await store.read('r1', { after: 2, limit: 2 })).map((e) => e.seq),
        [3, 4],
      )
      assert.deepEqual(await store.read('r1', { after: 6 }), [])
    })

    it('reads while another writer appends: every read holds together, none is refused', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0)
      let last = 1
      const writer = (async () => {
        for (let i = 0; i < 30; i++) {
          await store.append(
            'r1',
            runEvents('r1', last + 1, 2),
            last,
            i % 10 === 9 ? { snapshot: { version: 1, state: { at: last + 2 } } } : {},
          )
          last += 2
        }
      })()
      const reads: Promise<{ after: number; events: RunEvent[] }>[] = []
      const read = async (after: number, events: Promise<RunEvent[]>) => ({ after, events: await events })
      for (let i = 0; i < 30; i++) {
        // At the head, just before it and just beyond it: where an append in between would show.
        for (const after of [last, last - 1, last + 1])
          reads.push(read(after, store.read('r1', { after })), read(after, store.read('r1', { after, limit: 1 })))
        reads.push(
          read(0, store.load('r1')),
          store.loadRun('r1').then((run) => ({ after: run.snapshot?.seq ?? 0, events: run.events })),
        )
        await new Promise((resolve) => setImmediate(resolve))
      }
      await writer
      for (const { after, events } of await Promise.all(reads)) events.forEach((event, i) => assert.equal(event.seq, after + i + 1))
      assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 61))
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
      assert.deepEqual(
        all.map((r) => [r.runId, r.agent, r.status, r.lastSeq]),
        [
          ['new', 'b', 'RUNNING', 1],
          ['old', 'a', 'FAILED', 3],
        ],
      )
      assert.equal(all[1].failureCode, 'tool_timeout')
      assert.equal(all[1].task, 'task of old')
      assert.deepEqual(
        (await store.list({ status: 'FAILED' })).map((r) => r.runId),
        ['old'],
      )
      assert.deepEqual(
        (await store.list({ agent: 'b' })).map((r) => r.runId),
        ['new'],
      )
      assert.deepEqual(
        (await store.list({ limit: 1 })).map((r) => r.runId),
        ['new'],
      )
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
      await store.append('r1', runEvents('r1', 3, 1), 2, {
        effects: [{ op: 'outcome', key: 'k1', status: 'committed', receipt: 'FU-1', output: { ok: true }, at: 3 }],
      })
      const effect = await store.effect('k1')
      assert.deepEqual([effect?.status, effect?.receipt, effect?.output, effect?.attempts], ['committed', 'FU-1', { ok: true }, 1])
      // A failing append writes neither its events nor its ledger rows.
      await assert.rejects(async () => store.append('r1', runEvents('r1', 9, 1), 3, { effects: [intent('k2', 'r1', 's2.a1', 'h2')] }), {
        code: 'invalid_event',
      })
      assert.equal(await store.effect('k2'), undefined)
    })

    it('refuses an idempotency key used with other arguments, and reports one held by another run', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, { effects: [intent('k', 'r1', 's1.a1', 'h1')] })
      await store.append('r2', runEvents('r2', 1, 1), 0)
      await assert.rejects(async () => store.append('r2', runEvents('r2', 2, 1), 1, { effects: [intent('k', 'r2', 's1.a1', 'OTHER')] }), {
        code: 'idempotency_conflict',
      })
      await assert.rejects(
        async () => store.append('r2', runEvents('r2', 2, 1), 1, { effects: [intent('k', 'r2', 's1.a1', 'h1')] }),
        (e: { code: string; data: { runId: string } }) => e.code === 'effect_exists' && e.data.runId === 'r1',
      )
      assert.equal((await store.load('r2')).length, 1, 'the refused batch wrote nothing')
      // The same run and action may try again: that is a retry, counted.
      await store.append('r1', runEvents('r1', 2, 1), 1, { effects: [intent('k', 'r1', 's1.a1', 'h1')] })
      assert.equal((await store.effect('k'))?.attempts, 2)
    })

    it('keeps the observation of an outcome with it, and reads it back (since 2.2.0)', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, {
        effects: [intent('k1', 'r1', 's1.a1', 'h1'), intent('k2', 'r1', 's1.a2', 'h2')],
      })
      await store.append('r1', runEvents('r1', 2, 1), 1, {
        effects: [
          {
            op: 'outcome',
            key: 'k1',
            status: 'committed',
            receipt: 'FU-1',
            output: { receipt: 'FU-1' },
            observation: 'Follow-up FU-1 recorded [source: ticket/T-1#FU-1]',
            at: 2,
          },
          { op: 'outcome', key: 'k2', status: 'committed', output: null, at: 2 },
        ],
      })
      const kept = await store.effect('k1')
      assert.deepEqual(
        [kept?.status, kept?.output, kept?.observation],
        ['committed', { receipt: 'FU-1' }, 'Follow-up FU-1 recorded [source: ticket/T-1#FU-1]'],
      )
      assert.equal((await store.effect('k2'))?.observation, undefined, 'an outcome without one has none')
      // A retry that fails leaves no stale observation behind.
      await store.append('r1', runEvents('r1', 3, 1), 2, { effects: [intent('k1', 'r1', 's1.a1', 'h1')] })
      await store.append('r1', runEvents('r1', 4, 1), 3, { effects: [{ op: 'outcome', key: 'k1', status: 'failed', at: 4 }] })
      assert.equal((await store.effect('k1'))?.observation, undefined)
      if (store.effectsOf) {
        assert.deepEqual(
          (await store.effectsOf('r1')).map((e) => e.key),
          ['k1', 'k2'],
        )
        await store.append('r2', runEvents('r2', 1, 1), 0)
        assert.deepEqual(await store.effectsOf('r2'), [])
        await assert.rejects(store.effectsOf('nope'), { code: 'run_not_found' })
      }
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
      await store.append('r1', runEvents('r1', 1, 1), 0, {
        lease: { runId: 'r1', worker: 'starter', token: 1, expiresAt: Date.now() + 60_000 },
      })
      assert.equal(await store.claimNext('other', 60_000), undefined, 'nobody can claim it between its first event and its first step')
      assert.equal(await store.claim('r1', 'other', 60_000), undefined)
      await store.append('r1', runEvents('r1', 2, 1), 1, { lease: { runId: 'r1', worker: 'starter', token: 1, expiresAt: 0 } })
      assert.equal((await store.list())[0].owner, 'starter')
    })

    it('lets an idempotent tool take over a key whose effect is pending in another run', async () => {
      const store = await makeStore()
      await store.append('r1', runEvents('r1', 1, 1), 0, { effects: [intent('k', 'r1', 's1.a1', 'h')] })
      await store.append('r2', runEvents('r2', 1, 1), 0)
      await assert.rejects(async () => store.append('r2', runEvents('r2', 2, 1), 1, { effects: [intent('k', 'r2', 's1.a1', 'h')] }), {
        code: 'effect_exists',
      })
      await store.append('r2', runEvents('r2', 2, 1), 1, {
        effects: [{ ...intent('k', 'r2', 's1.a1', 'h'), takeover: true } as EffectWrite],
      })
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

    it('never hands out a run the worker excludes (one it found damaged)', async () => {
      const store = await makeStore()
      await store.append('bad', runEvents('bad', 1, 1, 'a', 1000), 0)
      await store.append('good', runEvents('good', 1, 1, 'a', 2000), 0)
      assert.equal((await store.claimNext('w1', 60_000, { exclude: ['bad'] }))?.runId, 'good')
      assert.equal(await store.claimNext('w2', 60_000, { exclude: ['bad'] }), undefined)
      assert.equal((await store.claimNext('w3', 60_000))?.runId, 'bad')
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
      assert.deepEqual(
        (await store.grants({ agent: 'support', now })).map((g) => g.id),
        ['g1'],
      )
      assert.deepEqual(
        (await store.grants({ agent: 'support', now, inactive: true })).map((g) => g.id),
        ['g1', 'g2'],
      )
      assert.deepEqual(
        (await store.grants({ tool: 'refund', now })).map((g) => g.id),
        ['g1', 'g3'],
      )
      assert.deepEqual((await store.grants({ agent: 'support', now }))[0], grant('g1', 'support', 'refund', now - 3))
      const revoked = await store.revokeGrant('g1', 'alice', now, 'no longer needed')
      assert.deepEqual([revoked?.revokedBy, revoked?.revokedAt, revoked?.revokeReason], ['alice', now, 'no longer needed'])
      assert.equal((await store.revokeGrant('g1', 'bob', now + 1))?.revokedBy, 'alice', 'the first revocation stands')
      assert.equal(await store.revokeGrant('nope', 'bob', now), undefined)
      assert.deepEqual(
        (await store.grants({ agent: 'support', now })).map((g) => g.id),
        [],
      )
    })

    it("checks a run's stored history on request (verify, optional since 2.2.0)", async (t) => {
      const store = await makeStore()
      if (!store.verify) return t.skip('this store has no verify')
      await store.append('r1', runEvents('r1', 1, 3), 0)
      await store.append('r1', runEvents('r1', 4, 2), 3)
      const check = await store.verify('r1')
      assert.equal(check.runId, 'r1')
      assert.equal(check.events, 5)
      assert.equal(check.firstBad, undefined)
      assert.equal(check.keyed, false)
      if (check.chained) assert.match(check.head ?? '', /^[0-9a-f]{64}$/)
      else assert.equal(check.head, undefined)
      await assert.rejects(store.verify('nope'), { code: 'run_not_found' })
    })

    runThreadContract(makeStore)
    runArtifactContract(makeStore, contract)

    const damage = contract.damage
    describe('integrity of the stored log', { skip: damage ? false : 'this store keeps no text that could be damaged' }, () => {
      /** r1 with 5 events and r2 with 3, as the store wrote them; `hurt` runs SQL on its database. */
      async function damaged(options?: MakeOptions) {
        const store = await makeStore(options)
        await store.append('r1', runEvents('r1', 1, 3), 0)
        await store.append('r1', runEvents('r1', 4, 2), 3)
        await store.append('r2', runEvents('r2', 1, 3), 0)
        return { store, hurt: (sql: string) => damage!(store.raw, sql) }
      }

      /** store_corrupt of run r1 at `seq`, for `problem`. */
      const corruptAt = (seq: number, problem: RegExp) => (error: CordageError) => {
        assert.equal(error.code, 'store_corrupt', error.message)
        assert.deepEqual([(error.data as { runId: string }).runId, (error.data as { seq: number }).seq], ['r1', seq], error.message)
        assert.match((error.data as { problem: string }).problem, problem)
        assert.match(error.message, new RegExp(`run r1, seq ${seq}: `))
        return true
      }

      /** Every read of r1 that reaches `seq` refuses with store_corrupt naming it; so does verify. */
      async function refused(store: KernelStore, seq: number, problem: RegExp) {
        const named = corruptAt(seq, problem)
        await assert.rejects(store.load('r1'), named, 'load')
        await assert.rejects(store.loadRun('r1'), named, 'loadRun')
        await assert.rejects(store.read('r1'), named, 'read')
        await assert.rejects(store.read('r1', { after: seq - 1, limit: 1 }), named, 'read of that one seq')
        const check = await store.verify!('r1')
        assert.equal(check.firstBad?.seq, seq, 'verify')
        assert.match(check.firstBad!.problem, problem)
        assert.equal(check.head, undefined, 'no head for a damaged history')
        // The other run is untouched.
        assert.equal((await store.load('r2')).length, 3)
        assert.equal((await store.verify!('r2')).firstBad, undefined)
      }

      it('refuses a stored body that is not JSON', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET body = '{"type": "step/start", "seq": 2, ' WHERE run_id = 'r1' AND seq = 2`)
        await refused(store, 2, /not valid JSON/)
      })

      it('refuses a body that is JSON but not an event', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET body = '[1, 2]' WHERE run_id = 'r1' AND seq = 3`)
        await refused(store, 3, /not an event object/)
        await hurt(`UPDATE events SET body = '{"seq": 3, "runId": "r1"}' WHERE run_id = 'r1' AND seq = 3`)
        await refused(store, 3, /no event type/)
      })

      it('refuses a renumbered row: the seq it left is missing', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET seq = seq + 10 WHERE run_id = 'r1' AND seq = 2`)
        await refused(store, 2, /seq 2 is missing: the next stored event is seq 3/)
      })

      it('refuses two swapped bodies', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET seq = 99 WHERE run_id = 'r1' AND seq = 2`)
        await hurt(`UPDATE events SET seq = 2 WHERE run_id = 'r1' AND seq = 3`)
        await hurt(`UPDATE events SET seq = 3 WHERE run_id = 'r1' AND seq = 99`)
        await refused(store, 2, /stored at seq 2 says it is seq 3/)
      })

      it('refuses the body of another run', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET body = (SELECT body FROM events WHERE run_id = 'r2' AND seq = 2) WHERE run_id = 'r1' AND seq = 2`)
        await refused(store, 2, /belongs to run "r2"/)
      })

      it("refuses an append over a row written beyond the run's last seq, with store_corrupt and nothing written", async () => {
        const { store, hurt } = await damaged()
        await hurt(`INSERT INTO events (run_id, seq, type, body) VALUES ('r1', 6, 'step/start', 'planted')`)
        await assert.rejects(
          async () => store.append('r1', runEvents('r1', 6, 1), 5),
          (error: CordageError) => error.code === 'store_corrupt' && /behind the store's back/.test(error.message),
        )
        // Nothing of the refused append was written; the planted row is still there, and reads name it.
        await assert.rejects(
          store.load('r1'),
          (error: CordageError) => error.code === 'store_corrupt' && (error.data as { seq: number }).seq === 6,
        )
        assert.deepEqual(
          (await store.read('r1', { limit: 5 })).map((e) => e.seq),
          [1, 2, 3, 4, 5],
        )
      })

      it('refuses a run whose last event was deleted', async () => {
        const { store, hurt } = await damaged()
        await hurt(`DELETE FROM events WHERE run_id = 'r1' AND seq = 5`)
        await refused(store, 5, /the run's last seq is 5, but its stored events end at 4/)
        assert.deepEqual(
          (await store.read('r1', { limit: 2 })).map((e) => e.seq),
          [1, 2],
          'a page that stops before the damage reads',
        )
      })

      it('refuses an edit that is still a valid event on every read, at its seq (the chain), as verify does', async () => {
        const { store, hurt } = await damaged()
        const before = await store.verify!('r1')
        assert.ok(before.chained, 'a store that keeps text chains its events')
        await hurt(`UPDATE events SET body = replace(body, '"index":3', '"index":30') WHERE run_id = 'r1' AND seq = 3`)
        await refused(store, 3, /^its chain hash does not match its body and the chain before it: the event was changed/)
        // A read after the edit checks what it returns, on from the link stored at seq 3.
        assert.deepEqual(
          (await store.read('r1', { after: 3 })).map((e) => e.seq),
          [4, 5],
        )
      })

      it('refuses a read after a seq whose link was changed, at the first seq it returns; load and verify name the seq itself', async () => {
        const { store, hurt } = await damaged()
        // A well-formed link, of another run's event.
        await hurt(`UPDATE events SET chain = (SELECT chain FROM events WHERE run_id = 'r2' AND seq = 3) WHERE run_id = 'r1' AND seq = 3`)
        await assert.rejects(
          store.read('r1', { after: 3 }),
          corruptAt(4, /^its chain hash does not match its body and the chain before it: /),
        )
        await assert.rejects(store.read('r1', { after: 3, limit: 1 }), corruptAt(4, /chain hash does not match/))
        await refused(store, 3, /chain hash does not match/)
      })

      it('refuses a removed link on every read, and a read that starts after it, at the first unlinked seq', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1' AND seq = 4`)
        await refused(store, 4, /^it has no chain hash, but seq 3 before it was chained: its chain was removed$/)
        await assert.rejects(
          store.read('r1', { after: 4 }),
          corruptAt(4, /^it has no chain hash, but seq 3 before it was chained: its chain was removed$/),
        )
        await hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1' AND seq = 3`)
        await assert.rejects(store.read('r1', { after: 4, limit: 1 }), corruptAt(3, /but seq 2 before it was chained/))
        assert.deepEqual(
          (await store.read('r1', { limit: 2 })).map((e) => e.seq),
          [1, 2],
          'a page that stops before the damage reads',
        )
      })

      it('verify finds a deleted event in the middle, and a removed chain hash', async () => {
        const { store, hurt } = await damaged()
        await hurt(`DELETE FROM events WHERE run_id = 'r1' AND seq = 3`)
        assert.deepEqual((await store.verify!('r1')).firstBad, {
          seq: 3,
          problem: 'the event at seq 3 is missing: the next stored event is seq 4',
        })
        await assert.rejects(
          store.read('r1', { after: 3 }),
          corruptAt(3, /^the event at seq 3 is missing: the events after it cannot be checked against the chain$/),
        )
        await hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r2' AND seq = 2`)
        assert.deepEqual((await store.verify!('r2')).firstBad, {
          seq: 2,
          problem: 'it has no chain hash, but seq 1 before it was chained: its chain was removed',
        })
      })

      it('verify finds an edit whose chain was recomputed: chained from a blanked prefix, or without the key', async () => {
        const { store, hurt } = await damaged()
        // Blanking the first links does not pass for a run stored before chaining: the next link no longer matches.
        await hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1' AND seq <= 2`)
        await refused(store, 3, /^its chain hash does not match its body and the chain before it: .*; or the run was chained under a key/)

        const key = 'k'.repeat(12) + '-log-key-for-tests'
        const keyed = await damaged({ chainKey: key })
        const intact = await keyed.store.verify!('r1')
        assert.deepEqual([intact.keyed, intact.firstBad], [true, undefined])
        assert.match(intact.head ?? '', /^[0-9a-f]{64}$/)
        // Someone who can write the database but has no key edits seq 2 and chains everything again with SHA-256.
        const events = await keyed.store.load('r1')
        let link = ''
        for (const event of events) {
          const body = JSON.stringify(event.seq === 2 ? { ...event, data: { index: 200 } } : event)
          link = chainHash(link, body)
          await keyed.hurt(
            `UPDATE events SET body = ${quote(body)}, chain = ${contract.link!(link)} WHERE run_id = 'r1' AND seq = ${event.seq}`,
          )
        }
        // Every event still reads as valid, but not one link holds under the key: every read refuses it.
        await assert.rejects(
          keyed.store.load('r1'),
          corruptAt(
            1,
            /^its chain hash does not match its body and the chain before it under the key: .*re-chained without the key; or the run was chained without a key, or under another one$/,
          ),
        )
        await assert.rejects(keyed.store.loadRun('r1'), corruptAt(1, /under the key/))
        await assert.rejects(keyed.store.read('r1', { after: 2 }), corruptAt(3, /under the key/))
        const check = await keyed.store.verify!('r1')
        assert.equal(check.firstBad?.seq, 1, 'not one link holds under the key')
        assert.match(check.firstBad!.problem, /under the key/)
        // Without a key the same edit passes (anyone who can write the database can chain again), but the
        // head changes: a head kept elsewhere (an anchor) shows it. This is what the key is for.
        const unkeyed = await damaged()
        const anchor = (await unkeyed.store.verify!('r1')).head
        let relink = ''
        for (const event of events) {
          const body = JSON.stringify(event.seq === 2 ? { ...event, data: { index: 200 } } : event)
          relink = chainHash(relink, body)
          await unkeyed.hurt(
            `UPDATE events SET body = ${quote(body)}, chain = ${contract.link!(relink)} WHERE run_id = 'r1' AND seq = ${event.seq}`,
          )
        }
        const edited = await unkeyed.store.verify!('r1')
        assert.equal(edited.firstBad, undefined)
        assert.notEqual(edited.head, anchor)
        assert.deepEqual((await unkeyed.store.load('r1'))[1].data, { index: 200 }, 'and reads pass it: the chain holds')
      })

      it('reads and verifies a run stored before the store chained (no link at all), and chains what comes after', async () => {
        const { store, hurt } = await damaged()
        await hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1'`)
        const old = await store.verify!('r1')
        assert.deepEqual([old.unchainedUpTo, old.firstBad, old.head], [5, undefined, undefined])
        assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 5), 'it loads')
        assert.deepEqual((await store.loadRun('r1')).events, runEvents('r1', 1, 5))
        assert.deepEqual(
          (await store.read('r1', { after: 2 })).map((e) => e.seq),
          [3, 4, 5],
        )
        assert.deepEqual(
          (await store.read('r1', { after: 2, limit: 1 })).map((e) => e.seq),
          [3],
        )
        // It goes on, chained from its next event (linked to the empty string), with a snapshot there.
        await store.append('r1', runEvents('r1', 6, 2), 5, { snapshot: { version: 1, state: { at: 7 } } })
        const continued = await store.verify!('r1')
        assert.deepEqual([continued.events, continued.unchainedUpTo, continued.firstBad], [7, 5, undefined])
        assert.match(continued.head ?? '', /^[0-9a-f]{64}$/)
        assert.deepEqual(await store.load('r1'), runEvents('r1', 1, 7))
        assert.deepEqual(
          (await store.read('r1', { after: 5 })).map((e) => e.seq),
          [6, 7],
          'from the last unlinked event',
        )
        assert.deepEqual(
          (await store.read('r1', { after: 6 })).map((e) => e.seq),
          [7],
        )
        await store.append('r1', runEvents('r1', 8, 1), 7)
        const run = await store.loadRun('r1')
        if (run.snapshot) assert.deepEqual([run.snapshot.seq, run.events], [7, runEvents('r1', 8, 1)])
        await hurt(`UPDATE events SET body = replace(body, '"index":8', '"index":9') WHERE run_id = 'r1' AND seq = 8`)
        await refused(store, 8, /chain hash does not match/)
        // Unlinking the edited event does not make it pass: an unlinked event is allowed only before the first linked one.
        await hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1' AND seq = 8`)
        await refused(store, 8, /^it has no chain hash, but seq 7 before it was chained: its chain was removed$/)
      })

      describe('snapshots, linked to the chain at their seq', () => {
        const key = 'k'.repeat(12) + '-log-key-for-tests'

        /** r1 with a snapshot at seq 7 and one event after it; skipped for a store that keeps no snapshots. */
        async function snapshotted(t: { skip(message: string): void }, options?: MakeOptions) {
          const d = await damaged(options)
          await d.store.append('r1', runEvents('r1', 6, 2), 5, { snapshot: { version: 1, state: { at: 7 } } })
          await d.store.append('r1', runEvents('r1', 8, 1), 7)
          const kept = await d.store.loadRun('r1')
          if (!kept.snapshot) {
            t.skip('this store keeps no snapshots')
            return undefined
          }
          assert.deepEqual(kept, { snapshot: { seq: 7, version: 1, state: { at: 7 } }, events: runEvents('r1', 8, 1) })
          return d
        }

        /** loadRun refuses r1's snapshot at `seq`, and verify names it; the events still load. */
        async function snapshotRefused(store: KernelStore, seq: number, problem: RegExp, verifyProblem = problem) {
          await assert.rejects(store.loadRun('r1'), corruptAt(seq, problem), 'loadRun')
          const check = await store.verify!('r1')
          assert.deepEqual(check.firstBad?.seq, seq, 'verify')
          assert.match(check.firstBad!.problem, verifyProblem)
          assert.equal(check.head, undefined)
          assert.equal((await store.loadRun('r2')).events.length, 3, 'the other run is untouched')
        }

        /** The links of r1's events 1..n, as the store wrote them (its bodies are the events' JSON). */
        function linksOfR1(n: number, chainKey?: string): string[] {
          let link = ''
          return runEvents('r1', 1, n).map((event) => (link = chainHash(link, JSON.stringify(event), chainKey)))
        }

        it('refuses a snapshot whose state was edited, still valid JSON', async (t) => {
          const d = await snapshotted(t)
          if (!d) return
          await d.hurt(`UPDATE snapshots SET state = '{"at":70}' WHERE run_id = 'r1'`)
          await snapshotRefused(
            d.store,
            7,
            /^the snapshot of run state taken at seq 7 does not match its link: it was changed after it was written; do not resume from it$/,
          )
          assert.equal((await d.store.load('r1')).length, 8, 'the events themselves are intact')
        })

        it('refuses a snapshot that is not JSON, naming the seq it was taken at', async (t) => {
          const d = await snapshotted(t)
          if (!d) return
          await d.hurt(`UPDATE snapshots SET state = '{"at": ' WHERE run_id = 'r1'`)
          await snapshotRefused(d.store, 7, /^the snapshot of run state taken at seq 7 does not match its link/)
        })

        it('refuses a snapshot whose link was removed', async (t) => {
          const d = await snapshotted(t)
          if (!d) return
          await d.hurt(`UPDATE snapshots SET chain = NULL WHERE run_id = 'r1'`)
          await snapshotRefused(
            d.store,
            7,
            /^the snapshot of run state taken at seq 7 has no link, but the event at its seq is chained: its link was removed/,
          )
        })

        it('refuses a snapshot moved to another seq, or beyond the events', async (t) => {
          const d = await snapshotted(t)
          if (!d) return
          await d.hurt(`UPDATE snapshots SET seq = 6 WHERE run_id = 'r1'`)
          await snapshotRefused(d.store, 6, /^the snapshot of run state taken at seq 6 does not match its link/)
          await d.hurt(`UPDATE snapshots SET seq = 99 WHERE run_id = 'r1'`)
          await snapshotRefused(d.store, 99, /^the snapshot of run state taken at seq 99 is of an event the run does not have$/)
        })

        it('refuses a snapshot at an event whose link was removed', async (t) => {
          const d = await snapshotted(t)
          if (!d) return
          await d.hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1' AND seq = 7`)
          await snapshotRefused(
            d.store,
            7,
            /^the snapshot of run state taken at seq 7 is of an event that has no chain hash: the event's chain was removed/,
            /^it has no chain hash, but seq 6 before it was chained: its chain was removed$/,
          )
          // Every link of the run removed, the snapshot's too: still not a run stored before chaining, which has no snapshot at an unlinked event.
          await d.hurt(`UPDATE events SET chain = NULL WHERE run_id = 'r1'`)
          await d.hurt(`UPDATE snapshots SET chain = NULL WHERE run_id = 'r1'`)
          await snapshotRefused(d.store, 7, /is of an event that has no chain hash/)
        })

        it('refuses the events after a snapshot when one was edited', async (t) => {
          const d = await snapshotted(t)
          if (!d) return
          await d.hurt(`UPDATE events SET body = replace(body, '"index":8', '"index":80') WHERE run_id = 'r1' AND seq = 8`)
          await assert.rejects(d.store.loadRun('r1'), corruptAt(8, /^its chain hash does not match its body and the chain before it: /))
        })

        it('links a snapshot as H(link of its event + "\\nsnapshot\\n" + state) under the key: relinked without the key, it is refused', async (t) => {
          const d = await snapshotted(t, { chainKey: key })
          if (!d) return
          const eventLink = linksOfR1(7, key)[6]
          // With the key, a new state linked by the formula is taken: the formula is the store's.
          await d.hurt(
            `UPDATE snapshots SET state = '{"at":70}', chain = ${contract.link!(snapshotLink(eventLink, '{"at":70}', key))} WHERE run_id = 'r1'`,
          )
          assert.deepEqual((await d.store.loadRun('r1')).snapshot, { seq: 7, version: 1, state: { at: 70 } })
          assert.equal((await d.store.verify!('r1')).firstBad, undefined)
          // Without it (plain SHA-256 on the stored link), it is not.
          await d.hurt(
            `UPDATE snapshots SET state = '{"at":71}', chain = ${contract.link!(snapshotLink(eventLink, '{"at":71}'))} WHERE run_id = 'r1'`,
          )
          await snapshotRefused(
            d.store,
            7,
            /^the snapshot of run state taken at seq 7 does not match its link under the key: it was changed after it was written, or linked without the key/,
          )
        })
      })
    })
  })
}

/** A text as an SQL string literal (SQLite and PostgreSQL both double the quote). */
function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

function grant(id: string, agent: string, tool: string, createdAt: number, extra: Partial<ApprovalGrant> = {}): ApprovalGrant {
  return {
    id,
    scope: 'grant',
    agent,
    tool,
    args: { pattern: { amount: { lte: 100 } } },
    policyVersion: 'p@1+abc',
    by: 'alice',
    createdAt,
    source: { runId: 'r1', actionId: 's1.a1' },
    ...extra,
  }
}

function intent(key: string, runId: string, actionId: string, argsHash: string): EffectWrite {
  return { op: 'intent', key, runId, actionId, tool: 't', argsHash, policyVersion: 'p', attempt: 1, at: 1 }
}
