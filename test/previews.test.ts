/**
 * Previews before writes (issue 12): a tool's `preview` runs after policy asks for approval and before
 * the checkpoint and the request, its outcome recorded with the request (scrubbed of secrets), shown
 * to whoever decides, in any process, and never run again; and dry runs (`dry_run: true`), decided as
 * reads, that run the preview and never the tool. Through a real preset, the fixture plugin
 * preview-desk, and the `cordage` binary for the approval in another process.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import type { RunEvent, Tool } from 'cordage'
import { z } from 'zod'
import { defineTool } from '../core/kernel/tool.ts'
import { offersDryRun, splitDryRun } from '../core/kernel/dry-run.ts'
import { dryRunView, runPreview } from '../plugins/previews/index.ts'
import { checkPreview } from '../core/contracts/checks/preview.ts'
import { emptyState } from '../core/kernel/state.ts'
import { toView } from '../core/contracts/services/tools.ts'
import { LeakedSecret } from './fixtures/plugins/preview-desk/index.ts'
import { indexOf, supportDesk } from './helpers.ts'
import { sourceBin as bin } from './bin.ts'

const fixture = { path: resolve(import.meta.dirname, 'fixtures/plugins/preview-desk'), config: { log: 'previews.jsonl' } }
const done = { final: 'Done.' }
const Writes = { id: 'writes', verdict: 'ask', match: { sideEffect: ['local', 'external'] } }
const Reads = { id: 'read-only', verdict: 'allow', match: { sideEffect: 'none' } }

interface LogEntry {
  kind: 'preview' | 'write'
  tool: string
  pid: number
  [key: string]: unknown
}

interface DeskOptions {
  rules?: unknown[]
  sqlite?: boolean
  secrets?: string[]
  /** false: the agent does without the previews plugin (the kernel alone). */
  previews?: boolean
  /** More plugins, after the fixture. */
  plugins?: unknown[]
}

async function desk(script: unknown[], options: DeskOptions = {}) {
  const h = await supportDesk({
    script: script as never,
    rules: options.rules ?? [Reads, Writes],
    verifier: { minCount: 0 },
    plugins: [fixture, ...(options.plugins ?? [])],
    previews: options.previews,
    secrets: options.secrets,
    ...(options.sqlite ? { storePlugin: { plugin: 'store-sqlite', config: { path: 'runs.db' } } } : {}),
  })
  const log = (): LogEntry[] => {
    const file = join(h.dir, 'previews.jsonl')
    return existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : []
  }
  return Object.assign(h, { log })
}

const rogue = (config: Record<string, string>) => ({ path: resolve(import.meta.dirname, 'fixtures/plugins/rogue-previews'), config })
const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as RunEvent<T>[]
const requestOf = (events: RunEvent[]) => ofType(events, 'tool/approval-requested')[0]

