/**
 * The threads plugin through the host, on the support desk: its config bounds what a turn sees of the
 * turns before it; its config and its store requirement are checked when the preset loads; a run that
 * asked for no thread is left as it is. The thread guarantees themselves are in test/threads.test.ts
 * and the suites its README names.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { stringify } from 'yaml'
import { CordageError, type RunEvent, type TranscriptEntry } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { deskPreset, refundAnswer, supportDesk, tempDir } from '../../../test/helpers.ts'
import { historyOf } from '../history.ts'

const script = [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: refundAnswer }]

async function loadError(plugins: unknown[], options: { storePlugin?: unknown } = {}): Promise<unknown> {
  const file = join(tempDir('cordage-threads-plugin-'), 'preset.yml')
  writeFileSync(file, stringify(deskPreset({ script, threads: false, plugins, ...options }, 'outbox.jsonl')))
  try {
    const app = await Cordage.fromPreset(file, { onError: () => {} })
    await app.stop()
    return undefined
  } catch (error) {
    return error
  }
}

describe('threads plugin', () => {
  it('bounds the history a turn sees by historyBytes: the oldest turns keep their message and answer', async () => {
    const desk = await supportDesk({ script, threads: false, plugins: [{ plugin: 'threads', config: { historyBytes: 1024 } }] })
    try {
      for (const task of ['One?', 'Two?']) assert.equal((await desk.agent.run(task, { thread: 'T-b' })).status, 'COMPLETED')
      const third = await desk.agent.run('Three?', { thread: 'T-b' })
      assert.equal(third.status, 'COMPLETED', third.reason)
      const history = (await desk.events(third.runId))[1] as RunEvent<'thread/history'>
      assert.equal(history.type, 'thread/history')
      assert.ok(Buffer.byteLength(JSON.stringify(history.data.entries)) <= 1024, 'within historyBytes')
      assert.ok((history.data.shortened ?? 0) >= 1, 'turn 1 was shortened')
      assert.deepEqual(
        history.data.entries.filter((e) => e.turn === 't1').map((e) => e.kind),
        ['user', 'assistant'],
        'turn 1 down to its message and its answer',
      )
      assert.equal(history.data.entries.filter((e) => e.turn === 't2').length, 4, 'turn 2 whole')
    } finally {
      await desk.stop()
    }
  })

  it('leaves a run that asked for no thread as it is: no link, no history, turn t1', async () => {
    const desk = await supportDesk({ script })
    try {
      const state = await desk.agent.run('What is the refund window?')
      const events = await desk.events(state.runId)
      const start = events[0] as RunEvent<'run/start'>
      assert.equal(start.data.thread, undefined)
      assert.equal(start.data.plugins.threads, '1.0.0', 'the plugin was there')
      assert.deepEqual(
        events.slice(0, 2).map((e) => [e.type, e.turnId, e.threadId]),
        [
          ['run/start', undefined, undefined],
          ['turn/start', 't1', undefined],
        ],
      )
    } finally {
      await desk.stop()
    }
  })

  it('refuses a historyBytes above what the kernel records, when the preset loads', async () => {
    const error = await loadError([{ plugin: 'threads', config: { historyBytes: 300_000 } }])
    assert.ok(CordageError.is(error, 'plugin_config_invalid'), String(error))
    assert.match((error as Error).message, /historyBytes/)
  })

  it('refuses a store without threads (store contract before 2.3.0), when the preset loads', async () => {
    const error = await loadError(['threads'], {
      storePlugin: { path: resolve(import.meta.dirname, '../../../test/fixtures/plugins/store-without-threads') },
    })
    assert.ok(CordageError.is(error, 'plugin_requirement_incompatible'), String(error))
    assert.match((error as Error).message, /threads/)
    assert.match((error as Error).message, /store/)
  })
})

describe('historyOf', () => {
  const turn = (n: number, text: string): TranscriptEntry[] => [
    { kind: 'user', text: `q${n}`, seq: 1 },
    { kind: 'assistant', decision: { kind: 'final', text }, actionIds: [], seq: 2 },
  ]

  it('marks the entries of the turn before with their turn, and keeps what was marked before', () => {
    const earlier = historyOf({ runId: 'r1', transcript: turn(1, 'a1') }, 1).entries
    const history = historyOf({ runId: 'r2', transcript: [...earlier, ...turn(2, 'a2')] }, 2)
    assert.deepEqual(
      history.entries.map((e) => e.turn),
      ['t1', 't1', 't2', 't2'],
    )
    assert.deepEqual([history.from, history.turns], ['r2', 2])
  })

  it('clips long texts to clipChars once shortening whole turns was not enough', () => {
    const long = 'x'.repeat(5000)
    const history = historyOf({ runId: 'r1', transcript: turn(1, long) }, 1, 3000, 500)
    const answer = history.entries.find((e) => e.kind === 'assistant')!
    assert.ok(answer.kind === 'assistant' && answer.decision.kind === 'final')
    assert.equal(answer.decision.text, `${'x'.repeat(500)} … [clipped 4500 characters]`)
    assert.equal(history.dropped, undefined)
  })
})
