/**
 * What reaches an OTLP/HTTP receiver on loopback from a support-desk run that pauses for approval in
 * one process and is approved and finished in another: decoded from the OTLP JSON the exporter sends,
 * resourceSpans → scopeSpans → spans, with names, attributes and parent links.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { describe, it } from 'node:test'
import { promisify } from 'node:util'
import { traceIdOf } from '../index.ts'
import { deskFile, Usage } from './desk.ts'
import { startReceiver, type ReceivedSpan } from './receiver.ts'

const run = promisify(execFile)
const drive = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'drive.ts'), ...args], {
    env: { ...process.env, ...env },
    cwd: resolve(import.meta.dirname, '../../..'),
  })
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { runId: string; status: string }
}

describe('otel-traces over OTLP/HTTP', () => {
  it('a run paused in one process and approved in another reaches the receiver as one trace of two drives', async () => {
    const receiver = await startReceiver('ok')
    const token = 'Bearer otel-test-token-0123456789'
    try {
      const file = deskFile({
        endpoint: receiver.url,
        headersEnv: { authorization: 'CORDAGE_OTEL_TEST_TOKEN' },
        headers: { 'x-tenant': 'support-team' },
        serviceName: 'support-desk',
        resource: { 'deployment.environment.name': 'test' },
      })
      const env = { CORDAGE_OTEL_TEST_TOKEN: token }
      // Each process exits once its exports are done: the spans are there when it has gone.
      const paused = await drive(env, file, 'run')
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const firstProcess = receiver.spans.length
      assert.ok(firstProcess > 0, 'the first process sent its spans before it ended')
      const done = await drive(env, file, 'approve', paused.runId, 's3.a1')
      assert.equal(done.status, 'COMPLETED')

      for (const r of receiver.requests) {
        assert.equal(r.contentType, 'application/json')
        assert.equal(r.headers.authorization, token)
        assert.equal(r.headers['x-tenant'], 'support-team')
      }
      const spans = receiver.spans
      const byId = new Map(spans.map((s) => [s.spanId, s]))
      const parent = (s: ReceivedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
      for (const s of spans) {
        assert.equal(s.traceId, traceIdOf(paused.runId), `${s.name} is in the run's trace`)
        assert.deepEqual([s.resource['service.name'], s.resource['deployment.environment.name']], ['support-desk', 'test'])
        assert.equal(s.scope.name, 'cordage.otel-traces')
        if (s.parentSpanId) assert.ok(parent(s), `the parent of ${s.name} arrived too`)
      }

      const drives = spans.filter((s) => s.name === 'invoke_agent support')
      assert.deepEqual(
        drives.map((d) => [
          d.attributes['cordage.run.status'],
          d.parentSpanId,
          d.attributes['gen_ai.operation.name'],
          d.attributes['gen_ai.agent.name'],
        ]),
        [
          ['WAITING_APPROVAL', undefined, 'invoke_agent', 'support'],
          ['COMPLETED', undefined, 'invoke_agent', 'support'],
        ],
      )
      assert.ok(spans.slice(0, firstProcess).includes(drives[0]))
      assert.equal(drives[1].attributes['cordage.continued'], true, 'the second process drives on from the pause')
      assert.deepEqual(
        [drives[1].attributes['gen_ai.usage.input_tokens'], drives[1].attributes['gen_ai.usage.output_tokens']],
        [4 * Usage.inputTokens, 4 * Usage.outputTokens],
      )

      // The tree, as the receiver rebuilds it from parentSpanId.
      const path = (s: ReceivedSpan): string[] => (parent(s) ? [...path(parent(s)!), s.name] : [s.name])
      const chats = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
      assert.deepEqual(
        chats.map((c) => [
          c.name,
          c.attributes['cordage.step.id'],
          c.kind,
          c.attributes['gen_ai.usage.input_tokens'],
          c.attributes['gen_ai.provider.name'],
        ]),
        ['s1', 's2', 's3', 's4'].map((step) => ['chat scripted', step, 3 /* SPAN_KIND_CLIENT */, Usage.inputTokens, 'scripted']),
      )
      for (const chat of chats) assert.deepEqual(path(chat), ['invoke_agent support', 'cordage.turn', 'cordage.step', 'chat scripted'])

      const tools = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool')
      assert.deepEqual(
        tools.map((t) => [t.name, t.attributes['cordage.action.id'], t.status.code, t.attributes['error.type'] ?? null]),
        [
          ['execute_tool lookup_policy', 's1.a1', 2 /* STATUS_CODE_ERROR */, 'tool_failed'],
          ['execute_tool lookup_policy', 's2.a1', 0, null],
          ['execute_tool record_followup', 's3.a1', 0, null],
        ],
      )
      for (const tool of tools) assert.deepEqual(path(tool).slice(0, 3), ['invoke_agent support', 'cordage.turn', 'cordage.step'])
      assert.equal(parent(tools[2])?.attributes['cordage.continued'], true)
      assert.equal(tools[2].attributes['cordage.approval.by'], 'alice')
      assert.equal(tools[0].attributes['gen_ai.tool.call.id'], 'call_1')
      // The model proposed the call in the first process; the second hears of it only at the approval.
      assert.equal(tools[2].attributes['gen_ai.tool.call.id'], undefined)
      assert.ok(
        spans.some((s) => s.events.some((e) => e.name === 'cordage.approval.requested' && e.attributes['cordage.action.id'] === 's3.a1')),
        'the wait began in the first process',
      )
      assert.ok(
        spans.some((s) => s.events.some((e) => e.name === 'cordage.approval.decided' && e.attributes['cordage.approval.by'] === 'alice')),
        'and ended in the second',
      )
      for (const s of spans) assert.ok(s.end >= s.start, s.name)
    } finally {
      await receiver.close()
    }
  })
})
