/**
 * The spans of a support-desk run with a failing tool and an approval, caught by the SDK's in-memory
 * exporter: names, GenAI attributes, token usage, parent links, error status, and the two drives of a
 * run that paused. The exporter is given through createOtelTraces, which a preset cannot reach.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SpanStatusCode } from '@opentelemetry/api'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import * as incubating from '@opentelemetry/semantic-conventions/incubating'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { stringify } from 'yaml'
import { deskPreset, refundAnswer, tempDir } from '../../../test/helpers.ts'
import { ErrorType, GenAi } from '../attributes.ts'
import { providerOf, traceIdOf } from '../index.ts'
import { catalogWith, deskFile, open, until, Usage } from './desk.ts'

/** Tools whose previews hold a card number (test/security/tool-texts.test.ts): a dry run to trace. */
const CardLeakDesk = resolve(import.meta.dirname, '../../../test/fixtures/plugins/card-leak-desk')
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name)

describe('otel-traces: spans of a support-desk run with an approval (in-memory exporter)', () => {
  it('a drive per stretch of driving, with turn, step, chat, execute_tool and verify spans in place', async () => {
    const exporter = new InMemorySpanExporter()
    const { app, lines, errors } = await open(deskFile({ processor: 'simple' }), await catalogWith(exporter))
    try {
      const agent = app.agent('support')
      const paused = await agent.run()
      assert.equal(paused.status, 'WAITING_APPROVAL')
      const firstDrive = exporter.getFinishedSpans().length
      const done = await (await agent.approve(paused.runId, 's3.a1', { by: 'alice' })).done
      assert.equal(done.status, 'COMPLETED', done.reason)
      assert.equal(done.answer, refundAnswer)

      const spans = exporter.getFinishedSpans()
      const drives = named(spans, 'invoke_agent support')
      assert.equal(drives.length, 2, 'one drive up to the pause, one after the approval')
      const [before, after] = drives
      assert.ok(spans.slice(0, firstDrive).includes(before), 'the first drive was exported when the run paused')

      // One trace for the run, derived from its id; both drives are roots, the second linked to the first.
      for (const span of spans) assert.equal(span.spanContext().traceId, traceIdOf(paused.runId), span.name)
      assert.equal(parentOf(before), undefined)
      assert.equal(parentOf(after), undefined)
      assert.deepEqual(
        after.links.map((l) => l.context.spanId),
        [before.spanContext().spanId],
      )

      assert.deepEqual(
        [before.attributes[GenAi.operationName], before.attributes[GenAi.agentName], before.attributes[GenAi.providerName]],
        ['invoke_agent', 'support', 'scripted'],
      )
      assert.equal(before.attributes['cordage.run.id'], paused.runId)
      assert.equal(before.attributes[GenAi.conversationId], paused.runId)
      assert.equal(before.attributes['cordage.run.status'], 'WAITING_APPROVAL')
      assert.equal(before.status.code, SpanStatusCode.UNSET, 'waiting is not an error')
      assert.ok(
        named(spans, 'cordage.step')
          .find((s) => s.attributes['cordage.step.id'] === 's3' && !s.attributes['cordage.continued'])
          ?.events.some((e) => e.name === 'cordage.approval.requested' && e.attributes?.['cordage.action.id'] === 's3.a1'),
        'the approval request is an event of its step',
      )
      assert.deepEqual(
        [after.attributes['cordage.run.status'], after.attributes['cordage.continued'], after.attributes['cordage.resumed.by']],
        ['COMPLETED', true, 'alice'],
      )
      assert.deepEqual(
        [after.attributes[GenAi.inputTokens], after.attributes[GenAi.outputTokens]],
        [4 * Usage.inputTokens, 4 * Usage.outputTokens],
      )

      // turn → step → chat / execute_tool / verify, each under the right parent.
      const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
      const parent = (s: ReadableSpan) => byId.get(parentOf(s) ?? '')
      const chats = named(spans, 'chat scripted')
      assert.equal(chats.length, 4, 'one chat span per model call')
      for (const chat of chats) {
        assert.equal(parent(chat)?.name, 'cordage.step')
        assert.equal(parent(chat)?.attributes['cordage.step.id'], chat.attributes['cordage.step.id'])
        assert.equal(parent(parent(chat)!)?.name, 'cordage.turn')
        assert.deepEqual(
          [
            chat.attributes[GenAi.operationName],
            chat.attributes[GenAi.providerName],
            chat.attributes[GenAi.requestModel],
            chat.attributes[GenAi.responseModel],
          ],
          ['chat', 'scripted', 'scripted', 'scripted'],
        )
        assert.deepEqual([chat.attributes[GenAi.inputTokens], chat.attributes[GenAi.outputTokens]], [Usage.inputTokens, Usage.outputTokens])
        assert.equal(chat.kind, 2 /* CLIENT */)
      }
      assert.deepEqual(
        chats.map((c) => c.attributes['cordage.step.id']),
        ['s1', 's2', 's3', 's4'],
      )

      const lookups = named(spans, 'execute_tool lookup_policy')
      assert.equal(lookups.length, 2)
      const [failed, found] = lookups
      assert.equal(failed.status.code, SpanStatusCode.ERROR, 'the lookup of a topic that does not exist failed')
      assert.match(failed.status.message ?? '', /no policy on "warranty-on-the-moon"/)
      assert.equal(failed.attributes[ErrorType], 'tool_failed')
      assert.equal(found.status.code, SpanStatusCode.UNSET)
      assert.equal(found.attributes[ErrorType], undefined)
      for (const tool of lookups) {
        assert.deepEqual(
          [
            tool.attributes[GenAi.operationName],
            tool.attributes[GenAi.toolName],
            tool.attributes[GenAi.toolCallId],
            tool.attributes['cordage.policy.verdict'],
          ],
          ['execute_tool', 'lookup_policy', 'call_1', 'allow'],
        )
        assert.equal(parent(tool)?.name, 'cordage.step')
        assert.equal(parent(tool)!.spanContext().traceId, tool.spanContext().traceId)
      }
      assert.equal(failed.attributes['cordage.step.id'], 's1')
      assert.equal(found.attributes['cordage.step.id'], 's2')

      const [followup] = named(spans, 'execute_tool record_followup')
      assert.ok(followup, 'the approved call ran, in the second drive')
      assert.deepEqual(
        [
          followup.attributes['cordage.action.id'],
          followup.attributes['cordage.approval.by'],
          followup.attributes['cordage.policy.verdict'],
        ],
        ['s3.a1', 'alice', 'ask'],
      )
      const continuedStep = parent(followup)!
      assert.deepEqual([continuedStep.attributes['cordage.step.id'], continuedStep.attributes['cordage.continued']], ['s3', true])
      assert.equal(parent(parent(continuedStep)!), after, 'the continued step is in the second drive')
      const decided = continuedStep.events.find((e) => e.name === 'cordage.approval.decided')
      assert.deepEqual([decided?.attributes?.['cordage.approval.approved'], decided?.attributes?.['cordage.approval.by']], [true, 'alice'])
      assert.equal(typeof decided?.attributes?.['cordage.approval.wait_ms'], 'number')

      const [verify] = named(spans, 'cordage.verify')
      assert.equal(verify.attributes['cordage.verify.ok'], true)
      assert.equal(parent(verify)?.attributes['cordage.step.id'], 's4')

      // Every span ended no earlier than it started, and children within their drive.
      for (const span of spans) assert.ok(hr(span.endTime) >= hr(span.startTime), span.name)
      assert.deepEqual(lines, [], 'nothing to complain about')
    } finally {
      await app.stop()
    }
    assert.deepEqual(errors, [])
  })

  it('a dry run has no execute_tool span: it is a cordage.tool.dry_run event on its step, and a failed one a not_run marked dry run', async () => {
    const exporter = new InMemorySpanExporter()
    const dir = tempDir('cordage-otel-')
    const file = join(dir, 'preset.yml')
    const charge = (mode: string) => ({ tool: 'charge_card', args: { customerId: 'C-1', amount: 5, mode, dry_run: true } })
    writeFileSync(
      file,
      stringify(
        deskPreset(
          {
            script: [charge('ok'), charge('preview-fails'), { final: 'Nothing was charged.' }],
            rules: [{ id: 'charges', verdict: 'allow', match: { tool: 'charge_card' } }],
            verifier: { minCount: 0 },
            plugins: [{ plugin: 'otel-traces', config: { processor: 'simple' } }, { path: CardLeakDesk }, 'guardrails'],
          },
          'outbox.jsonl',
        ),
      ),
    )
    const { app } = await open(file, await catalogWith(exporter))
    try {
      const ended = await app.agent('support').run()
      assert.equal(ended.status, 'COMPLETED', ended.reason)
      const spans = exporter.getFinishedSpans()
      assert.deepEqual(named(spans, 'execute_tool charge_card'), [], 'no execution span: the tool never ran')
      const eventsOf = (step: string) =>
        named(spans, 'cordage.step')
          .find((s) => s.attributes['cordage.step.id'] === step)
          ?.events.filter((e) => e.name.startsWith('cordage.tool.'))
      assert.deepEqual(
        eventsOf('s1')?.map((e) => [
          e.name,
          e.attributes?.['cordage.action.id'],
          e.attributes?.['cordage.tool.dry_run'],
          e.attributes?.['cordage.tool.redacted'],
        ]),
        [['cordage.tool.dry_run', 's1.a1', true, 'card']],
      )
      assert.deepEqual(
        eventsOf('s2')?.map((e) => [
          e.name,
          e.attributes?.[ErrorType],
          e.attributes?.['cordage.tool.dry_run'],
          e.attributes?.['cordage.tool.redacted'],
        ]),
        [['cordage.tool.not_run', 'tool_failed', true, 'card']],
      )
    } finally {
      await app.stop()
    }
  })

  it('a failed run ends its drive with status ERROR and error.type = the failure code', async () => {
    const exporter = new InMemorySpanExporter()
    const { app } = await open(
      deskFile({ processor: 'simple' }, [{ final: 'Refunds take a while, I think.' }]),
      await catalogWith(exporter),
    )
    try {
      const ended = await app.agent('support').run()
      assert.deepEqual([ended.status, ended.failureCode], ['FAILED_VERIFICATION', 'missing_evidence'])
      const spans = exporter.getFinishedSpans()
      const [drive] = named(spans, 'invoke_agent support')
      assert.equal(drive.status.code, SpanStatusCode.ERROR)
      assert.deepEqual(
        [drive.attributes[ErrorType], drive.attributes['cordage.run.status'], drive.attributes['cordage.failure.code']],
        ['missing_evidence', 'FAILED_VERIFICATION', 'missing_evidence'],
      )
      const [verify] = named(spans, 'cordage.verify')
      assert.equal(verify.status.code, SpanStatusCode.ERROR)
      assert.equal(verify.attributes[ErrorType], 'missing_evidence')
    } finally {
      await app.stop()
    }
  })

  it('a model attempt that fails is a chat span with status ERROR; the retry is a chat span of its own', async () => {
    const exporter = new InMemorySpanExporter()
    const file = deskFile({ processor: 'simple' }, [{ final: refundAnswer, failFirst: { code: 'model_transient', times: 1 } }])
    const { app } = await open(file, await catalogWith(exporter))
    try {
      const ended = await app.agent('support').run()
      assert.equal(ended.status, 'FAILED_VERIFICATION', 'no lookup, so no evidence: beside the point here')
      const chats = exporter.getFinishedSpans().filter((s) => s.attributes[GenAi.operationName] === 'chat')
      assert.deepEqual(
        chats.map((c) => [
          c.name,
          c.attributes['cordage.attempt'],
          c.status.code,
          c.attributes[ErrorType] ?? null,
          c.parentSpanContext?.spanId,
        ]),
        [
          ['chat', 1, SpanStatusCode.ERROR, 'model_transient', chats[0].parentSpanContext?.spanId],
          ['chat scripted', 2, SpanStatusCode.UNSET, null, chats[0].parentSpanContext?.spanId],
        ],
      )
      assert.equal(typeof chats[0].attributes['cordage.retry_in_ms'], 'number')
      assert.equal(chats[0].attributes[GenAi.inputTokens], undefined, 'a failed attempt reports no usage')
    } finally {
      await app.stop()
    }
  })

  it('an approval recorded without resuming opens a drive that stopping the app ends and exports', async () => {
    const exporter = new InMemorySpanExporter()
    const { app } = await open(deskFile({}), await catalogWith(exporter))
    const agent = app.agent('support')
    const paused = await agent.run()
    await agent.approve(paused.runId, 's3.a1', { by: 'alice', resume: false })
    const before = named(exporter.getFinishedSpans(), 'invoke_agent support').length
    await app.stop()
    await until(() => named(exporter.getFinishedSpans(), 'invoke_agent support').length > before, 'the open drive to be exported')
    const last = named(exporter.getFinishedSpans(), 'invoke_agent support').at(-1)!
    assert.deepEqual([last.attributes['cordage.drive.end'], last.attributes['cordage.continued']], ['plugin_disposed', true])
    assert.ok(
      named(exporter.getFinishedSpans(), 'cordage.step').some((s) => s.events.some((e) => e.name === 'cordage.approval.decided')),
      'the approval is in it',
    )
  })

  it('copies the GenAI attribute names that @opentelemetry/semantic-conventions/incubating defines', () => {
    const expected: Record<keyof typeof GenAi, string> = {
      operationName: incubating.ATTR_GEN_AI_OPERATION_NAME,
      providerName: incubating.ATTR_GEN_AI_PROVIDER_NAME,
      requestModel: incubating.ATTR_GEN_AI_REQUEST_MODEL,
      responseModel: incubating.ATTR_GEN_AI_RESPONSE_MODEL,
      inputTokens: incubating.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      outputTokens: incubating.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      agentName: incubating.ATTR_GEN_AI_AGENT_NAME,
      agentId: incubating.ATTR_GEN_AI_AGENT_ID,
      conversationId: incubating.ATTR_GEN_AI_CONVERSATION_ID,
      toolName: incubating.ATTR_GEN_AI_TOOL_NAME,
      toolCallId: incubating.ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: incubating.ATTR_GEN_AI_TOOL_TYPE,
    }
    assert.deepEqual({ ...GenAi }, expected)
    assert.equal(ErrorType, incubating.ATTR_ERROR_TYPE)
    assert.deepEqual(
      [
        incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
        incubating.GEN_AI_OPERATION_NAME_VALUE_CHAT,
        incubating.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      ],
      ['invoke_agent', 'chat', 'execute_tool'],
    )
  })

  it('names the provider after the model plugin, or as configured', () => {
    assert.equal(providerOf('model-openai@1.0.0'), 'openai')
    assert.equal(providerOf('model-anthropic@1.2.0'), 'anthropic')
    assert.equal(providerOf('acme-llm@0.1.0'), 'acme-llm')
    assert.equal(providerOf(undefined), undefined)
  })
})

const hr = ([s, ns]: [number, number]) => s * 1e9 + ns
