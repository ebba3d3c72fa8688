/**
 * Each service behind its contract: the same support-desk preset completes with either context provider
 * and with either compactor, with no change to the kernel or to the other plugins.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { refundAnswer } from '../../../test/helpers.ts'
import { deskWith, fixture, type Desk } from './test-desk.ts'

const plugin = (name: string) => resolve(import.meta.dirname, '../..', name)

let desk: Desk | undefined
afterEach(async () => {
  await desk?.stop()
  desk = undefined
})

const topics = ['shipping', 'returns', 'warranty', 'shipping', 'returns', 'warranty', 'refunds']
const script = [...topics.map((topic) => ({ tool: 'lookup_policy', args: { topic } })), { final: refundAnswer }]
const summaries = [
  'Looked up shipping [source: policy/shipping#4], returns [source: policy/returns#1] and warranty [source: policy/warranty#1].',
]

describe('one preset, two implementations of each service', () => {
  const contexts = [
    { name: 'context-basic', entry: 'context-basic', version: '1.1.0' },
    { name: 'context-default', entry: { plugin: 'context-default', config: { maxTokens: 300 } }, version: '1.2.0' },
  ]
  for (const { name, entry, version } of contexts) {
    it(`completes the support desk with ${name} as the context`, async () => {
      desk = await deskWith({ script, maxSteps: 12, context: entry })
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED')
      const events = await desk.events(state.runId)
      assert.equal(events[0].type === 'run/start' && events[0].data.services.context, `${name}@${version}`)
      assert.ok(events.filter((e) => e.type === 'step/context').every((e) => e.producer === `${name}@${version}`))
    })
  }

  const compactors = [
    { name: 'compactor-keep-recent', entry: fixture('compactor-keep-recent'), strategy: 'compactor-keep-recent@1.0.0', version: '1.0.0' },
    {
      name: 'compaction-summary',
      entry: { plugin: 'compaction-summary', config: { windowTokens: 500, reserveTokens: 100 } },
      strategy: 'summary@1',
      version: '1.1.0',
    },
  ]
  for (const { name, entry, strategy, version } of compactors) {
    it(`completes a long run with ${name} as the compactor`, async () => {
      desk = await deskWith({ script, maxSteps: 12, contextTokens: 400, model: { summaries }, plugins: [entry] })
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED')
      const events = await desk.events(state.runId)
      assert.equal(events[0].type === 'run/start' && events[0].data.services.compactor, `${name}@${version}`)
      const ends = events.filter((e): e is Extract<RunEvent, { type: 'compaction/end' }> => e.type === 'compaction/end')
      assert.ok(ends.length >= 1)
      for (const e of ends)
        assert.ok(e.data.strategy === strategy && e.data.rejected === undefined && e.data.after < e.data.before && e.data.after <= 400)
      assert.equal(state.transcript.filter((t) => t.kind === 'observation').length, topics.length, 'state keeps everything either way')
    })
  }

  it('swaps both services while a run waits for approval: the run goes on under the new ones', async () => {
    const paused = [
      ...topics.map((topic) => ({ tool: 'lookup_policy', args: { topic } })),
      { tool: 'record_followup', args: { ticketId: 'T-9', note: 'Refund window explained.' } },
      ...topics.slice(0, 3).map((topic) => ({ tool: 'lookup_policy', args: { topic } })),
      { final: refundAnswer },
    ]
    desk = await deskWith({
      script: paused,
      maxSteps: 14,
      contextTokens: 350,
      model: { summaries },
      plugins: [fixture('compactor-keep-recent')],
    })
    const waiting = await desk.agent.run()
    assert.equal(waiting.status, 'WAITING_APPROVAL')
    assert.deepEqual(await desk.app.swap('support', 'context-basic', { path: plugin('context-default'), config: { maxTokens: 0 } }), {
      from: 'context-basic@1.1.0',
      to: 'context-default@1.2.0',
    })
    assert.deepEqual(
      await desk.app.swap('support', 'compactor-keep-recent', {
        path: plugin('compaction-summary'),
        config: { windowTokens: 500, reserveTokens: 100 },
      }),
      { from: 'compactor-keep-recent@1.0.0', to: 'compaction-summary@1.1.0' },
    )
    // Resuming under other plugins is an explicit, recorded decision (invariant 8).
    const state = await (await desk.agent.approve(waiting.runId, waiting.waiting!.actionId!, { by: 'alice', acceptDrift: true })).done
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await desk.events(state.runId)
    const approved = events.find((e) => e.type === 'tool/approval-decided')!.seq
    const producers = (type: string, before: boolean) =>
      new Set(events.filter((e) => e.type === type && e.seq < approved === before).map((e) => e.producer))
    assert.deepEqual([...producers('step/context', true)], ['context-basic@1.1.0'])
    assert.deepEqual([...producers('step/context', false)], ['context-default@1.2.0'])
    const strategies = (before: boolean) =>
      new Set(
        events
          .filter((e): e is Extract<RunEvent, { type: 'compaction/end' }> => e.type === 'compaction/end' && e.seq < approved === before)
          .map((e) => e.data.strategy),
      )
    assert.deepEqual([...strategies(true)], ['compactor-keep-recent@1.0.0'], 'the run records which strategy produced each context')
    assert.deepEqual([...strategies(false)], ['summary@1'])
    const drift = events.find((e): e is Extract<RunEvent, { type: 'run/version-drift' }> => e.type === 'run/version-drift')!
    assert.equal(drift.data.decision, 'accepted')
  })
})