describe('a preview before an approval request', () => {
  it('runs after the decision and before the checkpoint and the request, and is recorded with the request', async () => {
    const h = await desk([{ tool: 'write_note', args: { path: 'a.txt', text: 'new line' } }, done])
    try {
      const paused = await h.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const events = await h.events(paused.runId)
      const decision = indexOf(events, 'tool/decision', 's1.a1')
      const checkpoint = indexOf(events, 'run/checkpoint')
      const requested = indexOf(events, 'tool/approval-requested', 's1.a1')
      assert.ok(decision >= 0 && decision < checkpoint && checkpoint < requested, 'decision → checkpoint → request')
      const preview = requestOf(events).data.preview
      assert.ok(preview?.status === 'ok', JSON.stringify(preview))
      assert.equal(preview.preview.summary, 'write 8 characters to a.txt')
      assert.match(preview.preview.diff!, /^-old line\n\+new line$/m)
      assert.deepEqual(preview.preview.record, { path: 'a.txt', text: 'new line' })
      assert.deepEqual(preview.preview.amount, { value: 12.5, currency: 'EUR' })
      assert.ok(preview.durationMs >= 0)
      // The preview ran once, with the run's ids and a signal, and the tool did not run.
      const log = h.log()
      assert.deepEqual(
        log.map((e) => [e.kind, e.tool, e.runId, e.actionId, e.signal]),
        [['preview', 'write_note', paused.runId, 's1.a1', true]],
      )
      // The state carries it for whoever decides.
      assert.deepEqual(paused.actions['s1.a1'].preview, preview)
      const finished = await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(finished.status, 'COMPLETED', finished.reason)
      assert.deepEqual(
        h.log().map((e) => [e.kind, e.tool]),
        [
          ['preview', 'write_note'],
          ['write', 'write_note'],
        ],
        'approving runs the call once and the preview is not run again',
      )
    } finally {
      await h.stop()
    }
  })

  it('says so when the tool declares no preview', async () => {
    const h = await desk([{ tool: 'plain_write', args: { path: 'a.txt' } }, done])
    try {
      const paused = await h.agent.run()
      assert.deepEqual(requestOf(await h.events(paused.runId)).data.preview, { status: 'unavailable' })
    } finally {
      await h.stop()
    }
  })

  it('a preview that throws, answers garbage or never answers is recorded as failed, and the person is still asked', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ tool: 'write_note', args: { path: 'a', text: 't', mode: 'throw' } }, 'tool_failed', /the preview could not read the file/],
      [{ tool: 'write_note', args: { path: 'a', text: 't', mode: 'malformed' } }, 'verdict_invalid', /unknown key\(s\) extra/],
      [{ tool: 'slow_note', args: { path: 'a' } }, 'service_timeout', /slow_note's preview did not answer within 300 ms/],
    ]
    for (const [call, code, message] of cases) {
      const h = await desk([call, done])
      try {
        const paused = await h.agent.run()
        assert.equal(paused.status, 'WAITING_APPROVAL', 'a failed preview approves nothing and denies nothing: the person decides')
        const preview = requestOf(await h.events(paused.runId)).data.preview
        assert.ok(preview?.status === 'failed', JSON.stringify(preview))
        assert.equal(preview.code, code)
        assert.match(preview.message, message)
        assert.equal(h.log().filter((e) => e.kind === 'write').length, 0)
      } finally {
        await h.stop()
      }
    }
  })

  it("keeps the agent's secrets out of the recorded preview", async () => {
    process.env.PREVIEW_DESK_KEY = LeakedSecret
    const h = await desk([{ tool: 'write_note', args: { path: 'a', text: 't', mode: 'secret' } }, done], { secrets: ['PREVIEW_DESK_KEY'] })
    try {
      const paused = await h.agent.run()
      const request = requestOf(await h.events(paused.runId))
      assert.ok(request.data.preview?.status === 'ok')
      const stored = JSON.stringify(await h.events(paused.runId))
      assert.ok(!stored.includes(LeakedSecret), 'the secret is not stored anywhere in the run')
      assert.equal(request.data.preview.preview.summary, 'write a with key [redacted:PREVIEW_DESK_KEY]')
      assert.deepEqual(request.data.preview.preview.record, { key: '[redacted:PREVIEW_DESK_KEY]' })
    } finally {
      delete process.env.PREVIEW_DESK_KEY
      await h.stop()
    }
  })

  it('an approval in another process shows the recorded preview and does not run it again', async () => {
    const h = await desk([{ tool: 'write_note', args: { path: 'a.txt', text: 'new line' } }, done], { sqlite: true })
    try {
      const paused = await h.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      await h.app.stop()
      const result = spawnSync(process.execPath, [bin, 'approve', paused.runId, 's1.a1', '--preset', h.presetFile, '--by', 'alice'], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      })
      assert.equal(result.status, 0, result.stderr)
      assert.match(result.stderr, /preview: write 8 characters to a\.txt/)
      assert.match(result.stderr, /^\s+-old line$/m)
      assert.match(result.stderr, /^\s+\+new line$/m)
      assert.match(result.stderr, /amount: 12\.5 EUR/)
      const log = h.log()
      assert.deepEqual(
        log.map((e) => [e.kind, e.pid === process.pid ? 'this process' : 'the other']),
        [
          ['preview', 'this process'],
          ['write', 'the other'],
        ],
      )
    } finally {
      await h.stop()
    }
  })
})

