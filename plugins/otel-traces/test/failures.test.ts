/**
 * A collector that fails or hangs is the exporter's problem, never the run's: the run completes, and
 * the failure is logged through the host's plugin logger. The receivers are real HTTP servers on loopback.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { deskFile, open, until } from './desk.ts'
import { startReceiver } from './receiver.ts'

describe('otel-traces when the collector misbehaves', () => {
  it('a collector answering 500: the run completes, each failed export is logged and dropped', async () => {
    const receiver = await startReceiver('fail')
    const { app, lines } = await open(deskFile({ endpoint: receiver.url }))
    try {
      const agent = app.agent('support')
      const paused = await agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const done = await (await agent.approve(paused.runId, 's3.a1', { by: 'alice' })).done
      assert.equal(done.status, 'COMPLETED')
      await until(() => lines.some((l) => l.includes('could not export')), 'the failure to be logged')
      const line = lines.find((l) => l.includes('could not export'))!
      assert.match(
        line,
        /^warn \[support\/otel-traces\] could not export \d+ span\(s\) to http:\/\/127\.0\.0\.1:\d+\/v1\/traces: Internal Server Error; they are dropped$/,
      )
      assert.ok(receiver.requests.length > 0, 'the exporter did try')
    } finally {
      await app.stop()
      await receiver.close()
    }
  })

  it('a collector that never answers: the run completes while exports hang, and the timeout is logged', async () => {
    const receiver = await startReceiver('hang')
    const { app, lines } = await open(deskFile({ endpoint: receiver.url, processor: 'simple', timeoutMs: 300 }))
    try {
      const agent = app.agent('support')
      const paused = await agent.run()
      const done = await (await agent.approve(paused.runId, 's3.a1', { by: 'alice' })).done
      assert.equal(done.status, 'COMPLETED', 'no answer from the collector, and the run finished all the same')
      await until(() => receiver.requests.length > 0, 'an export to arrive')
      await until(() => lines.some((l) => /could not export .*Request timed out/.test(l)), 'the timeout to be logged')
      for (const line of lines) assert.match(line, /^warn \[support\/otel-traces\] could not export \d+ span\(s\) to /)
    } finally {
      await app.stop()
      await receiver.close()
    }
  })
})
