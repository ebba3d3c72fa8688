/**
 * A thread's token and cost budgets (`budgets.thread`) hold over everything its turns spent: a turn's
 * own model calls and every child run it started, whatever way the turn ended (cancelled while a child
 * spent, its process killed, FAILED, SUSPENDED and then cancelled) and also when a child ended after
 * its parent. The next turn's `run/start.thread.usedBefore` is checked against what the logs of the
 * turn and its children record (each model call reports 100 + 20 tokens and $0.01 here). While a
 * child of the last turn is still going, the next turn is refused (`thread_busy`, naming the child);
 * when what a turn spent cannot be read, it is refused (`thread_spending_unknown`), never given the
 * thread's whole budget. Real cancels and a real SIGKILL, through the host API and the `cordage`
 * binary, on SQLite and (where the store matters) PostgreSQL.
 */
import assert from 'node:assert/strict'
import { join, resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import type { RunEvent, RunState, Usage } from 'cordage'
import { Cordage } from 'cordage/host'
import { FaultLab, sharedStores } from '../fault-lab.ts'
import { fixturePlugin } from '../bin.ts'

const usage = { inputTokens: 100, outputTokens: 20, costUsd: 0.01 }
const spawnThenAnswer = [{ tool: 'spawn_agent', args: { agent: 'helper', task: 'dig' } }, { final: 'done' }]
// The same folder as the lab's own agent loads (compiled under test/run.ts): two would be two installs.
const faultDesk = fixturePlugin('fault-desk')

let lab: FaultLab | undefined
let app: Cordage | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
  lab?.close()
  lab = undefined
})

interface Setup {
  store?: 'sqlite' | 'postgres'
  /** The parent's (agent `pay`) script; by default it starts `helper` once, then answers. */
  script?: unknown[]
  durability?: Record<string, number>
  plugins?: unknown[]
  helper: { script: unknown[]; model?: Record<string, unknown>; rules?: unknown[] }
}

/** Agent `pay` (a thread budget of 1000 tokens and $1) may start agent `helper`; both on one store. */
function makeLab(setup: Setup): FaultLab {
  const made = new FaultLab({
    script: setup.script ?? spawnThenAnswer,
    model: { usage },
    budgets: { thread: { maxTokens: 1000, maxCostUsd: 1 } } as never,
    durability: setup.durability,
    store: setup.store,
    spawns: ['helper'],
    plugins: [{ plugin: 'subagents', config: { agents: ['helper'] } }, ...(setup.plugins ?? [])],
  })
  const helper = {
    budgets: { maxSteps: 30 },
    durability: { leaseTtlMs: setup.durability?.leaseTtlMs ?? 300, cancelWatchMs: 25 },
    model: { plugin: 'model-scripted', config: { usage, onExhausted: 'repeat-last', script: setup.helper.script, ...setup.helper.model } },
    plugins: [
      setup.store === 'postgres'
        ? { plugin: 'store-postgres', config: { url: process.env.CORDAGE_PG_URL, schema: made.schema } }
        : { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'allow', rules: setup.helper.rules ?? [] } },
      { path: faultDesk, config: { payments: 'payments.jsonl' } },
      // Its runs are children of `pay`, whose thread budgets cap theirs: the meter enforces them.
      'budgets',
    ],
  }
  made.write({ ...made.options, agents: { helper } })
  return made
}

/** What a log records as spent by its model calls (the oracle: no tool here reports usage of its own). */
function modelSpend(events: RunEvent[]): Usage {
  const total = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
  for (const e of events) {
    if (e.type !== 'step/model-response') continue
    const u = (e as RunEvent<'step/model-response'>).data.usage
    total.inputTokens += u.inputTokens
    total.outputTokens += u.outputTokens
    total.costUsd += u.costUsd
  }
  return total
}

const tokens = (u: Usage) => u.inputTokens + u.outputTokens
const usedBeforeOf = (events: RunEvent[]) => (events[0] as RunEvent<'run/start'>).data.thread!.usedBefore

/** The next turn's usedBefore must be what turn 1 and its child recorded, to the token and the cent. */
function assertCounted(usedBefore: Usage, parent: RunEvent[], child: RunEvent[]): void {
  const own = modelSpend(parent)
  const childs = modelSpend(child)
  assert.ok(tokens(childs) > 0, 'the child spent something')
  assert.deepEqual(
    { tokens: tokens(usedBefore), costUsd: Math.round(usedBefore.costUsd * 100) },
    { tokens: tokens(own) + tokens(childs), costUsd: Math.round((own.costUsd + childs.costUsd) * 100) },
    `usedBefore counts the turn (${tokens(own)} tokens) and its child (${tokens(childs)} tokens)`,
  )
}

/** The parent's own record missed the child's spending: the case this file is about. */
function assertParentMissedChild(parent: RunEvent[], child: RunEvent[]): void {
  const end = parent.at(-1) as RunEvent<'run/end'>
  assert.equal(end.type, 'run/end')
  assert.ok(
    tokens(end.data.usage) < tokens(modelSpend(parent)) + tokens(modelSpend(child)),
    `run/end of the turn counts ${tokens(end.data.usage)} tokens, less than the turn and its child recorded`,
  )
}