describe('dry runs', () => {
  it('dry_run: true is decided as a read and runs the preview, never the tool: no ticket, no tool/start, no ledger entry', async () => {
    const h = await desk([{ tool: 'write_note', args: { path: 'a.txt', text: 'x', dry_run: true } }, done])
    try {
      const state = await h.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = (await h.events(state.runId)).filter((e) => e.actionId === 's1.a1')
      assert.deepEqual(
        events.map((e) => e.type),
        ['tool/proposed', 'tool/decision', 'tool/end'],
      )
      const [proposed, decision, end] = events as [RunEvent<'tool/proposed'>, RunEvent<'tool/decision'>, RunEvent<'tool/end'>]
      assert.deepEqual(proposed.data.args, { path: 'a.txt', text: 'x' }, 'dry_run is taken out of the arguments')
      assert.equal(proposed.data.dryRun, true)
      const { digestArgs } = await import('../core/kit/hash.ts')
      assert.equal(proposed.data.argsHash, digestArgs({ path: 'a.txt', text: 'x' }))
      assert.deepEqual([decision.data.verdict, decision.data.ruleId], ['allow', 'read-only'], 'policy saw a read')
      assert.equal(end.data.dryRun, true)
      assert.equal((end.data.output as { summary: string }).summary, 'write 1 characters to a.txt')
      assert.match(end.data.observation, /^Dry run, nothing was done\. write 1 characters to a\.txt/)
      assert.deepEqual(
        h.log().map((e) => e.kind),
        ['preview'],
      )
      assert.equal(await h.agent.store().effect(`${state.runId}/s1.a1`), undefined, 'nothing in the ledger')
    } finally {
      await h.stop()
    }
  })

  it('a dry run is never evidence: citing what the model wrote into a preview fails verification', async () => {
    const cited = 'Refunds take 365 days [source: policy/refunds#2]'
    const h = await supportDesk({
      script: [
        { tool: 'write_note', args: { path: 'a.txt', text: '[source: policy/refunds#2]', dry_run: true } },
        { final: cited },
      ] as never,
      rules: [Reads, Writes],
      verifier: { minCount: 1 },
      plugins: [fixture],
    })
    try {
      const state = await h.agent.run()
      const events = await h.events(state.runId)
      const end = ofType(events, 'tool/end')[0]
      assert.equal(end.data.dryRun, true)
      assert.match(end.data.observation, /policy\/refunds#2/, 'the preview does repeat the citation')
      assert.equal(state.status, 'FAILED_VERIFICATION')
      assert.equal(state.failureCode, 'missing_evidence')
    } finally {
      await h.stop()
    }
  })

  it('policy is told it is a dry run: a rule on dryRun denies it, and the model is told so', async () => {
    const rules = [{ id: 'no-previews', verdict: 'deny', priority: 5, match: { dryRun: true } }, Reads, Writes]
    const h = await desk([{ tool: 'write_note', args: { path: 'a', text: 'x', dry_run: true } }, done], { rules })
    try {
      const state = await h.agent.run()
      const error = ofType(await h.events(state.runId), 'tool/error')[0]
      assert.deepEqual(
        [error.data.code, error.data.observation],
        ['policy_denied', 'Denied by policy (rule no-previews): matched rule no-previews'],
      )
      assert.equal(error.data.dryRun, true, 'the denial of a dry run says it was one')
      assert.equal(h.log().length, 0, 'neither the preview nor the tool ran')
    } finally {
      await h.stop()
    }
  })

  it('a dry run a rule asks for waits for a person (no preview before), is approved once only, and then runs only the preview', async () => {
    const rules = [{ id: 'ask-previews', verdict: 'ask', priority: 5, match: { dryRun: true } }, Reads, Writes]
    const h = await desk([{ tool: 'write_note', args: { path: 'a', text: 'x', dry_run: true } }, done], { rules })
    try {
      const paused = await h.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      assert.equal(requestOf(await h.events(paused.runId)).data.preview, undefined)
      assert.equal(paused.actions['s1.a1'].dryRun, true)
      assert.equal(h.log().length, 0)
      await assert.rejects(h.agent.approve(paused.runId, 's1.a1', { by: 'alice', scope: 'run' }), /is a dry run .*--scope once/)
      const finished = await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(finished.status, 'COMPLETED', finished.reason)
      assert.deepEqual(
        h.log().map((e) => e.kind),
        ['preview'],
      )
      const end = ofType(await h.events(finished.runId), 'tool/end')[0]
      assert.equal(end.data.dryRun, true)
    } finally {
      await h.stop()
    }
  })

  it('refuses dry_run on a tool without a preview, and a dry_run that is not a boolean; dry_run: false is a normal call', async () => {
    const h = await desk(
      [
        {
          calls: [
            { tool: 'plain_write', args: { path: 'a', dry_run: true } },
            { tool: 'write_note', args: { path: 'a', text: 'x', dry_run: 'true' } },
          ],
        },
        { tool: 'write_note', args: { path: 'a', text: 'x', dry_run: false } },
        done,
      ],
      { rules: [Reads, { ...Writes, verdict: 'allow' }] },
    )
    try {
      const state = await h.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await h.events(state.runId)
      const errors = ofType(events, 'tool/error')
      assert.deepEqual(
        errors.map((e) => [e.actionId, e.data.code]),
        [
          ['s1.a1', 'invalid_arguments'],
          ['s1.a2', 'invalid_arguments'],
        ],
      )
      assert.match(errors[0].data.observation, /plain_write has no preview, so it cannot be dry-run/)
      assert.match(errors[1].data.observation, /dry_run for write_note must be true or false, got "true"/)
      assert.equal(indexOf(events, 'tool/decision', 's1.a1'), -1, 'refused before policy')
      const proposed = ofType(events, 'tool/proposed').find((e) => e.actionId === 's2.a1')!
      assert.deepEqual([proposed.data.args, proposed.data.dryRun], [{ path: 'a', text: 'x' }, undefined])
      assert.deepEqual(
        h.log().map((e) => [e.kind, e.tool]),
        [['write', 'write_note']],
        'only the call with dry_run: false ran, as a normal call',
      )
    } finally {
      await h.stop()
    }
  })

  it("leaves a tool alone whose own schema has dry_run: it is the tool's argument, passed to the real call", async () => {
    const h = await desk([{ tool: 'own_dry_run', args: { path: 'a', dry_run: true } }, done], {
      rules: [Reads, { ...Writes, verdict: 'allow' }],
    })
    try {
      const state = await h.agent.run()
      const events = await h.events(state.runId)
      const proposed = ofType(events, 'tool/proposed')[0]
      assert.deepEqual([proposed.data.args, proposed.data.dryRun], [{ path: 'a', dry_run: true }, undefined])
      // To the kernel it is a real call (a ticket, a ledger entry): it cannot know the tool did nothing, so it does not say so.
      assert.equal(ofType(events, 'tool/end')[0].data.dryRun, undefined)
      assert.deepEqual(
        h.log().map((e) => [e.kind, e.tool, e.dry_run]),
        [['write', 'own_dry_run', true]],
      )
    } finally {
      await h.stop()
    }
  })

  it('offers dry_run in the view the model sees, without changing the registered tool', async () => {
    const h = await desk([done])
    try {
      await h.agent.run()
      const tools = h.model().requests[0].tools
      const schemaOf = (name: string) => tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, unknown> }
      assert.deepEqual(schemaOf('write_note').properties.dry_run, {
        type: 'boolean',
        description: 'true: do nothing, only show what this call would do (its preview). Allowed like a read.',
      })
      assert.equal(schemaOf('plain_write').properties.dry_run, undefined)
      assert.deepEqual(schemaOf('own_dry_run').properties.dry_run, { type: 'boolean' })
      const registered = (await import('cordage')).readService<{ get(name: string): Tool | undefined }>(h.agent.ctx, 'tools')!.value
      assert.equal((registered.get('write_note')!.inputSchema as { properties: object }).properties.hasOwnProperty('dry_run'), false)
    } finally {
      await h.stop()
    }
  })

  it('refuses an unknown match key next to dryRun in policy-rules (a typo is a config error, not a rule that matches)', async () => {
    await assert.rejects(
      desk([done], { rules: [{ id: 'previews', verdict: 'allow', match: { dry_run: true } }] }),
      /no config key "dry_run"/,
    )
  })
})

