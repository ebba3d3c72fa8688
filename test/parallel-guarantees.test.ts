/**
 * Parallel tool calls keep the guarantees of calls run one by one. A wave may not run a second call
 * that reuses an idempotency key with other arguments; a key race lost in the middle of a batch
 * settles that action before the later waves run; every outcome of a wave is acted on (a timeout still
 * fails the run, a neighbour whose effect is unknown is reported as unknown, never as "Not run"); and
 * an ask in the middle of a batch, approved by another process, runs and closes each call once.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { supportDesk, type Harness } from './helpers.ts'
import { allowAll, close, open, presetFile, removeDirs, scratchDir, stopApps } from './sqlite-preset.ts'
import { workbenchLog } from './fixtures/plugins/workbench/index.ts'

after(removeDirs)

/** What the probe plugin's tools did, in order (shared through globalThis: the plugin lives outside the repository). */
const probeLog: string[] = ((globalThis as Record<string, unknown>).__probeLog ??= []) as string[]

/**
 * A plugin folder outside the repository (its imports of cordage reach the host's copy) with tools the
 * fixtures lack: a charge with its own idempotency key and a footprint, and calls that hang past their
 * time limit (a write whose effect is then unknown, and a read that times out), each with a footprint
 * so they may share a wave.
 */
function probePlugin(): string {
  const dir = scratchDir('cordage-probe-')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(
    join(dir, 'manifest.ts'),
    `
import { Schema } from 'cordis'
export default { name: 'probe', version: '1.0.0', requires: { tools: '^1.0.0' }, config: Schema.object({}) }
`,
  )
  writeFileSync(
    join(dir, 'index.ts'),
    `
import { z } from 'zod'
import { definePlugin, defineTool } from 'cordage'
import manifest from './manifest.ts'
const log = (globalThis.__probeLog ??= [])
const hang = (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
export default definePlugin(manifest, (ctx) => {
  ctx.tools.register(defineTool({
    name: 'charge', description: 'Charge an order to an account.', sideEffect: 'external', timeoutMs: 2000,
    input: z.object({ order: z.string(), account: z.string(), amount: z.number() }),
    idempotencyKey: ({ order }) => order,
    footprint: ({ account }) => ({ writes: ['acct/' + account] }),
    async run({ order, account, amount }) {
      log.push('charge ' + order + ' ' + account + ' ' + amount)
      return { output: 'charged ' + amount + ' to ' + account, receipt: order + '@' + account }
    },
  }))
  ctx.tools.register(defineTool({
    name: 'put', description: 'Write text to a file under a key.', sideEffect: 'local', idempotent: true, timeoutMs: 2000,
    input: z.object({ key: z.string(), file: z.string(), text: z.string() }),
    idempotencyKey: ({ key }) => key,
    footprint: ({ file }) => ({ writes: [file] }),
    async run({ file, text }) {
      log.push('put ' + file + ' ' + text)
      return { output: 'put ' + text + ' in ' + file }
    },
  }))
  ctx.tools.register(defineTool({
    name: 'hang_write', description: 'A write that never answers.', sideEffect: 'external', timeoutMs: 80,
    input: z.object({ name: z.string() }),
    footprint: ({ name }) => ({ writes: ['w/' + name] }),
    async run({ name }, io) { log.push('hang_write ' + name); return hang(io.signal) },
  }))
  // Writes that time out, and whose reconcile then says the effect did not land, or cannot be asked.
  ctx.tools.register(defineTool({
    name: 'hang_write_unlanded', description: 'A write that never answers, and did not land.', sideEffect: 'external', timeoutMs: 80,
    input: z.object({ name: z.string() }),
    reconcile: async () => ({ committed: false }),
    async run({ name }, io) { log.push('hang_write_unlanded ' + name); return hang(io.signal) },
  }))
  ctx.tools.register(defineTool({
    name: 'hang_write_unknowable', description: 'A write that never answers, and cannot be reconciled.', sideEffect: 'external', timeoutMs: 80,
    input: z.object({ name: z.string() }),
    reconcile: async () => { throw new Error('the target is down') },
    async run({ name }, io) { log.push('hang_write_unknowable ' + name); return hang(io.signal) },
  }))
  ctx.tools.register(defineTool({
    name: 'hang_read', description: 'A read that never answers.', sideEffect: 'none', timeoutMs: 80,
    input: z.object({ name: z.string() }),
    footprint: ({ name }) => ({ reads: ['r/' + name] }),
    async run({ name }, io) { log.push('hang_read ' + name); return hang(io.signal) },
  }))
})
`,
  )
  return dir
}

