/**
 * Tool faults of `cordage eval` (core/eval/faults.ts) through real runs: a real app from a preset in a
 * temporary folder, the stand-in passed as `interceptTool`, and what the kernel made of each fault read
 * from the run's events and from the tools' own records (test/fixtures/plugins/eval-desk, the support
 * desk's outbox).
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { CordageError, type RunEvent, type RunState, type Tool } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import { toolFaults, type ToolFault, type ToolFaults } from '../core/eval/faults.ts'
import { Outbox } from '../plugins/support-desk/outbox.ts'
import { Records } from './fixtures/plugins/eval-desk/records.ts'
import { tempDir } from './temp.ts'

const done = { final: 'Done.' }

interface Lab {
  app: Cordage
  faults: ToolFaults
  run(): Promise<RunState>
  events(runId: string): Promise<RunEvent[]>
  /** eval-desk's effects, by tool. */
  records(tool: string): number
  followups(): number
  stop(): Promise<void>
}

/** An agent with the eval-desk and support-desk tools, every action allowed, any answer accepted. */
async function lab(script: unknown[], faults: ToolFault[], desk: Record<string, unknown> = {}): Promise<Lab> {
  const dir = tempDir('cordage-eval-faults-')
  const presetFile = join(dir, 'preset.yml')
  writeFileSync(
    presetFile,
    stringify({
      cordage: 1,
      agents: {
        desk: {
          task: 'do the thing',
          budgets: { maxSteps: 8 },
          retry: { attempts: 2, backoffMs: 1 },
          model: { plugin: 'model-scripted', config: { script } },
          plugins: [
            'store-memory',
            'tools-registry',
            'context-basic',
            { plugin: 'verifier-basic', config: { minCount: 0 } },
            { plugin: 'policy-rules', config: { default: 'allow' } },
            {
              path: resolve(import.meta.dirname, 'fixtures/plugins/eval-desk'),
              config: { records: 'records.jsonl', readTimeoutMs: 100, ...desk },
            },
            { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
          ],
        },
      },
    }),
  )
  const errors: unknown[] = []
  const stand = toolFaults(faults)
  const app = await Cordage.fromPreset(presetFile, { interceptTool: stand.intercept, onError: (e) => errors.push(e) })
  const agent = app.agent('desk')
  return {
    app,
    faults: stand,
    run: () => agent.run(),
    events: (runId) => agent.store().load(runId),
    records: (tool) => new Records(join(dir, 'records.jsonl')).all().filter((e) => e.tool === tool).length,
    followups: () => new Outbox(join(dir, 'outbox.jsonl')).entries().length,
    stop: async () => {
      await app.stop()
      assert.deepEqual(errors, [], 'the host reported no errors')
    },
  }
}

const of = (events: RunEvent[], type: string, tool: string) =>
  events.filter((e) => e.type === type && (e.data as { tool?: string }).tool === tool)
const codes = (events: RunEvent[], tool: string) => of(events, 'tool/error', tool).map((e) => (e.data as { code: string }).code)

describe('eval tool faults through real runs', () => {
  it('transient once: the kernel retries the idempotent write, which then lands once', async () => {
    const desk = await lab([{ tool: 'post_note', args: { text: 'hello' } }, done], [{ tool: 'post_note', kind: 'transient', times: 1 }])
    try {
      const run = await desk.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await desk.events(run.runId)
      assert.deepEqual(codes(events, 'post_note'), ['tool_unavailable'])
      assert.equal((of(events, 'tool/error', 'post_note')[0].data as { willRetry?: boolean }).willRetry, true)
      assert.equal(of(events, 'tool/end', 'post_note').length, 1)
      assert.equal(desk.records('post_note'), 1, 'one effect')
      assert.deepEqual(desk.faults.injected(), { post_note: 1 })
    } finally {
      await desk.stop()
    }
  })

  it('transient always: every attempt fails (1 + the tool retries), nothing lands, and the model is told', async () => {
    const desk = await lab(
      [{ tool: 'post_note', args: { text: 'hello' } }, done],
      [{ tool: 'post_note', kind: 'transient', times: 'always' }],
    )
    try {
      const run = await desk.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await desk.events(run.runId)
      assert.deepEqual(codes(events, 'post_note'), ['tool_unavailable', 'tool_unavailable', 'tool_unavailable'])
      assert.equal(of(events, 'tool/end', 'post_note').length, 0)
      assert.equal(desk.records('post_note'), 0, 'the tool was never called')
      assert.deepEqual(desk.faults.injected(), { post_note: 3 })
    } finally {
      await desk.stop()
    }
  })

  it('lost-response on an idempotent write: retried under the same key, the target deduplicates, one effect', async () => {
    const desk = await lab([{ tool: 'post_note', args: { text: 'hello' } }, done], [{ tool: 'post_note', kind: 'lost-response', times: 1 }])
    try {
      const run = await desk.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await desk.events(run.runId)
      assert.deepEqual(codes(events, 'post_note'), ['tool_connection_lost'])
      const starts = of(events, 'tool/start', 'post_note').map((e) => (e.data as { idempotencyKey: string }).idempotencyKey)
      assert.equal(starts.length, 2, 'called twice')
      assert.equal(starts[0], starts[1], 'under one key')
      assert.equal(desk.records('post_note'), 1, 'one effect')
    } finally {
      await desk.stop()
    }
  })

  it('lost-response on a write that is not idempotent: reconciled, not done again', async () => {
    const desk = await lab(
      [{ tool: 'send_letter', args: { text: 'hello' } }, done],
      [{ tool: 'send_letter', kind: 'lost-response', times: 1 }],
    )
    try {
      const run = await desk.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await desk.events(run.runId)
      assert.deepEqual(codes(events, 'send_letter'), ['tool_connection_lost'])
      const reconciled = of(events, 'tool/reconciled', 'send_letter')
      assert.equal(reconciled.length, 1)
      assert.equal((reconciled[0].data as { committed: boolean }).committed, true)
      assert.equal(of(events, 'tool/start', 'send_letter').length, 1, 'called once')
      assert.equal(desk.records('send_letter'), 1, 'one effect')
      assert.deepEqual(desk.faults.injected(), { send_letter: 1 })
    } finally {
      await desk.stop()
    }
  })

  it('lost-response on record_followup (idempotent, no retries, no reconcile): the run waits for a person, one follow-up', async () => {
    const followup = { tool: 'record_followup', args: { ticketId: 'T-1', note: 'Refund approved.' } }
    const desk = await lab([followup, done], [{ tool: 'record_followup', kind: 'lost-response', times: 1 }])
    try {
      const run = await desk.run()
      assert.equal(run.status, 'WAITING_RECONCILIATION', run.reason)
      assert.equal(run.waiting?.code, 'unknown_effect')
      assert.equal(desk.followups(), 1, 'the effect landed once')
    } finally {
      await desk.stop()
    }
  })

  it('timeout on a read: the call never answers, the kernel ends the run with tool_timeout', async () => {
    const desk = await lab([{ tool: 'read_notes', args: {} }, done], [{ tool: 'read_notes', kind: 'timeout', times: 1 }])
    try {
      const run = await desk.run()
      assert.equal(run.status, 'FAILED')
      assert.equal(run.failureCode, 'tool_timeout')
      assert.deepEqual(codes(await desk.events(run.runId), 'read_notes'), ['tool_timeout'])
      assert.deepEqual(desk.faults.injected(), { read_notes: 1 })
    } finally {
      await desk.stop()
    }
  })

  it('timeout on a reconcilable write: the kernel asks the system, which never saw it, and fails the run', async () => {
    const send = { tool: 'send_letter', args: { text: 'hello' } }
    const desk = await lab([send, done], [{ tool: 'send_letter', kind: 'timeout', times: 1 }], { letterTimeoutMs: 100 })
    try {
      const run = await desk.run()
      assert.equal(run.status, 'FAILED')
      assert.equal(run.failureCode, 'tool_timeout')
      const events = await desk.events(run.runId)
      // The call's own error says its effect is unknown; the kernel then closes the action at the run's end.
      const timedOut = of(events, 'tool/error', 'send_letter')[0].data as { code: string; unknown?: boolean }
      assert.deepEqual([timedOut.code, timedOut.unknown], ['tool_timeout', true])
      assert.deepEqual(
        of(events, 'tool/reconciled', 'send_letter').map((e) => (e.data as { committed: boolean }).committed),
        [false],
      )
      assert.equal(desk.records('send_letter'), 0)
    } finally {
      await desk.stop()
    }
  })

  it('fail: the tool is not called, the model hears tool_failed, and a later call goes through', async () => {
    const post = { tool: 'post_note', args: { text: 'hello' } }
    const desk = await lab([post, post, done], [{ tool: 'post_note', kind: 'fail', times: 1 }])
    try {
      const run = await desk.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      const events = await desk.events(run.runId)
      assert.deepEqual(codes(events, 'post_note'), ['tool_failed'])
      assert.equal(of(events, 'tool/end', 'post_note').length, 1)
      assert.equal(desk.records('post_note'), 1, 'only the second call landed')
    } finally {
      await desk.stop()
    }
  })

  it('fail always: every call is refused, none lands', async () => {
    const post = { tool: 'post_note', args: { text: 'hello' } }
    const desk = await lab([post, post, done], [{ tool: 'post_note', kind: 'fail', times: 'always' }])
    try {
      const run = await desk.run()
      assert.equal(run.status, 'COMPLETED', run.reason)
      assert.deepEqual(codes(await desk.events(run.runId), 'post_note'), ['tool_failed', 'tool_failed'])
      assert.equal(desk.records('post_note'), 0)
      assert.deepEqual(desk.faults.injected(), { post_note: 2 })
    } finally {
      await desk.stop()
    }
  })
})

describe('toolFaults', () => {
  const tool = (name: string): Tool =>
    Object.freeze({
      name,
      description: name,
      input: { safeParse: (v: unknown) => ({ success: true as const, data: v }) },
      inputSchema: {},
      sideEffect: 'none' as const,
      idempotent: true,
      timeoutMs: 1000,
      needsApproval: false,
      retries: 0,
      invoke: async () => ({ output: 'real' }),
    })
  const io = () => ({ runId: 'r', actionId: 'a', idempotencyKey: 'k', attempt: 1, signal: new AbortController().signal })

  it('leaves a tool no fault names as it is, and gives a faulted one as a fresh object', () => {
    const faults = toolFaults([{ tool: 'b', kind: 'fail', times: 1 }])
    const a = tool('a')
    const b = tool('b')
    assert.equal(faults.intercept('x', a), a)
    const stand = faults.intercept('x', b)
    assert.notEqual(stand, b)
    assert.equal(stand.name, 'b')
    assert.equal(Object.isFrozen(b), true)
  })

  it('faults on one tool apply in order, each to its own calls; then calls go through', async () => {
    const faults = toolFaults([
      { tool: 'b', kind: 'transient', times: 2 },
      { tool: 'b', kind: 'fail', times: 1 },
    ])
    const b = tool('b')
    const outcomes: string[] = []
    for (let i = 0; i < 4; i++) {
      try {
        await faults.intercept('x', b).invoke(undefined, {}, io())
        outcomes.push('ok')
      } catch (error) {
        outcomes.push((error as CordageError).code)
      }
    }
    assert.deepEqual(outcomes, ['tool_unavailable', 'tool_unavailable', 'tool_failed', 'ok'])
    assert.deepEqual(faults.injected(), { b: 3 })
  })

  it('timeout settles once the call is aborted, with the abort reason', async () => {
    const faults = toolFaults([{ tool: 'b', kind: 'timeout', times: 1 }])
    const controller = new AbortController()
    const pending = faults.intercept('x', tool('b')).invoke(undefined, {}, { ...io(), signal: controller.signal })
    const reason = new CordageError('tool_timeout', 'limit')
    controller.abort(reason)
    await assert.rejects(pending, (e) => e === reason)
  })

  it('names the tools faults name that the agent never registered', () => {
    const faults = toolFaults([
      { tool: 'lookup_policy', kind: 'fail', times: 1 },
      { tool: 'no_such_tool', kind: 'timeout', times: 1 },
      { tool: 'no_such_tool', kind: 'fail', times: 1 },
    ])
    assert.deepEqual(faults.unused(['lookup_policy', 'record_followup']), ['no_such_tool'])
    assert.deepEqual(faults.injected(), { lookup_policy: 0, no_such_tool: 0 })
  })

  it('refuses a fault that could never apply, or is not well formed', () => {
    assert.throws(
      () =>
        toolFaults([
          { tool: 'b', kind: 'fail', times: 'always' },
          { tool: 'b', kind: 'timeout', times: 1 },
        ]),
      (e) =>
        CordageError.is(e, 'invalid_input') &&
        /the fault timeout on b can never apply: an earlier fault \(fail, times: always\)/.test(e.message),
    )
    assert.throws(
      () => toolFaults([{ tool: 'b', kind: 'explode' as 'fail', times: 1 }]),
      (e) => CordageError.is(e, 'invalid_input') && /kind must be one of timeout, transient, lost-response, fail/.test(e.message),
    )
    assert.throws(
      () => toolFaults([{ tool: 'b', kind: 'fail', times: 0 }]),
      (e) => CordageError.is(e, 'invalid_input') && /times must be/.test(e.message),
    )
  })
})