describe('every event that ends a dry run says so (dryRun: true)', () => {
  const AskPreviews = { id: 'ask-previews', verdict: 'ask', priority: 5, match: { dryRun: true } }
  const closing = (events: RunEvent[], actionId: string) =>
    events.filter((e) => e.actionId === actionId && (e.type === 'tool/end' || e.type === 'tool/error')) as RunEvent<
      'tool/end' | 'tool/error'
    >[]

  it('a dry run a person rejects, and one left waiting when the run is cancelled', async () => {
    const script = [{ tool: 'write_note', args: { path: 'a', text: 'x', dry_run: true } }, done]
    for (const end of ['reject', 'cancel'] as const) {
      const h = await desk(script, { rules: [AskPreviews, Reads, Writes] })
      try {
        const paused = await h.agent.run()
        assert.equal(paused.status, 'WAITING_APPROVAL')
        const state =
          end === 'reject'
            ? await (await h.agent.reject(paused.runId, 's1.a1', { by: 'alice' })).done
            : await h.agent.cancel(paused.runId, { by: 'alice' })
        const [error] = closing(await h.events(state.runId), 's1.a1')
        assert.equal(error.type, 'tool/error', end)
        assert.deepEqual([error.data.code, error.data.dryRun], [end === 'reject' ? 'approval_rejected' : 'cancelled', true], end)
        assert.equal(h.log().length, 0)
      } finally {
        await h.stop()
      }
    }
  })

  it('a dry run in a parallel wave: its tool/end is marked, the real call beside it is not', async () => {
    const charge = (customerId: string, extra: object = {}) => ({ tool: 'charge_card', args: { customerId, amount: 5, ...extra } })
    const h = await supportDesk({
      script: [{ calls: [charge('C-1', { dry_run: true }), charge('C-2')] }, done] as never,
      rules: [Reads, { id: 'charges', verdict: 'allow', match: { tool: 'charge_card' } }],
      verifier: { minCount: 0 },
      plugins: [{ path: resolve(import.meta.dirname, 'fixtures/plugins/card-leak-desk') }],
    })
    try {
      const state = await h.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = await h.events(state.runId)
      const [dry] = closing(events, 's1.a1')
      const [real] = closing(events, 's1.a2')
      assert.deepEqual([dry.type, dry.data.dryRun], ['tool/end', true])
      assert.deepEqual([real.type, real.data.dryRun], ['tool/end', undefined])
      assert.deepEqual(
        events.filter((e) => e.type === 'tool/start').map((e) => e.actionId),
        ['s1.a2'],
        'only the real call started',
      )
      assert.equal(await h.agent.store().effect(`${state.runId}/s1.a1`), undefined, 'the dry run is not in the ledger')
    } finally {
      await h.stop()
    }
  })
})

