/**
 * A long run costs the same per step at its end as at its start (issue 15, "Long runs";
 * bench/long-run.ts measures 10,000 steps). What the kernel does per step that depends on the run's
 * length: snapshots of run state, whose size grows with the run, so they are spaced by a share of it;
 * and the check of the context's projection, which holds the whole transcript with context-basic, so a
 * message checked at one step is not read again at the next.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Context } from 'cordis'
import { z } from 'zod'
import {
  createAgentContext,
  defineTool,
  type AppendOptions,
  type ContextMessage,
  type ContextService,
  type ModelRequest,
  type ModelResponse,
  type RunEvent,
} from 'cordage'
import { AgentRuntime } from '../core/kernel/agent.ts'
import { snapshotDue } from '../core/kernel/snapshot.ts'
import { KernelWriter } from '../core/kernel/store-writer.ts'
import { MemoryStore } from '../plugins/store-memory/memory-store.ts'

/** store-memory, asking for a snapshot every `snapshotEvery` events and noting each one it is sent. */
class SnapshotNotingStore extends MemoryStore {
  readonly snapshots: { seq: number; bytes: number }[] = []
  constructor(readonly snapshotEvery: number) {
    super(1_000_000)
  }
  override append(runId: string, events: readonly RunEvent[], expectedSeq: number, options: AppendOptions = {}): void {
    if (options.snapshot) this.snapshots.push({ seq: events[events.length - 1].seq, bytes: JSON.stringify(options.snapshot.state).length })
    super.append(runId, events, expectedSeq, options)
  }
}
Object.freeze(SnapshotNotingStore.prototype)

/** A run of `steps` steps, each calling a no-op tool, on `store`, with services that do nothing else (or `context`). */
async function longRun(
  store: SnapshotNotingStore,
  steps: number,
  context: ContextService = { assemble: () => ({ messages: [], tokens: 0 }) },
) {
  const ctx = createAgentContext(new Context(), 'long')
  const noop = defineTool({
    name: 'noop',
    description: 'does nothing',
    input: z.object({}),
    sideEffect: 'none',
    run: () => ({ output: 'ok' }),
  })
  ctx.plugin({
    name: 'long',
    manifest: {
      name: 'long',
      version: '1.0.0',
      provides: { store: '1.0.0', tools: '1.0.0', context: '1.0.0', policy: '1.0.0', verifier: '1.0.0', model: '1.0.0' },
    },
    apply(c: Context) {
      c.set('store', store)
      c.set('tools', { register: () => () => {}, get: () => noop, list: () => [noop], visible: () => [noop] })
      c.set('context', context)
      c.set('policy', { version: 'p', decide: () => ({ verdict: 'allow', ruleId: 'all', reason: 'allowed' }) })
      c.set('verifier', { verify: () => ({ ok: true, evidence: [] }) })
      c.set('model', {
        async respond(request: ModelRequest): Promise<ModelResponse> {
          const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
          if (request.stepIndex < steps) return { decision: { kind: 'tool_calls', calls: [{ name: 'noop', args: {} }] }, usage }
          return { decision: { kind: 'final', text: 'done' }, usage }
        },
      })
    },
  } as never)
  const agent = new AgentRuntime(ctx, { writer: KernelWriter, name: 'long', budgets: { maxSteps: steps } })
  const state = await agent.run('go on for a while')
  assert.equal(state.status, 'COMPLETED', state.reason)
  return state
}

describe('a long run', () => {
  it('writes snapshots whose total size stays a small multiple of the final state, not one that grows with the square of the run', async () => {
    const store = new SnapshotNotingStore(50)
    const state = await longRun(store, 800)
    const final = JSON.stringify(state).length
    const written = store.snapshots.reduce((n, s) => n + s.bytes, 0)
    // At a fixed spacing of 50 events this run writes over 130 snapshots, about 65 times the final state.
    assert.ok(
      written <= 12 * final,
      `snapshots wrote ${(written / final).toFixed(1)} times the final state (${store.snapshots.length} snapshots)`,
    )
    // Still as often as the store asks early on, and never more than a tenth of the run (plus a step) behind.
    assert.deepEqual(
      store.snapshots.slice(0, 3).map((s) => s.seq >= 50 && s.seq < 70),
      [true, false, false],
    )
    const last = store.snapshots.at(-1)!.seq
    assert.ok(state.lastSeq - last <= Math.max(50, state.lastSeq / 10) + 12, `the last snapshot is at seq ${last} of ${state.lastSeq}`)
  })

  it('takes a snapshot once the store’s spacing and a tenth of the run have passed', () => {
    assert.equal(snapshotDue(499, 0, 500), false)
    assert.equal(snapshotDue(500, 0, 500), true)
    assert.equal(snapshotDue(5_500, 5_000, 500), false, 'a tenth of the run is 550 events here')
    assert.equal(snapshotDue(5_556, 5_000, 500), true)
    assert.equal(snapshotDue(110_000, 99_000, 500), true)
    assert.equal(snapshotDue(110_000, 99_500, 500), false, 'a tenth of the run is 11,000 events here')
    assert.equal(snapshotDue(10_000, 0, undefined), false, 'a store that keeps no snapshots')
  })

  it('checks the messages a projection gained, not every message of the run again at each step', async () => {
    // A context provider that appends two messages a step and hands back a copy of its list, as
    // context-basic does. Each read of a message's property is counted.
    let reads = 0
    const messages: ContextMessage[] = []
    const counted = (message: ContextMessage) =>
      new Proxy(message, {
        get(target, key, receiver) {
          reads++
          return Reflect.get(target, key, receiver)
        },
      })
    const perStep: number[] = []
    const context: ContextService = {
      assemble: ({ state }) => {
        perStep.push(reads)
        reads = 0
        messages.push(
          counted({ role: 'assistant', text: '', source: state.lastSeq }),
          counted({ role: 'tool', text: 'ok', source: state.lastSeq + 1 }),
        )
        return { messages: messages.slice(), tokens: messages.length }
      },
    }
    await longRun(new SnapshotNotingStore(500), 400, context)
    // What the previous step's check and model call read: the two new messages, not the 800 of the run.
    const late = perStep.slice(-50)
    assert.ok(Math.max(...late) <= 4, `reads of messages per step, late in the run: ${late.join(' ')}`)
  })
})
