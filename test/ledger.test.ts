/**
 * The side-effect ledger in one process: a run that loses the race for an idempotency key between its
 * look-up and its intent keeps the model's answer and deduplicates, rather than asking the model again.
 */
import assert from 'node:assert/strict'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { readService } from 'cordage'
import { Cordage } from '../core/host/app.ts'
import type { ScriptedModel } from '../plugins/model-scripted/index.ts'
import { tempDir } from './temp.ts'

describe('ledger', () => {
  it('keeps the model answer when another run takes the key between look-up and intent', async () => {
    const dir = tempDir()
    const file = join(dir, 'preset.yml')
    writeFileSync(
      file,
      stringify({
        agents: {
          pay: {
            task: 'refund',
            model: {
              plugin: 'model-scripted',
              config: { script: [{ tool: 'refund', args: { order: 'O-1', amount: 5 } }, { final: 'ok' }] },
            },
            plugins: [
              { path: resolve(import.meta.dirname, 'fixtures/plugins/stale-ledger') },
              'tools-registry',
              'context-basic',
              { plugin: 'verifier-basic', config: { minCount: 0 } },
              { plugin: 'policy-rules', config: { default: 'allow' } },
              { path: resolve(import.meta.dirname, 'fixtures/plugins/fault-desk'), config: { payments: 'payments.jsonl' } },
            ],
          },
        },
      }),
    )
    const { staleReads } = await import('./fixtures/plugins/stale-ledger/index.ts')
    const app = await Cordage.fromPreset(file)
    const agent = app.agent('pay')
    const first = await agent.run()
    const second = await agent.run()
    assert.equal(first.status, 'COMPLETED')
    assert.equal(second.status, 'COMPLETED')
    assert.equal(staleReads.count, 1, 'the second run looked the key up and was told it was free')
    const events = await agent.store().load(second.runId)
    // What the model received, not only what the log shows: a lost race used to ask it again, unrecorded.
    const model = readService<ScriptedModel>(agent.ctx, 'model')!.value
    assert.equal(
      model.requests.filter((r) => r.runId === second.runId && r.stepIndex === 1).length,
      1,
      'the model was asked once for step 1',
    )
    assert.equal(events.filter((e) => e.type === 'step/model-request' && e.stepId === 's1').length, 1)
    assert.equal(events.filter((e) => e.type === 'step/model-response' && e.stepId === 's1').length, 1)
    const end = events.find((e) => e.type === 'tool/end')
    assert.ok(end?.type === 'tool/end' && end.data.deduplicated?.runId === first.runId)
    await app.stop()
  })
})