describe('preview answers, checked strictly', () => {
  const ok = (answer: unknown) => checkPreview(answer).ok
  it('takes a summary with an optional diff, record and amount, and nothing else', () => {
    assert.ok(ok({ summary: 's' }))
    assert.ok(ok({ summary: 's', diff: '-a\n+b\n', record: { a: [1, null] }, amount: { value: -3.5, currency: 'USD' } }))
    for (const bad of [
      null,
      'text',
      [],
      {},
      { summary: '' },
      { summary: '   ' },
      { summary: 'x'.repeat(501) },
      { summary: 's', diff: 1 },
      { summary: 's', diff: 'x'.repeat(256 * 1024 + 1) },
      { summary: 's', record: { big: 'x'.repeat(64 * 1024) } },
      { summary: 's', record: 10n },
      { summary: 's', record: () => 1 },
      { summary: 's', amount: { value: Number.NaN, currency: 'EUR' } },
      { summary: 's', amount: { value: 1, currency: 'eur' } },
      { summary: 's', amount: { value: 1, currency: 'EUR', note: 'x' } },
      { summary: 's', amount: 5 },
      { summary: 's', html: '<b>' },
    ])
      assert.equal(
        ok(bad),
        false,
        JSON.stringify(bad, (_, v) => (typeof v === 'bigint' ? 'bigint' : v)),
      )
  })

  it('copies the record as plain JSON (a toJSON or a getter cannot change it later)', () => {
    let n = 0
    const record = {
      get live() {
        return ++n
      },
    }
    const checked = checkPreview({ summary: 's', record })
    assert.ok(checked.ok)
    assert.deepEqual(checked.value.record, { live: 1 })
    assert.deepEqual(checked.value.record, { live: 1 })
  })

  it('splitDryRun and dryRunView touch only tools with a preview and no dry_run of their own', () => {
    const base = {
      name: 't',
      description: 'd',
      input: z.object({ a: z.string() }),
      sideEffect: 'local' as const,
      run: () => ({ output: 1 }),
    }
    const withPreview = defineTool({ ...base, preview: () => ({ summary: 's' }) })
    const without = defineTool(base)
    // As the kernel takes it: a dry run when the view the previews plugin made offers one.
    const splitDryRunOf = (args: unknown, tool: Tool | undefined) =>
      splitDryRun(args, !!tool && offersDryRun(dryRunView(tool, toView(tool)), tool))
    assert.deepEqual(splitDryRunOf({ a: 'x', dry_run: true }, withPreview), { args: { a: 'x' }, dryRun: true })
    assert.deepEqual(splitDryRunOf({ a: 'x', dry_run: false }, withPreview), { args: { a: 'x' } })
    assert.deepEqual(splitDryRunOf({ a: 'x', dry_run: 'true' }, withPreview), { args: { a: 'x', dry_run: 'true' } })
    assert.deepEqual(splitDryRunOf({ a: 'x', dry_run: true }, without), { args: { a: 'x', dry_run: true } })
    assert.deepEqual(splitDryRunOf({ a: 'x', dry_run: true }, undefined), { args: { a: 'x', dry_run: true } })
    const view = dryRunView(withPreview, toView(withPreview))
    assert.ok((view.inputSchema as { properties: object }).properties.hasOwnProperty('dry_run'))
    assert.equal((withPreview.inputSchema as { properties: object }).properties.hasOwnProperty('dry_run'), false)
    assert.deepEqual(dryRunView(without, toView(without)), toView(without))
  })

  it("is bounded by the run: past the deadline or cancelled, the run's end is thrown, not recorded as the preview's failure", async () => {
    const never = defineTool({
      name: 'never',
      description: 'd',
      input: z.object({}),
      sideEffect: 'local',
      timeoutMs: 60_000,
      run: () => ({ output: 1 }),
      preview: (_args, io) => new Promise((_, reject) => io.signal.addEventListener('abort', () => reject(io.signal.reason))),
    })
    const info = (runId: string, signal: AbortSignal, state = emptyState(runId)) => ({
      runId,
      agent: 'a',
      state,
      signal,
      timeoutMs: 60_000,
    })
    const state = emptyState('run_d')
    state.deadline = Date.now() + 50
    await assert.rejects(runPreview(never, {}, 's1.a1', info('run_d', new AbortController().signal, state), 30_000), {
      code: 'deadline_exceeded',
    })
    const cancel = new AbortController()
    const pending = runPreview(never, {}, 's1.a1', info('run_c', cancel.signal), 30_000)
    const reason = new Error('cancelled by a test')
    cancel.abort(reason)
    await assert.rejects(pending, (error) => error === reason)
  })
})

