/**
 * mcp-tools over stdio, against the real fixture server started as a child process: the tools it
 * registers, agent runs through policy and the ledger, a server that dies mid-call, and cancellation.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { afterEach, describe, it } from 'node:test'
import { readService, type RunEvent, type ToolsService } from 'cordage'
import { indexOf, supportDesk, tempDir, type Harness } from '../../../test/helpers.ts'
import { IdempotencyKeyMeta } from '../index.ts'
import {
  allExited,
  callsOf,
  effects,
  fixtureFiles,
  invoke,
  loggedCalls,
  serverPids,
  stdioServer,
  type FixtureFiles,
} from './fixture-server.ts'

const Rules = [
  { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'mcp-writes-need-approval', verdict: 'ask', match: { needsApproval: true } },
]

let harness: Harness | undefined
let files: FixtureFiles | undefined

afterEach(async () => {
  await harness?.stop()
  harness = undefined
  // Whatever a test did, no server process outlives it.
  if (files) await allExited(serverPids(files))
  files = undefined
})

async function desk(script: unknown[], server: Record<string, unknown> = {}, options: { rules?: unknown[] } = {}): Promise<Harness> {
  files = fixtureFiles(tempDir('cordage-mcp-'))
  harness = await supportDesk({
    script: script as never,
    rules: options.rules ?? Rules,
    verifier: { minCount: 0 },
    plugins: [
      {
        plugin: 'mcp-tools',
        config: { log: false, reconnect: { attempts: 3, initialDelayMs: 20, maxDelayMs: 100 }, servers: [stdioServer(files, server)] },
      },
    ],
  })
  return harness
}

function registry(h: Harness): ToolsService {
  return readService<ToolsService>(h.agent.ctx, 'tools')!.value
}

function tool(h: Harness, name: string) {
  const found = registry(h).get(name)
  assert.ok(found, `${name} is registered`)
  return found
}

function only<T extends RunEvent['type']>(events: RunEvent[], type: T, actionId?: string): Extract<RunEvent, { type: T }> {
  const found = events.filter((e) => e.type === type && (actionId === undefined || e.actionId === actionId))
  assert.equal(found.length, 1, `one ${type}${actionId ? ` for ${actionId}` : ''}`)
  return found[0] as Extract<RunEvent, { type: T }>
}

describe('mcp-tools over stdio', () => {
  it("registers the server's tools under its namespace, with their input schemas and the preset's contracts", async () => {
    const h = await desk([], { tools: { lookup_order: { sideEffect: 'none' }, append_note: { idempotent: true, timeoutMs: 2000 } } })
    const names = registry(h)
      .list()
      .filter((t) => t.name.startsWith('fixture__'))
      .map((t) => t.name)
      .sort()
    assert.deepEqual(names, [
      'fixture__add_tool',
      'fixture__append_note',
      'fixture__append_then_crash',
      'fixture__crash',
      'fixture__fail',
      'fixture__get_status',
      'fixture__lookup_order',
      'fixture__picture',
      'fixture__slow',
      'fixture__whoami',
    ])
    const lookup = tool(h, 'fixture__lookup_order')
    assert.equal(lookup.description, 'Look up an order by id: its items and status.')
    assert.deepEqual(lookup.inputSchema, {
      type: 'object',
      properties: { orderId: { type: 'string', pattern: '^O-\\d+$', description: 'like O-123' } },
      required: ['orderId'],
      additionalProperties: false,
    })
    assert.equal(lookup.owner, 'mcp-tools@1.0.0')
    assert.deepEqual(lookup.tags, ['mcp', 'mcp:fixture'])
    const contract = (name: string) => {
      const t = tool(h, name)
      return {
        sideEffect: t.sideEffect,
        idempotent: t.idempotent,
        needsApproval: t.needsApproval,
        timeoutMs: t.timeoutMs,
        retries: t.retries,
      }
    }
    // Read-only by the preset's say-so: safe to repeat, no approval wanted.
    assert.deepEqual(contract('fixture__lookup_order'), {
      sideEffect: 'none',
      idempotent: true,
      needsApproval: false,
      timeoutMs: 30_000,
      retries: 0,
    })
    assert.deepEqual(contract('fixture__append_note'), {
      sideEffect: 'external',
      idempotent: true,
      needsApproval: true,
      timeoutMs: 2000,
      retries: 0,
    })
    // Nothing said: the default contract of every MCP tool.
    assert.deepEqual(contract('fixture__get_status'), {
      sideEffect: 'external',
      idempotent: false,
      needsApproval: true,
      timeoutMs: 30_000,
      retries: 0,
    })
  })

  it("refuses arguments that do not match the tool's schema before the server is called", async () => {
    const h = await desk([{ tool: 'fixture__lookup_order', args: { orderId: 'seven' } }, { final: 'Could not look it up.' }], {
      tools: { lookup_order: { sideEffect: 'none' } },
    })
    await assert.rejects(invoke(tool(h, 'fixture__lookup_order'), { orderId: 7 }), { code: 'invalid_arguments' })
    await assert.rejects(invoke(tool(h, 'fixture__lookup_order'), { orderId: 'O-7', extra: true }), { code: 'invalid_arguments' })
    const state = await h.agent.run('Look up order seven')
    assert.equal(state.status, 'COMPLETED')
    const events = await h.events(state.runId)
    const error = only(events, 'tool/error')
    assert.equal(error.data.code, 'invalid_arguments')
    assert.match(error.data.observation, /orderId/)
    assert.equal(indexOf(events, 'tool/decision'), -1, 'policy never saw the call')
    assert.equal(callsOf(files!, 'lookup_order').length, 0, 'the server never saw it either')
  })

  it('runs a read-only tool, then a write only after approval, exactly once, through the ledger', async () => {
    const h = await desk(
      [
        { tool: 'fixture__lookup_order', args: { orderId: 'O-7' } },
        { tool: 'fixture__append_note', args: { note: 'refund approved for O-7' } },
        { final: 'Noted the refund on O-7.' },
      ],
      { tools: { lookup_order: { sideEffect: 'none' } } },
    )
    const paused = await h.agent.run('Note the refund on O-7')
    assert.equal(paused.status, 'WAITING_APPROVAL')
    assert.equal(paused.waiting?.actionId, 's2.a1')
    assert.equal(effects(files!).length, 0, 'no effect before approval')
    assert.equal(callsOf(files!, 'lookup_order').length, 1)

    const done = await (await h.agent.approve(paused.runId, 's2.a1', { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED')
    const made = effects(files!)
    assert.equal(made.length, 1, 'the approved write happened exactly once')
    assert.equal(made[0].note, 'refund approved for O-7')

    const events = await h.events(paused.runId)
    const types = events.filter((e) => e.actionId === 's1.a1').map((e) => e.type)
    assert.deepEqual(types, ['tool/proposed', 'tool/decision', 'tool/start', 'tool/end'])
    assert.deepEqual(
      events.filter((e) => e.actionId === 's2.a1').map((e) => e.type),
      ['tool/proposed', 'tool/decision', 'tool/approval-requested', 'tool/approval-decided', 'tool/start', 'tool/end'],
    )
    const lookupEnd = only(events, 'tool/end', 's1.a1')
    assert.deepEqual(lookupEnd.data.output, { orderId: 'O-7', items: 2, status: 'delivered', damaged: true })
    assert.equal(lookupEnd.data.observation, 'Order O-7: 2 kettles, delivered damaged.')
    assert.equal(lookupEnd.producer, 'mcp-tools@1.0.0')
    const decision = only(events, 'tool/decision', 's2.a1')
    assert.equal(decision.data.ruleId, 'mcp-writes-need-approval')
    // The server got the kernel's idempotency key with the call, the key of the ledger row.
    const start = only(events, 'tool/start', 's2.a1')
    assert.equal(made[0].key, start.data.idempotencyKey)
    assert.equal(start.data.idempotencyKey, `${paused.runId}/s2.a1`)
    assert.equal(IdempotencyKeyMeta, 'cordage/idempotencyKey')
    const effect = await h.agent.store().effect(start.data.idempotencyKey)
    assert.equal(effect?.status, 'committed')
  })

  it('pauses WAITING_RECONCILIATION when the server dies during a write: tool_connection_lost, outcome unknown', async () => {
    const h = await desk(
      [{ tool: 'fixture__append_then_crash', args: { note: 'refund O-9' } }, { final: 'Refund noted.' }],
      {},
      { rules: [{ id: 'all', verdict: 'allow' }] },
    )
    const state = await h.agent.run('Note the refund on O-9')
    assert.equal(state.status, 'WAITING_RECONCILIATION')
    const events = await h.events(state.runId)
    const error = only(events, 'tool/error', 's1.a1')
    assert.equal(error.data.code, 'tool_connection_lost')
    assert.equal(error.data.errorClass, 'tool_transient')
    assert.equal(error.data.unknown, true)
    assert.match(error.data.message, /went away during the call of append_then_crash: the server process was killed by SIGKILL/)
    const paused = events[events.length - 1]
    assert.ok(paused.type === 'run/paused' && paused.data.code === 'unknown_effect')
    // It did take effect before dying; a person who checked says so, and the run goes on.
    assert.equal(effects(files!).length, 1)
    const done = await (await h.agent.reconcile(state.runId, 's1.a1', true, { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED')
    assert.equal(effects(files!).length, 1, 'settling does not call the tool again')
  })

  it('tells the model when a read-only call loses its server, and the next call works on a restarted server', async () => {
    const h = await desk(
      [
        { tool: 'fixture__crash', args: {} },
        { tool: 'fixture__lookup_order', args: { orderId: 'O-1' } },
        { final: 'Order O-1 was delivered.' },
      ],
      { tools: { crash: { sideEffect: 'none' }, lookup_order: { sideEffect: 'none' } } },
    )
    const state = await h.agent.run('Look up O-1')
    assert.equal(state.status, 'COMPLETED')
    const events = await h.events(state.runId)
    const error = only(events, 'tool/error', 's1.a1')
    assert.equal(error.data.code, 'tool_connection_lost')
    assert.equal(error.data.unknown, undefined)
    const told = h.model().requests[1].messages.find((m) => m.role === 'tool')
    assert.match(told!.text, /fixture__crash failed \(tool_connection_lost\)/)
    assert.ok(only(events, 'tool/end', 's2.a1'))
    const [crashed] = callsOf(files!, 'crash')
    const [looked] = callsOf(files!, 'lookup_order')
    assert.notEqual(crashed.pid, looked.pid, 'the second call went to a new server process')
    assert.equal(serverPids(files!).length, 2)
  })

  it('feeds an isError result back to the model as tool_failed, and the run goes on', async () => {
    const h = await desk([{ tool: 'fixture__fail', args: { orderId: 'O-3' } }, { final: 'O-3 is locked.' }], {
      tools: { fail: { sideEffect: 'none' } },
    })
    const state = await h.agent.run('Refund O-3')
    assert.equal(state.status, 'COMPLETED')
    const error = only(await h.events(state.runId), 'tool/error', 's1.a1')
    assert.equal(error.data.code, 'tool_failed')
    assert.equal(error.data.message, 'order O-3 is locked by another refund')
    assert.match(h.model().requests[1].messages.find((m) => m.role === 'tool')!.text, /order O-3 is locked by another refund/)
  })

  it('summarises content that is not text, and keeps the content parts as output', async () => {
    const h = await desk([])
    const result = await invoke(tool(h, 'fixture__picture'), {})
    assert.equal(result.observation, 'Orders per day:\n[image image/png]')
    assert.deepEqual(result.output, [
      { type: 'text', text: 'Orders per day:' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ])
  })

  it('stops a slow call promptly when it is aborted, and tells the server to cancel', async () => {
    const h = await desk([])
    const controller = new AbortController()
    const started = Date.now()
    const pending = invoke(tool(h, 'fixture__slow'), { ms: 10_000 }, { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stop now')), 100)
    await assert.rejects(pending, { code: 'cancelled' })
    assert.ok(Date.now() - started < 1000, 'rejected soon after the abort')
    // The SDK sent notifications/cancelled; the server stopped its work. Up to 5 s for the server to say
    // so: on a machine with a load average above 10 it once took longer than 2 s (passes alone 3 of 3).
    for (let i = 0; i < 250 && !cancelledOnServer(files!); i++) await new Promise((r) => setTimeout(r, 20))
    assert.ok(cancelledOnServer(files!), 'the server saw the cancellation')
    // The connection is still usable afterwards.
    assert.equal((await invoke(tool(h, 'fixture__get_status'), {})).observation, 'all systems nominal')
  })

  it("fails a call with the kernel's tool_timeout when the server is too slow", async () => {
    const h = await desk([{ tool: 'fixture__slow', args: { ms: 5000 } }, { final: 'unused' }], {
      tools: { slow: { sideEffect: 'none', timeoutMs: 200 } },
    })
    const state = await h.agent.run('Wait')
    assert.equal(state.status, 'FAILED')
    assert.equal(state.failureCode, 'tool_timeout')
  })

  it("follows the server's tool list: tools/list_changed, and a restart with other tools", async () => {
    const h = await desk([], { tools: { crash: { sideEffect: 'none' } } })
    await invoke(tool(h, 'fixture__add_tool'), { name: 'late_arrival' })
    for (let i = 0; i < 100 && !registry(h).get('fixture__late_arrival'); i++) await new Promise((r) => setTimeout(r, 10))
    assert.equal((await invoke(tool(h, 'fixture__late_arrival'), {})).observation, 'late_arrival here')

    // The next version of the server drops `fail` and adds `added_in_v2`; it starts when the old one dies.
    writeFileSync(files!.variant, 'v2')
    await assert.rejects(invoke(tool(h, 'fixture__crash'), {}), { code: 'tool_connection_lost' })
    for (let i = 0; i < 200 && !registry(h).get('fixture__added_in_v2'); i++) await new Promise((r) => setTimeout(r, 10))
    assert.ok(registry(h).get('fixture__added_in_v2'), 'the new tool is registered after the reconnect')
    assert.equal(registry(h).get('fixture__fail'), undefined, 'the removed tool is gone')
    assert.equal(registry(h).get('fixture__late_arrival'), undefined, 'so is the one the old process added')
    assert.equal((await invoke(tool(h, 'fixture__added_in_v2'), {})).observation, 'v2 here')
  })

  it('stops restarting a server that keeps dying soon after it starts, until a call asks for it', async () => {
    const h = await desk([], { env: { MCP_FIXTURE_EXIT_AFTER: '500' } })
    // attempts: 3 in desk(): the first start, then three restarts in the background, then no more.
    // Each dies 500 ms after its handshake (the fixture's MCP_FIXTURE_EXIT_AFTER); the bound is for a loaded machine.
    const until = Date.now() + 20_000
    while (serverPids(files!).length < 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
    assert.equal(serverPids(files!).length, 4)
    await allExited(serverPids(files!))
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(serverPids(files!).length, 4, 'no fifth start in the background')
    assert.equal((await invoke(tool(h, 'fixture__get_status'), {})).observation, 'all systems nominal')
    assert.equal(serverPids(files!).length, 5, 'the call started it again')
  })

  it('passes the idempotency key in _meta on direct calls too', async () => {
    const h = await desk([])
    await invoke(tool(h, 'fixture__append_note'), { note: 'x' }, { runId: 'run_o7', actionId: 's1.a2' })
    assert.equal(effects(files!)[0].key, 'run_o7/s1.a2')
    assert.equal(callsOf(files!, 'append_note')[0].key, 'run_o7/s1.a2')
  })
})

function cancelledOnServer(files: FixtureFiles): boolean {
  return loggedCalls(files).some((c) => c.tool === 'slow' && c.cancelled)
}
