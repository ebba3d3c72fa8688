/**
 * Review of the kernel changes since 4ac55b4 (approvals/grants, guardrail hook, parallel tool calls,
 * subagents and handoff). Each test below shows a bug (it fails until the bug is fixed) or guards a
 * rule that was checked and held.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent, RunState } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { supportDesk, type Harness } from './helpers.ts'
import { workbenchLog } from './fixtures/plugins/workbench/index.ts'

const dirs: string[] = []
after(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

/** What the probe plugin's tools did, in order (shared through globalThis: the plugin lives outside the repository). */
const probeLog: string[] = ((globalThis as Record<string, unknown>).__probeLog ??= []) as string[]

/**
 * A plugin folder outside the repository (its imports of cordage reach the host's copy) with tools the
 * fixtures lack: a charge with its own idempotency key and a footprint, and calls that hang past their
 * time limit (a write whose effect is then unknown, and a read that times out), each with a footprint
 * so they may share a wave.
 */
function probePlugin(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-probe-'))
  dirs.push(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'manifest.ts'), `
import { Schema } from 'cordis'
export default { name: 'probe', version: '1.0.0', requires: { tools: '^1.0.0' }, config: Schema.object({}) }
`)
  writeFileSync(join(dir, 'index.ts'), `
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
  ctx.tools.register(defineTool({
    name: 'hang_read', description: 'A read that never answers.', sideEffect: 'none', timeoutMs: 80,
    input: z.object({ name: z.string() }),
    footprint: ({ name }) => ({ reads: ['r/' + name] }),
    async run({ name }, io) { log.push('hang_read ' + name); return hang(io.signal) },
  }))
})
`)
  return dir
}

const workbench = { path: resolve(import.meta.dirname, 'fixtures/plugins/workbench'), config: { timeoutMs: 1500 } }
const allowAll = [{ id: 'all', verdict: 'allow', match: {} }]

let harness: Harness | undefined
afterEach(async () => {
  await harness?.stop()
  harness = undefined
  workbenchLog.length = 0
  probeLog.length = 0
})

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

describe('review: parallel tool calls (core/kernel/effects.ts executeTogether, core/kernel/loop.ts actTogether)', () => {
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
      script: [{ calls: [
        { tool: 'charge', args: { order: 'O-1', account: 'A', amount: 10 } },
        { tool: 'charge', args: { order: 'O-1', account: 'B', amount: 20 } },
      ] }, { final: 'Done.' }] as never,
      rules: allowAll, verifier: { minCount: 0 }, plugins: [{ path: probePlugin() }], parallelTools: false,
    })
    const state = await harness.agent.run('charge')
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.deepEqual(probeLog, ['charge O-1 A 10'])
    const second = of(await harness.events(state.runId), 's1.a2').find((e) => e.type === 'tool/error') as RunEvent<'tool/error'>
    assert.equal(second.data.code, 'idempotency_conflict')
  })
})