describe('without the previews plugin: the kernel alone', () => {
  it('offers no dry_run, and refuses one a model sends anyway, before policy: neither the preview nor the tool runs', async () => {
    const h = await desk([{ tool: 'write_note', args: { path: 'a', text: 'x', dry_run: true } }, done], {
      previews: false,
      rules: [Reads, { ...Writes, verdict: 'allow' }],
    })
    try {
      const state = await h.agent.run()
      const schema = h.model().requests[0].tools.find((t) => t.name === 'write_note')!.inputSchema as { properties: object }
      assert.equal(Object.hasOwn(schema.properties, 'dry_run'), false, 'no dry_run in the view the model is shown')
      const events = await h.events(state.runId)
      const error = ofType(events, 'tool/error').find((e) => e.actionId === 's1.a1')!
      assert.equal(error.data.code, 'invalid_arguments')
      assert.equal(error.data.observation, 'dry_run is not offered for write_note: call it without dry_run.')
      assert.equal(indexOf(events, 'tool/decision', 's1.a1'), -1, 'refused before policy')
      assert.deepEqual(h.log(), [], 'neither the preview nor the tool ran')
    } finally {
      await h.stop()
    }
  })

  it('puts an approval request on record with no preview, and runs none; approved, the call runs once', async () => {
    const h = await desk([{ tool: 'write_note', args: { path: 'a.txt', text: 'new line' } }, done], { previews: false })
    try {
      const paused = await h.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const request = requestOf(await h.events(paused.runId))
      assert.equal(Object.hasOwn(request.data, 'preview'), false)
      assert.deepEqual(h.log(), [])
      const finished = await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(finished.status, 'COMPLETED', finished.reason)
      assert.deepEqual(
        h.log().map((e) => [e.kind, e.tool]),
        [['write', 'write_note']],
      )
    } finally {
      await h.stop()
    }
  })
})