const workbench = { path: resolve(import.meta.dirname, 'fixtures/plugins/workbench'), config: { timeoutMs: 1500 } }

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
  workbenchLog.length = 0
  probeLog.length = 0
})
afterEach(stopApps)

type Call = { tool: string; args: Record<string, unknown> }
async function desk(script: unknown[], options: { rules?: unknown[]; plugins?: unknown[] } = {}) {
  harness = await supportDesk({
    script: script as never,
    rules: options.rules ?? allowAll,
    verifier: { minCount: 0 },
    plugins: options.plugins ?? [{ path: probePlugin() }, workbench],
  })
  return harness
}

const of = (events: RunEvent[], actionId: string) => events.filter((e) => e.actionId === actionId)

describe('a wave keeps the idempotency rules of one by one (core/kernel/effects.ts executeWave, core/kernel/actions.ts actTogether)', () => {
  it('refuses a second call of one wave that reuses an idempotency key with other arguments (as one by one does)', async () => {
    // Two charges under one order number, to different accounts: their footprints do not overlap, so they share a wave.
    const calls: Call[] = [
      { tool: 'charge', args: { order: 'O-1', account: 'A', amount: 10 } },
      { tool: 'charge', args: { order: 'O-1', account: 'B', amount: 20 } },
    ]
    const h = await desk([{ calls }, { final: 'Done.' }])
    const state = await h.agent.run('charge')
    assert.equal(state.status, 'COMPLETED', state.reason)
    // "Same key with different arguments is refused" (invariant 3): one charge, and the second call closed with idempotency_conflict.
    assert.deepEqual(probeLog, ['charge O-1 A 10'], 'the second charge under the same key ran as well')
    const events = await h.events(state.runId)
    const second = of(events, 's1.a2').find((e) => e.type === 'tool/error') as RunEvent<'tool/error'> | undefined
    assert.equal(second?.data.code, 'idempotency_conflict')
  })

  it('one by one (parallelTools off) the same step refuses the second charge: the rule the wave breaks', async () => {
    harness = await supportDesk({
      script: [
        {
          calls: [
            { tool: 'charge', args: { order: 'O-1', account: 'A', amount: 10 } },
            { tool: 'charge', args: { order: 'O-1', account: 'B', amount: 20 } },
          ],
        },
        { final: 'Done.' },
      ] as never,
      rules: allowAll,
      verifier: { minCount: 0 },
      plugins: [{ path: probePlugin() }],
      parallelTools: false,
    })
    const state = await harness.agent.run('charge')
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(probeLog, ['charge O-1 A 10'])
    const second = of(await harness.events(state.runId), 's1.a2').find((e) => e.type === 'tool/error') as RunEvent<'tool/error'>
    assert.equal(second.data.code, 'idempotency_conflict')
  })
})

