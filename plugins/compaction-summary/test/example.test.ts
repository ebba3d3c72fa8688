/**
 * The compaction example of this folder's README and of docs/concepts/compaction.md, run for real: the figures
 * the docs give (tokens before and after, what was summarised and what was kept) are checked here, so
 * the docs cannot drift from what the plugin does.
 */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { Cordage } from '../../../core/host/app.ts'
import { refundAnswer, tempDir } from '../../../test/helpers.ts'
import { SummaryRef } from '../compactor.ts'
import { deskWith, type Desk } from './test-desk.ts'
import { sumTokens } from '../tokens.ts'

let desk: Desk | undefined
afterEach(async () => {
  await desk?.stop()
  desk = undefined
})

const topics = ['shipping', 'pets', 'returns', 'warranty', 'shipping', 'returns', 'warranty', 'refunds']
const script = [...topics.map((topic) => ({ tool: 'lookup_policy', args: { topic } })), { final: refundAnswer }]
const ExampleSummary =
  'Looked up shipping [source: policy/shipping#4], returns [source: policy/returns#1] and warranty [source: policy/warranty#1]: no refund window yet. "pets" is not a topic (seq 19).'
const readme = readFileSync(resolve(import.meta.dirname, '../README.md'), 'utf8')
const page = readFileSync(resolve(import.meta.dirname, '../../../docs/concepts/compaction.md'), 'utf8')

async function example(useModel: boolean) {
  desk = await deskWith({
    script,
    maxSteps: 12,
    model: { usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.001 }, summaries: [ExampleSummary] },
    context: { plugin: 'context-default' },
    plugins: [{ plugin: 'compaction-summary', config: { windowTokens: 500, reserveTokens: 100, useModel } }],
  })
  const state = await desk.agent.run()
  assert.equal(state.status, 'COMPLETED', state.reason)
  const events = await desk.events(state.runId)
  const ends = events.filter((e): e is RunEvent<'compaction/end'> => e.type === 'compaction/end')
  const steps = desk.model().requests.filter((r) => r.purpose !== 'summary')
  return { state, events, ends, steps, summaries: desk.model().requests.filter((r) => r.purpose === 'summary') }
}

describe('compaction-summary: the documented example', () => {
  it("with the model's summary: 408 tokens before, 277 after, the goal, the summary and the last three calls kept", async () => {
    const { state, ends, steps, summaries } = await example(true)
    const [first, second] = ends
    assert.deepEqual(
      [first.data.before, first.data.after, first.data.kept, first.data.summarised],
      [408, 277, 9, [6, 10, 15, 19, 24, 28, 33, 37]],
    )
    assert.deepEqual(first.data.usage, { inputTokens: 100, outputTokens: 10, costUsd: 0.001 })
    assert.deepEqual(
      [second.data.before, second.data.after, second.data.usage],
      [466, 335, undefined],
      'the next step reuses the summary: no second model call',
    )
    assert.equal(summaries.length, 1)
    // Before: system, goal and seven calls with their results (16 messages); after: system, goal, summary, three calls with results.
    const before = steps[6].messages
    assert.equal(before.length, 14, 'the step before the first compaction, one call and result short of the compacted projection')
    const after = steps[7].messages
    assert.deepEqual(
      after.map((m) => m.source),
      [0, 2, 0, 42, 46, 51, 55, 60, 64],
    )
    assert.equal(sumTokens(after), 277)
    assert.equal(after[2].ref, SummaryRef)
    assert.equal(
      after[2].text,
      `[summary of earlier steps: 8 events up to seq 37, written by the model; the recall tool fetches any of them by seq]\n${ExampleSummary}`,
    )
    assert.equal(state.usage.inputTokens, 1000, 'nine steps and one summary, 100 input tokens each')
    for (const doc of [readme, page]) {
      assert.ok(doc.includes('| model summary | 408 | 277 | 16 → 9 | 6, 10, 15, 19, 24, 28, 33, 37 |'), 'the docs give the same figures')
      assert.ok(doc.includes(after[2].text.split('\n')[1]), 'the docs show the summary as the model saw it')
    }
  })

  it('with the extractive summary: 408 tokens before, 288 after, every fact and the failure named by seq', async () => {
    const { ends, steps } = await example(false)
    assert.deepEqual([ends[0].data.before, ends[0].data.after, ends[0].data.kept, ends[0].data.usage], [408, 288, 9, undefined])
    const summary = steps[7].messages[2]
    assert.equal(
      summary.text,
      [
        '[summary of earlier steps: 8 events up to seq 37, extracted from the run log; the recall tool fetches any of them by seq]',
        'Facts: seq 10: [source: policy/shipping#4]; seq 28: [source: policy/returns#1]; seq 37: [source: policy/warranty#1]',
        'Failed: seq 19',
        'Other summarised events (recall by seq): seqs 6, 15, 24, 33',
      ].join('\n'),
    )
    for (const doc of [readme, page]) {
      assert.ok(
        doc.includes('| extractive summary | 408 | 288 | 16 → 9 | 6, 10, 15, 19, 24, 28, 33, 37 |'),
        'the docs give the same figures',
      )
      assert.ok(doc.includes(summary.text.split('\n').slice(1).join('\n')), 'the docs show the extractive summary as it is')
    }
  })

  it('runs the example preset of docs/concepts/compaction.md to the same figures', async (t) => {
    const example = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.startsWith('# example: valid'))
    assert.ok(example, 'docs/concepts/compaction.md has an example preset')
    const dir = tempDir('cordage-compaction-docs-')
    writeFileSync(join(dir, 'preset.yml'), example)
    const app = await Cordage.fromPreset(join(dir, 'preset.yml'))
    t.after(() => app.stop())
    const agent = app.agent('support')
    const state = await agent.run()
    assert.equal(state.status, 'COMPLETED', state.reason)
    const events = await agent.store().load(state.runId)
    const [start, end] = events.filter((e) => e.type === 'compaction/start' || e.type === 'compaction/end') as [
      RunEvent<'compaction/start'>,
      RunEvent<'compaction/end'>,
    ]
    assert.deepEqual([start.seq, start.data.tokens, start.data.limit], [67, 408, 400])
    assert.deepEqual(
      [end.seq, end.data.before, end.data.after, end.data.kept, end.data.summarised],
      [68, 408, 277, 9, [6, 10, 15, 19, 24, 28, 33, 37]],
    )
    assert.ok(page.includes('68 compaction/end     strategy=summary@1 before=408 after=277 kept=9 summarised=[6,10,15,19,24,28,33,37]'))
  })
})