async function untilEnded(load: () => Promise<RunState>): Promise<RunState> {
  for (let i = 0; i < 400; i++) {
    const state = await load()
    if (['COMPLETED', 'FAILED', 'FAILED_VERIFICATION', 'STOPPED', 'CANCELLED'].includes(state.status)) return state
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('the run did not end')
}

/** Resolves once run `runId`'s stored log ends with run/end. */
async function untilStored(runId: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await lab!.events(runId)).at(-1)?.type === 'run/end') return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`run/end of ${runId} never reached the store`)
}

describe('thread budgets: what a turn and its children spent counts, however the turn ended', () => {
  for (const store of sharedStores) {
    it(`a turn cancelled while its child spends: the child's tokens count for the next turn, also those spent after its parent ended (${store})`, async () => {
      // The parent's call gets no grace: the turn ends at once, its child is cancelled after it. Nobody
      // takes a run over here, so leases are long: a busy machine must not lose one mid-turn.
      lab = makeLab({
        store,
        durability: { cancelGraceMs: 0, leaseTtlMs: 10_000 },
        helper: { script: [{ tool: 'lookup', args: {}, delayMs: 30 }] },
      })
      const host = await Cordage.fromPreset(lab.presetFile)
      app = host
      let childSteps = 0
      host.root.on('step/model-response', (e: RunEvent) => {
        if (e.runId.endsWith('.s1.a1') && ++childSteps === 3) {
          const parentId = e.runId.slice(0, -'.s1.a1'.length)
          setTimeout(() => void host.agent('pay').cancel(parentId, { by: 'test', reason: 'not needed' }), 0)
        }
      })
      const first = await host.agent('pay').run('Dig into it.', { thread: 'T-cancel' })
      assert.equal(first.status, 'CANCELLED', first.reason)
      const childId = `${first.runId}.s1.a1`
      const child = await untilEnded(() => host.agent('helper').load(childId))
      assert.equal(child.status, 'CANCELLED')
      // The state can say CANCELLED a moment before run/end is in the store (PostgreSQL, a busy machine);
      // the next turn reads the store, and refuses (thread_busy) while the child's log has not ended.
      await untilStored(childId)

      const parentLog = await lab.events(first.runId)
      const childLog = await lab.events(childId)
      assertParentMissedChild(parentLog, childLog)
      const second = await host.agent('pay').run('Next.', { thread: 'T-cancel' })
      assertCounted(usedBeforeOf(await lab.events(second.runId)), parentLog, childLog)
    })

    it(`a turn whose process was killed while its child spent: the next turn waits for the child, then counts it (${store})`, async () => {
      // Leases long enough that a slow machine does not lose one mid-turn; waited out after the kill.
      lab = makeLab({ store, durability: { leaseTtlMs: 1500 }, helper: { script: [{ tool: 'lookup', args: {} }] } })
      const one = await lab.run(['run', '--thread', 'T-crash', '--task', 'Dig into it.', '--json'], 'kill-after=step/model-response#4')
      assert.equal(one.signal, 'SIGKILL', one.stderr)
      const parentId = one.events[0].runId
      const childId = `${parentId}.s1.a1`
      await lab.leaseExpiry()
      const cancelled = await lab.run(['cancel', parentId, '--reason', 'crashed'])
      assert.equal(cancelled.code, 6, cancelled.stderr)

      // The turn has ended, but its child has not: what the turn spent is not known yet.
      const early = await lab.run(['run', '--thread', 'T-crash', '--task', 'Next.'])
      assert.equal(early.code, 7, early.stderr)
      assert.match(
        early.stderr,
        new RegExp(
          `thread_busy.*turn 1 \\(run ${parentId}\\) ended CANCELLED, but its child run ${childId.replace(/\./g, '\\.')} \\(agent helper\\) is RUNNING.*cordage cancel ${childId.replace(/\./g, '\\.')} --agent helper`,
        ),
      )
      assert.equal((await lab.db().threadTurns!('T-crash')).length, 1, 'nothing of the refused turn was recorded')

      const child = await lab.run(['cancel', childId, '--agent', 'helper'])
      assert.equal(child.code, 6, child.stderr)
      const parentLog = await lab.events(parentId)
      const childLog = await lab.events(childId)
      assertParentMissedChild(parentLog, childLog)
      const next = await lab.run(['run', '--thread', 'T-crash', '--task', 'Next.', '--json'])
      assert.ok([0, 4].includes(next.code ?? -1), next.stderr)
      assertCounted(usedBeforeOf(next.events), parentLog, childLog)
    })
  }

  it('a turn that FAILED while its child waited for an approval: the child, cancelled with it, counts', async () => {
    lab = makeLab({
      script: [
        {
          calls: [
            { tool: 'spawn_agent', args: { agent: 'helper', task: 'dig' } },
            { tool: 'hard_fail', args: {} },
          ],
        },
        { final: 'done' },
      ],
      plugins: [{ path: resolve(import.meta.dirname, '../fixtures/plugins/hard-fail') }],
      helper: {
        script: [
          { tool: 'lookup', args: {} },
          { tool: 'lookup', args: {} },
          { tool: 'pay_once', args: { amount: 5 } },
        ],
        rules: [{ id: 'payments-ask', verdict: 'ask', match: { tool: 'pay_*' } }],
      },
    })
    app = await Cordage.fromPreset(lab.presetFile)
    const first = await app.agent('pay').run('Dig into it.', { thread: 'T-fail' })
    assert.equal(first.status, 'FAILED', first.reason)
    assert.equal(first.failureCode, 'internal_error')
    const childId = `${first.runId}.s1.a1`
    assert.equal((await app.agent('helper').load(childId)).status, 'CANCELLED')
    const parentLog = await lab.events(first.runId)
    const childLog = await lab.events(childId)
    assertParentMissedChild(parentLog, childLog)
    const second = await app.agent('pay').run('Next.', { thread: 'T-fail' })
    assertCounted(usedBeforeOf(await lab.events(second.runId)), parentLog, childLog)
  })

  it('a turn SUSPENDED on its child (reservation_refused), then cancelled: the child counts', async () => {
    // The child may spend what the thread has left (880); each of its calls reserves its context and
    // 650 output tokens: the third does not fit, and the child, then its parent, suspend.
    lab = makeLab({ helper: { script: [{ tool: 'lookup', args: {} }], model: { maxOutputTokens: 650 } } })
    const one = await lab.run(['run', '--thread', 'T-suspend', '--task', 'Dig into it.', '--json'])
    assert.equal(one.code, 5, one.stderr)
    const parentId = one.events[0].runId
    const childId = `${parentId}.s1.a1`
    const paused = one.events.at(-1) as RunEvent<'run/paused'>
    assert.deepEqual([paused.type, paused.data.status, paused.data.child?.runId], ['run/paused', 'SUSPENDED', childId])
    const childPaused = (await lab.events(childId)).at(-1) as RunEvent<'run/paused'>
    assert.equal(childPaused.data.code, 'reservation_refused')

    const cancelled = await lab.run(['cancel', parentId])
    assert.equal(cancelled.code, 6, cancelled.stderr)
    const parentLog = await lab.events(parentId)
    const childLog = await lab.events(childId)
    assert.equal((childLog.at(-1) as RunEvent<'run/end'>).data.status, 'CANCELLED')
    assertParentMissedChild(parentLog, childLog)
    const next = await lab.run(['run', '--thread', 'T-suspend', '--task', 'Next.', '--json'])
    assertCounted(usedBeforeOf(next.events), parentLog, childLog)
  })

  it('a turn whose child ended before its call returned counts the child once (its call reported it, its log has it too)', async () => {
    lab = makeLab({ helper: { script: [{ tool: 'lookup', args: {} }, { tool: 'lookup', args: {} }, { final: 'found' }] } })
    app = await Cordage.fromPreset(lab.presetFile)
    const first = await app.agent('pay').run('Dig into it.', { thread: 'T-once' })
    assert.equal(first.status, 'COMPLETED', first.reason)
    const parentLog = await lab.events(first.runId)
    const childLog = await lab.events(`${first.runId}.s1.a1`)
    const reported = parentLog.find((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')
    assert.equal(tokens(reported!.data.usage!), tokens(modelSpend(childLog)), "the call reported the child's tokens")
    const second = await app.agent('pay').run('Next.', { thread: 'T-once' })
    assertCounted(usedBeforeOf(await lab.events(second.runId)), parentLog, childLog)
  })

  it("fail closed: a child's log edited behind the store's back refuses the next turn (thread_spending_unknown), nothing recorded", async () => {
    lab = makeLab({ helper: { script: [{ tool: 'lookup', args: {} }, { final: 'found' }] } })
    app = await Cordage.fromPreset(lab.presetFile)
    const first = await app.agent('pay').run('Dig into it.', { thread: 'T-edit' })
    assert.equal(first.status, 'COMPLETED', first.reason)
    await app.stop()
    app = undefined
    const childId = `${first.runId}.s1.a1`
    // Someone who can write the database shrinks what the child spent.
    const db = new Database(join(lab.dir, 'runs.db'))
    try {
      const changed = db
        .prepare(
          `UPDATE events SET body = replace(body, '"inputTokens":100', '"inputTokens":1') WHERE run_id = ? AND type = 'step/model-response'`,
        )
        .run(childId)
      assert.ok(changed.changes > 0)
    } finally {
      db.close()
    }
    const next = await lab.run(['run', '--thread', 'T-edit', '--task', 'Next.'])
    assert.equal(next.code, 1, next.stderr)
    assert.match(
      next.stderr,
      new RegExp(`thread_spending_unknown.*thread T-edit: what turn 1 \\(run ${first.runId}\\) spent cannot be determined.*store_corrupt`),
    )
    assert.equal((await lab.db().threadTurns!('T-edit')).length, 1, 'nothing of the refused turn was recorded')
  })
})