describe('a write that timed out is settled by its reconcile (core/kernel/unknown-effect.ts)', () => {
  it('ends the run FAILED with tool_timeout when reconcile says the effect did not land: recorded, never run again', async () => {
    const h = await desk([{ tool: 'hang_write_unlanded', args: { name: 'z' } }, { final: 'Done.' }])
    const state = await h.agent.run('write z')
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'tool_timeout')
    assert.match(state.reason ?? '', /hang_write_unlanded \(action s1\.a1\) did not finish within 80 ms, and did not take effect/)
    const reconciled = (await h.events(state.runId)).filter((e) => e.type === 'tool/reconciled') as RunEvent<'tool/reconciled'>[]
    assert.deepEqual(
      reconciled.map((e) => e.data.committed),
      [false],
    )
    assert.deepEqual(probeLog, ['hang_write_unlanded z'], 'run once')
  })

  it('waits for a person when reconcile throws: nothing recorded as settled, the effect unknown', async () => {
    const h = await desk([{ tool: 'hang_write_unknowable', args: { name: 'z' } }, { final: 'Done.' }])
    const state = await h.agent.run('write z')
    assert.equal(state.status, 'WAITING_RECONCILIATION')
    assert.equal(state.waiting?.code, 'unknown_effect')
    const events = await h.events(state.runId)
    assert.equal(events.filter((e) => e.type === 'tool/reconciled').length, 0)
    assert.deepEqual(probeLog, ['hang_write_unknowable z'])
  })
})

describe('a key race lost in the middle of a batch (recoverLostKeyRace)', () => {
  it('does not run the later waves of the batch before the action whose intent was refused is settled', async () => {
    // Three writes to one file: three waves, which must run in proposal order.
    const h = await desk([
      {
        calls: [
          { tool: 'put', args: { key: 'k1', file: 'f', text: '1' } },
          { tool: 'put', args: { key: 'K', file: 'f', text: '2' } },
          { tool: 'put', args: { key: 'k3', file: 'f', text: '3' } },
        ],
      },
      { final: 'Done.' },
    ])
    // Another run takes key K between a2's ledger look-up and its intent: the look-up saw nothing, the append is refused.
    const store = h.agent.store() as unknown as { effect(key: string): Promise<unknown>; ledger: Map<string, unknown> }
    const lookUp = store.effect.bind(store)
    // The class is frozen: a read method is replaced on the instance by definition (reads are not guarded).
    Object.defineProperty(store, 'effect', { writable: true, configurable: true, value: store.effect })
    let raced = false
    store.effect = async (key: string) => {
      if (key === 'put:K' && !raced) {
        raced = true
        store.ledger.set(key, {
          key,
          runId: 'run_other',
          actionId: 's1.a1',
          tool: 'put',
          argsHash: 'other-args',
          policyVersion: 'x',
          status: 'committed',
          attempts: 1,
          startedAt: Date.now(),
          endedAt: Date.now(),
          output: 'theirs',
        })
        return undefined
      }
      return lookUp(key)
    }
    const state = await h.agent.run('write')
    assert.ok(raced)
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await h.events(state.runId)
    const settledA2 = events.findIndex((e) => e.actionId === 's1.a2' && (e.type === 'tool/end' || e.type === 'tool/error'))
    const startA3 = events.findIndex((e) => e.actionId === 's1.a3' && e.type === 'tool/start')
    // Before the fix: the lost key race (recoverLostKeyRace) rebuilt state and execute returned 'continue', and actTogether went on to a3's wave;
    // a2 was settled only at a later pass, after a3 (which writes the same file) had run.
    assert.ok(
      settledA2 < startA3,
      `a3 started (seq ${events[startA3]?.seq}) before a2, proposed before it and writing the same file, was settled (seq ${events[settledA2]?.seq})`,
    )
  })
})