describe('review: a lost key race in the middle of a batch (lostKeyRace)', () => {
  it('does not run the later waves of the batch before the action whose intent was refused is settled', async () => {
    // Three writes to one file: three waves, which must run in proposal order.
    const h = await desk([{ calls: [
      { tool: 'put', args: { key: 'k1', file: 'f', text: '1' } },
      { tool: 'put', args: { key: 'K', file: 'f', text: '2' } },
      { tool: 'put', args: { key: 'k3', file: 'f', text: '3' } },
    ] }, { final: 'Done.' }])
    // Another run takes key K between a2's ledger look-up and its intent: the look-up saw nothing, the append is refused.
    const store = h.agent.store() as unknown as { effect(key: string): Promise<unknown>; ledger: Map<string, unknown> }
    const lookUp = store.effect.bind(store)
    // The class is frozen: a read method is replaced on the instance by definition (reads are not guarded).
    Object.defineProperty(store, 'effect', { writable: true, configurable: true, value: store.effect })
    let raced = false
    store.effect = async (key: string) => {
      if (key === 'put:K' && !raced) {
        raced = true
        store.ledger.set(key, { key, runId: 'run_other', actionId: 's1.a1', tool: 'put', argsHash: 'other-args', policyVersion: 'x', status: 'committed', attempts: 1, startedAt: Date.now(), endedAt: Date.now(), output: 'theirs' })
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
    // Today: lostKeyRace rebuilt state and execute returned 'continue', and actTogether went on to a3's wave;
    // a2 was settled only at a later pass, after a3 (which writes the same file) had run.
    assert.ok(settledA2 < startA3, `a3 started (seq ${events[startA3]?.seq}) before a2, proposed before it and writing the same file, was settled (seq ${events[settledA2]?.seq})`)
  })
})

describe('review: what the outcomes of one wave lead to', () => {
  it('a read that timed out does not hide a neighbour whose effect is unknown: it is never closed as "Not run"', async () => {
    // a1 times out (tool_timeout ends the run FAILED); a2, a write beside it, timed out too: its effect is unknown.
    const h = await desk([{ calls: [{ tool: 'hang_read', args: { name: 'x' } }, { tool: 'hang_write', args: { name: 'y' } }] }, { final: 'Done.' }])
    const state = await h.agent.run('work')
    assert.deepEqual(probeLog.sort(), ['hang_read x', 'hang_write y'], 'both calls started, side by side')
    const events = await h.events(state.runId)
    const a2 = of(events, 's1.a2')
    assert.ok(a2.some((e) => e.type === 'tool/start'), 'a2 ran')
    const closing = a2.filter((e): e is RunEvent<'tool/error'> => e.type === 'tool/error').at(-1)!
    // Today: tool/error { unknown: true } and then, from end(), "Not run: the run ended FAILED (tool_timeout) first."
    assert.doesNotMatch(closing.data.message, /^Not run/, `a2 started and its effect is unknown, yet the run closed it as: ${closing.data.message}`)
  })

  it("acts on every outcome of a wave: a read's timeout still fails the run after its neighbour's unknown effect is settled", async () => {
    // a1's effect is unknown (the run waits for a person); a2 timed out, which fails a run (tool_timeout).
    const h = await desk([{ calls: [{ tool: 'hang_write', args: { name: 'y' } }, { tool: 'hang_read', args: { name: 'x' } }] }, { final: 'Done, all fine.' }])
    // The run-ending outcome wins (the run does not go on after a tool timed out), and a1, whose effect is
    // unknown, is reported as such in run/end rather than forgotten or closed as "Not run".
    const state = await h.agent.run('work')
    assert.equal(state.status, 'FAILED', `the run went on to ${state.status} after a tool timed out`)
    assert.equal(state.failureCode, 'tool_timeout')
    const end = (await h.events(state.runId)).find((e): e is RunEvent<'run/end'> => e.type === 'run/end')!
    assert.deepEqual(end.data.effects?.unknown.map((u) => u.actionId), ['s1.a1'])
  })
})

// ── subagents and handoffs: several agents on one SQLite file ──────────────────────────────────────

const answer = 'Damaged items can be refunded in full within 30 days of delivery [source: policy/refunds#2].'

interface AgentSketch {
  script: unknown[]
  budgets?: Record<string, number>
  subagents?: Record<string, unknown>
  rules?: unknown[]
  verifier?: Record<string, unknown>
  desk?: Record<string, unknown>
  durability?: Record<string, number>
  plugins?: unknown[]
}

function presetFile(agents: Record<string, AgentSketch>, dir = mkdtempSync(join(tmpdir(), 'cordage-review4-'))): string {
  dirs.push(dir)
  const preset = {
    cordage: 1,
    agents: Object.fromEntries(Object.entries(agents).map(([name, a]) => [name, {
      description: `the ${name} agent`,
      budgets: { maxSteps: 8, ...a.budgets },
      // Whom the preset lets the agent reach: what its subagents tools offer.
      ...(a.subagents ? { spawns: (a.subagents as { agents?: string[] }).agents ?? [], handoffs: (a.subagents as { handoffs?: string[] }).handoffs ?? [] } : {}),
      ...(a.durability ? { durability: a.durability } : {}),
      model: { plugin: 'model-scripted', config: { script: a.script } },
      plugins: [
        { plugin: 'store-sqlite', config: { path: 'runs.db' } },
        'tools-registry', 'context-basic',
        { plugin: 'verifier-basic', config: { minCount: 0, ...a.verifier } },
        { plugin: 'policy-rules', config: { default: 'deny', approvers: ['*'], rules: a.rules ?? allowAll } },
        { plugin: 'support-desk', config: { outbox: 'outbox.jsonl', slowLookupDelayMs: 5000, slowLookupTimeoutMs: 10_000, ...a.desk } },
        ...(a.subagents ? [{ plugin: 'subagents', config: a.subagents }] : []),
        ...(a.plugins ?? []),
      ],
    }])),
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return file
}

const apps: Cordage[] = []
afterEach(async () => { for (const app of apps.splice(0)) await app.stop() })
async function open(file: string, options: { agents?: string[] } = {}): Promise<Cordage> {
  const app = await Cordage.fromPreset(file, { agents: options.agents, onError: () => {} })
  apps.push(app)
  return app
}

describe('review: handoff (core/kernel/loop.ts pass, core/kernel/agent.ts track/acceptHandoff)', () => {
  it('a cancel asked for while the run stops to be handed over is not lost: the run ends CANCELLED', async () => {
    const app = await open(presetFile({
      triage: { script: [{ tool: 'handoff', args: { agent: 'billing', reason: 'a refund question' } }], subagents: { handoffs: ['billing'] } },
      billing: { script: [{ final: 'never used' }, { tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: answer }] },
    }))
    let cancelled: Promise<RunState> | undefined
    // A watcher (a UI, a supervisor) cancels as soon as it sees the step that asked for the handoff end.
    app.root.on('step/end', (e: RunEvent) => {
      if (!cancelled && e.stepId === 's1') cancelled = app.agent('triage').cancel(e.runId, { by: 'supervisor', reason: 'stop it' })
    })
    const state = await app.agent('triage').run('my kettle arrived broken; refund?')
    assert.ok(cancelled, 'the cancel was asked for while triage still drove the run')
    const events = await app.agent('billing').store().load(state.runId)
    // Today: driver.cancel() only set a flag on triage's driver, which returned 'halt' for the handoff anyway;
    // billing accepted the run and finished it, and the cancel resolved with COMPLETED.
    assert.equal(state.status, 'CANCELLED', `cancel was asked for during the handoff, and the run ended ${state.status} (${events.map((e) => e.type).slice(-6).join(', ')})`)
  })
})

describe('review: subagents (core/host/agents.ts spawn)', () => {
  it("re-attaches to a child another process still drives, when the parent is resumed first, instead of failing the parent", async () => {
    const file = presetFile({
      lead: {
        script: [{ tool: 'spawn_agent', args: { agent: 'researcher', task: 'What is the refund window for damaged items?' } }, { final: 'The researcher found it: 30 days.' }],
        subagents: { agents: ['researcher'] },
      },
      researcher: { script: [{ tool: 'slow_lookup', args: { query: 'refunds' } }, { final: answer }], desk: { slowLookupDelayMs: 1500 } },
    })
    const first = await open(file)
    const second = await open(file)
    // Another process is another worker (the host names workers host:pid, the same for both apps here).
    for (const name of ['lead', 'researcher']) (second.agent(name).options as { worker: string }).worker = 'process-2'
    let resumed: Promise<RunState> | undefined
    // Process 1 drives the parent and its child. The parent's lease runs out first (leases are renewed one by
    // one; simulated here by giving it up), and process 2 resumes the parent while process 1 still drives the child.
    first.root.on('tool/start', (e: RunEvent) => {
      if (e.type !== 'tool/start' || e.data.tool !== 'slow_lookup' || resumed) return
      const parentId = e.runId.slice(0, e.runId.indexOf('.'))
      const lead = first.agent('lead') as unknown as { active: Map<string, { driver: { ownership: { release(): Promise<void> } } }> }
      resumed = lead.active.get(parentId)!.driver.ownership.release().then(async () => (await second.agent('lead').resume(parentId)).done)
    })
    const stale = first.agent('lead').run('refund window?').catch((error) => error)
    await new Promise<void>((r) => { const t = setInterval(() => { if (resumed) { clearInterval(t); r() } }, 10) })
    const parent = await resumed!
    await stale
    // Today: spawn finds the child RUNNING, calls researcher.resume, whose claim is refused (run_busy); the
    // tool fails with a 'conflict' error and the parent ends FAILED, while the child goes on and completes.
    assert.notEqual(parent.failureCode, 'run_busy', `the parent ended ${parent.status} (${parent.failureCode}): ${parent.reason}`)
    assert.equal(parent.status, "COMPLETED", `${parent.failureCode}: ${parent.reason}`)
  })
})

describe('review: the agents directory when not every agent of the preset is loaded (core/host/agents.ts, core/cli/main.ts)', () => {
  it('`cordage run --agent triage` (which loads only triage) can still hand the run over to billing', async () => {
    const file = presetFile({
      triage: { script: [{ tool: 'handoff', args: { agent: 'billing', reason: 'a refund question' } }], subagents: { handoffs: ['billing'] } },
      billing: { script: [{ final: 'never used' }, { tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: answer }] },
    })
    // What core/cli/main.ts `run` does with --agent: open(flags, [agent]).
    const app = await open(file, { agents: ['triage'] })
    const state = await app.agent('triage').run('my kettle arrived broken; refund?')
    // Today: the subagents plugin accepts the config (ctx.agents.list() lists the whole preset), but
    // checkHandoff/spawn call host.agent(name), which throws agent_not_found for an agent not loaded: the run FAILS.
    assert.equal(state.status, 'COMPLETED', `${state.status} (${state.failureCode}): ${state.reason}`)
  })
})

describe('review: the agent check in take() (core/kernel/agent.ts)', () => {
  it('a command refused because the run belongs to another agent leaves no lease renewal running behind', async () => {
    const app = await open(presetFile({
      triage: { script: [{ tool: 'handoff', args: { agent: 'billing', reason: 'a refund question' } }], subagents: { handoffs: ['billing'] }, durability: { leaseTtlMs: 60 } },
      billing: { script: [{ final: 'never used' }, { tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: answer }] },
    }))
    const state = await app.agent('triage').run('my kettle arrived broken; refund?')
    assert.equal(state.agent, 'billing')
    // The store's class is frozen (its methods cannot be wrapped to count calls): watch the intervals
    // the command starts instead. A refused command must stop every one it started.
    const started = new Set<unknown>()
    const [set, clear] = [globalThis.setInterval, globalThis.clearInterval]
    globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => { const t = set(...args); started.add(t); return t }) as typeof setInterval
    globalThis.clearInterval = ((t: Parameters<typeof clearInterval>[0]) => { started.delete(t); clear(t) }) as typeof clearInterval
    try {
      await assert.rejects(app.agent('triage').resume(state.runId), { code: 'agent_not_found' })
      await new Promise((r) => setTimeout(r, 200))
    } finally {
      globalThis.setInterval = set
      globalThis.clearInterval = clear
    }
    // Today: take() releases the lease with store.release(lease) but not the driver's Ownership, whose renew
    // (and, on a shared store, cancel-watch) intervals run on for good, one pair per refused command.
    assert.equal(started.size, 0, `the refused command's driver left ${started.size} interval(s) running (renewal, cancel watch)`)
  })
})

describe('review: held up (guards)', () => {
  it('an ask in the middle of a batch, approved by another process: each call runs once, every action closed once, decisions before starts', async () => {
    const file = presetFile({
      desk: {
        script: [{ calls: [
          { tool: 'read_slowly', args: { label: 'x', ms: 0 } },
          { tool: 'read_slowly', args: { label: 'y', ms: 0 } },
          { tool: 'read_slowly', args: { label: 'secret', ms: 0 } },
          { tool: 'read_slowly', args: { label: 'later', ms: 0 } },
        ] }, { final: 'Done.' }],
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
    await first.stop()
    apps.splice(apps.indexOf(first), 1)
    const second = await open(file)
    const done = await (await second.agent('desk').approve(paused.runId, 's1.a3', { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.deepEqual(workbenchLog, ['read x', 'read y', 'read secret', 'read later'])
    const events = await second.agent('desk').store().load(paused.runId)
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'seq gap-free')
    for (const id of ['s1.a1', 's1.a2', 's1.a3', 's1.a4']) {
      const mine = of(events, id)
      const closes = mine.filter((e) => e.type === 'tool/end' || (e.type === 'tool/error' && !e.data.willRetry && !e.data.unknown))
      assert.equal(closes.length, 1, `${id} closed once`)
      const decision = mine.findIndex((e) => e.type === 'tool/decision')
      const start = mine.findIndex((e) => e.type === 'tool/start')
      assert.ok(decision >= 0 && decision < start, `${id}: decision before start`)
      assert.equal(mine.filter((e) => e.type === 'tool/start').length, 1, `${id} started once`)
    }
    assert.ok(events.findIndex((e) => e.type === 'run/checkpoint') < events.findIndex((e) => e.type === 'tool/approval-requested'), 'checkpoint before the approval request')
  })
})
