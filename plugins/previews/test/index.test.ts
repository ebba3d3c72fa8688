/**
 * The previews plugin through a real preset: the preview it attaches to an approval request, the
 * `dry_run` it offers the model, and the bounds it holds a preview to. What the kernel enforces
 * whatever the plugin does (no dry run reaches a tool, a preview is checked and screened, approves
 * nothing) is test/previews.test.ts.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { supportDesk } from '../../../test/helpers.ts'

const desk = resolve(import.meta.dirname, '../../../test/fixtures/plugins/preview-desk')
const done = { final: 'Done.' }
const Rules = [
  { id: 'reads', verdict: 'allow', match: { sideEffect: 'none' } },
  { id: 'writes', verdict: 'ask', match: { sideEffect: ['local', 'external'] } },
]

async function start(script: unknown[], previews: Record<string, unknown> | false, serviceTimeouts?: Record<string, number>) {
  const h = await supportDesk({
    script: script as never,
    rules: Rules,
    verifier: { minCount: 0 },
    previews: false,
    serviceTimeouts,
    plugins: [{ path: desk, config: { log: 'previews.jsonl' } }, ...(previews ? [{ plugin: 'previews', config: previews }] : [])],
  })
  const log = (): { kind: string; tool: string }[] => {
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

const requestOf = (events: RunEvent[]) => events.find((e) => e.type === 'tool/approval-requested') as RunEvent<'tool/approval-requested'>

describe('previews', () => {
  it("attaches the tool's own preview to the approval request, run once, before the request", async () => {
    const h = await start([{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'Refund sent.' } }, done], {})
    try {
      const paused = await h.agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const preview = requestOf(await h.events(paused.runId)).data.preview
      assert.ok(preview?.status === 'ok', JSON.stringify(preview))
      assert.deepEqual(preview.preview, {
        summary: 'record a follow-up note of 12 characters on ticket T-1',
        record: { ticketId: 'T-1', note: 'Refund sent.' },
      })
    } finally {
      await h.stop()
    }
  })

  it('offers dry_run on the tools that declare a preview and have none of their own, and on no other', async () => {
    const h = await start([done], {})
    try {
      await h.agent.run()
      const props = (name: string) =>
        (h.model().requests[0].tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, unknown> }).properties
      assert.equal((props('write_note').dry_run as { type: string }).type, 'boolean')
      assert.equal((props('record_followup').dry_run as { type: string }).type, 'boolean')
      assert.equal(props('plain_write').dry_run, undefined)
      assert.equal(props('lookup_policy').dry_run, undefined)
      assert.deepEqual(props('own_dry_run').dry_run, { type: 'boolean' }, "the tool's own argument, as it declared it")
    } finally {
      await h.stop()
    }
  })

  it('dryRuns: false offers none, so the kernel refuses one sent anyway; approvals still get their preview', async () => {
    const h = await start(
      [{ tool: 'write_note', args: { path: 'a', text: 'x', dry_run: true } }, { tool: 'write_note', args: { path: 'a', text: 'x' } }, done],
      { dryRuns: false },
    )
    try {
      const paused = await h.agent.run()
      const events = await h.events(paused.runId)
      assert.equal(
        h
          .model()
          .requests[0].tools.some(
            (t) => Object.hasOwn((t.inputSchema as { properties: object }).properties, 'dry_run') && t.name === 'write_note',
          ),
        false,
      )
      const refused = events.find((e) => e.type === 'tool/error' && e.actionId === 's1.a1') as RunEvent<'tool/error'>
      assert.deepEqual(
        [refused.data.code, refused.data.observation],
        ['invalid_arguments', 'dry_run is not offered for write_note: call it without dry_run.'],
      )
      assert.equal(paused.status, 'WAITING_APPROVAL')
      assert.equal(requestOf(events).data.preview?.status, 'ok')
      assert.deepEqual(
        h.log().map((e) => e.kind),
        ['preview'],
        'the preview for the approval ran; nothing for the refused dry run',
      )
    } finally {
      await h.stop()
    }
  })

  it('holds a preview to limitMs and to the time its handler has: an overrun is a failed preview, and the run goes on to ask', async () => {
    const cases: [Record<string, unknown>, Record<string, number> | undefined, string][] = [
      [{}, undefined, 'within 300 ms'], // the tool's own timeoutMs
      [{ limitMs: 150 }, undefined, 'within 150 ms'],
      [{}, { phases: 350 }, 'within 250 ms'], // serviceTimeouts.phases, less the time the kernel needs to take the answer
    ]
    for (const [config, timeouts, within] of cases) {
      const h = await start([{ tool: 'slow_note', args: { path: 'a' } }, done], config, timeouts)
      try {
        const paused = await h.agent.run()
        assert.equal(paused.status, 'WAITING_APPROVAL', JSON.stringify(config))
        const preview = requestOf(await h.events(paused.runId)).data.preview
        assert.ok(preview?.status === 'failed', JSON.stringify(preview))
        assert.equal(preview.code, 'service_timeout')
        assert.equal(preview.message, `slow_note's preview did not answer ${within}`)
      } finally {
        await h.stop()
      }
    }
  })

  it('refuses a limitMs that is not a positive number of milliseconds', async () => {
    await assert.rejects(start([done], { limitMs: 0 }), /limitMs/)
    await assert.rejects(start([done], { limitMs: 'soon' }), /limitMs/)
  })
})