describe('what the outcomes of one wave lead to', () => {
  it('a read that timed out does not hide a neighbour whose effect is unknown: it is never closed as "Not run"', async () => {
    // a1 times out (tool_timeout ends the run FAILED); a2, a write beside it, timed out too: its effect is unknown.
    const h = await desk([
      {
        calls: [
          { tool: 'hang_read', args: { name: 'x' } },
          { tool: 'hang_write', args: { name: 'y' } },
        ],
      },
      { final: 'Done.' },
    ])
    const state = await h.agent.run('work')
    assert.deepEqual(probeLog.sort(), ['hang_read x', 'hang_write y'], 'both calls started, side by side')
    const events = await h.events(state.runId)
    const a2 = of(events, 's1.a2')
    assert.ok(
      a2.some((e) => e.type === 'tool/start'),
      'a2 ran',
    )
    const closing = a2.filter((e): e is RunEvent<'tool/error'> => e.type === 'tool/error').at(-1)!
    // Before the fix: tool/error { unknown: true } and then, from end(), "Not run: the run ended FAILED (tool_timeout) first."
    assert.doesNotMatch(
      closing.data.message,
      /^Not run/,
      `a2 started and its effect is unknown, yet the run closed it as: ${closing.data.message}`,
    )
  })

  it("acts on every outcome of a wave: a read's timeout still fails the run after its neighbour's unknown effect is settled", async () => {
    // a1's effect is unknown (the run waits for a person); a2 timed out, which fails a run (tool_timeout).
    const h = await desk([
      {
        calls: [
          { tool: 'hang_write', args: { name: 'y' } },
          { tool: 'hang_read', args: { name: 'x' } },
        ],
      },
      { final: 'Done, all fine.' },
    ])
    // The run-ending outcome wins (the run does not go on after a tool timed out), and a1, whose effect is
    // unknown, is reported as such in run/end rather than forgotten or closed as "Not run".
    const state = await h.agent.run('work')
    assert.equal(state.status, 'FAILED', `the run went on to ${state.status} after a tool timed out`)
    assert.equal(state.failureCode, 'tool_timeout')
    const end = (await h.events(state.runId)).find((e): e is RunEvent<'run/end'> => e.type === 'run/end')!
    assert.deepEqual(
      end.data.effects?.unknown.map((u) => u.actionId),
      ['s1.a1'],
    )
  })
})

describe('a batch paused for approval', () => {
  it('an ask in the middle of a batch, approved by another process: each call runs once, every action closed once, decisions before starts', async () => {
    const file = presetFile({
      desk: {
        script: [
          {
            calls: [
              { tool: 'read_slowly', args: { label: 'x', ms: 0 } },
              { tool: 'read_slowly', args: { label: 'y', ms: 0 } },
              { tool: 'read_slowly', args: { label: 'secret', ms: 0 } },
              { tool: 'read_slowly', args: { label: 'later', ms: 0 } },
            ],
          },
          { final: 'Done.' },
        ],
        rules: [
          { id: 'secrets', verdict: 'ask', priority: 1, match: { tool: 'read_slowly', args: { label: 'secret' } } },
          { id: 'all', verdict: 'allow', match: {} },
        ],
        plugins: [workbench],
      },
    })
    const first = await open(file)
    const paused = await first.agent('desk').run('work')
    assert.equal(paused.status, 'WAITING_APPROVAL')
    await close(first)
    const second = await open(file)
    const done = await (await second.agent('desk').approve(paused.runId, 's1.a3', { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.deepEqual(workbenchLog, ['read x', 'read y', 'read secret', 'read later'])
    const events = await second.agent('desk').store().load(paused.runId)
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
      'seq gap-free',
    )
    for (const id of ['s1.a1', 's1.a2', 's1.a3', 's1.a4']) {
      const mine = of(events, id)
      const closes = mine.filter((e) => e.type === 'tool/end' || (e.type === 'tool/error' && !e.data.willRetry && !e.data.unknown))
      assert.equal(closes.length, 1, `${id} closed once`)
      const decision = mine.findIndex((e) => e.type === 'tool/decision')
      const start = mine.findIndex((e) => e.type === 'tool/start')
      assert.ok(decision >= 0 && decision < start, `${id}: decision before start`)
      assert.equal(mine.filter((e) => e.type === 'tool/start').length, 1, `${id} started once`)
    }
    assert.ok(
      events.findIndex((e) => e.type === 'run/checkpoint') < events.findIndex((e) => e.type === 'tool/approval-requested'),
      'checkpoint before the approval request',
    )
  })
})