describe('the kernel side of previews, against handlers that misbehave', () => {
  it("records the request with the call's own arguments: a tool/preview handler that changes them leaves a failed preview", async () => {
    const h = await desk([{ tool: 'write_note', args: { path: 'a.txt', text: 'new line' } }, done], {
      previews: false,
      plugins: [rogue({ preview: 'args' })],
    })
    try {
      const paused = await h.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const request = requestOf(await h.events(paused.runId))
      assert.deepEqual(request.data.args, { path: 'a.txt', text: 'new line' })
      const preview = request.data.preview
      assert.ok(preview?.status === 'failed', JSON.stringify(preview))
      assert.equal(preview.code, 'phase_failed')
      assert.match(preview.message, /the tool\/preview handler of rogue-previews@1\.0\.0 failed: .*may not change/)
      const finished = await (await h.agent.approve(paused.runId, 's1.a1', { by: 'alice' })).done
      assert.equal(finished.status, 'COMPLETED', finished.reason)
      assert.deepEqual(
        h.log().map((e) => [e.kind, e.path]),
        [['write', 'a.txt']],
        'the approval ran the call that was asked about',
      )
    } finally {
      await h.stop()
    }
  })

  it('records a preview a handler says the guardrail redacted, a failure under a code that does not exist, or a handler that throws, as failed: the person is still asked', async () => {
    for (const mode of ['redacted', 'code', 'throw']) {
      const h = await desk([{ tool: 'write_note', args: { path: 'a', text: 't' } }, done], {
        previews: false,
        plugins: [rogue({ preview: mode })],
      })
      try {
        const paused = await h.agent.run()
        assert.equal(paused.status, 'WAITING_APPROVAL', mode)
        const preview = requestOf(await h.events(paused.runId)).data.preview
        assert.ok(preview?.status === 'failed', `${mode}: ${JSON.stringify(preview)}`)
        assert.deepEqual([preview.code, preview.redacted], ['phase_failed', undefined], mode)
        assert.deepEqual(h.log(), [], mode)
      } finally {
        await h.stop()
      }
    }
  })

  it('ends a dry run offered for a tool without a preview with tool/error (dryRun): the tool never runs', async () => {
    const h = await desk([{ tool: 'plain_write', args: { path: 'a', dry_run: true } }, done], {
      previews: false,
      plugins: [rogue({ show: 'offer-all' })],
      rules: [Reads, { ...Writes, verdict: 'allow' }],
    })
    try {
      const state = await h.agent.run()
      const events = (await h.events(state.runId)).filter((e) => e.actionId === 's1.a1')
      assert.deepEqual(
        events.map((e) => e.type),
        ['tool/proposed', 'tool/decision', 'tool/error'],
      )
      const error = events[2] as RunEvent<'tool/error'>
      assert.deepEqual([error.data.code, error.data.dryRun], ['invalid_arguments', true])
      assert.deepEqual(h.log(), [])
    } finally {
      await h.stop()
    }
  })

  it('runs no tool for a dry run whatever its preview handler answers: no ticket, no tool/start, no ledger entry', async () => {
    const h = await desk([{ tool: 'plain_write', args: { path: 'a', dry_run: true } }, done], {
      previews: false,
      plugins: [rogue({ show: 'offer-all', preview: 'ok' })],
      rules: [Reads, { ...Writes, verdict: 'allow' }],
    })
    try {
      const state = await h.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      const events = (await h.events(state.runId)).filter((e) => e.actionId === 's1.a1')
      assert.deepEqual(
        events.map((e) => e.type),
        ['tool/proposed', 'tool/decision', 'tool/end'],
      )
      const end = events[2] as RunEvent<'tool/end'>
      assert.deepEqual([end.data.dryRun, (end.data.output as { summary: string }).summary], [true, 'would do nothing much'])
      assert.equal(await h.agent.store().effect(`${state.runId}/s1.a1`), undefined)
      assert.deepEqual(h.log(), [])
    } finally {
      await h.stop()
    }
  })

  it('fails the run before the model is asked when a tools/before-show handler renames a tool or answers nonsense', async () => {
    for (const mode of ['rename', 'garbage']) {
      const h = await desk([done], { previews: false, plugins: [rogue({ show: mode })] })
      try {
        const state = await h.agent.run()
        assert.deepEqual([state.status, state.failureCode], ['FAILED', 'phase_failed'], mode)
        assert.match(state.reason ?? '', /tools\/before-show handler of rogue-previews@1\.0\.0 failed/, mode)
        assert.equal(h.model().requests.length, 0, mode)
      } finally {
        await h.stop()
      }
    }
  })
})
