import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { Context } from 'cordis'
import { createAgentContext, readService, type ModelRequest } from 'cordage'
import { plug } from '../../../test/plug.ts'
import { tempDir } from '../../../test/temp.ts'
import plugin, { type ScriptedModel } from '../index.ts'

const request = (stepIndex: number, signal = new AbortController().signal): ModelRequest => ({
  runId: 'r',
  stepId: `s${stepIndex}`,
  stepIndex,
  messages: [{ role: 'user', text: 'hi', source: 2 }],
  tools: [],
  signal,
})

async function model(config: Record<string, unknown>, baseDir?: string) {
  const agent = baseDir ? createAgentContext(new Context(), 'test').extend({ baseDir }) : undefined
  const { ctx, fork } = await plug(plugin, config, agent)
  if (fork.error) throw fork.error
  return readService<ScriptedModel>(ctx, 'model')!.value
}

describe('model-scripted', () => {
  it('answers by step index, expanding repeat, so a resumed run continues where it was', async () => {
    const m = await model({ script: [{ tool: 'a', args: { x: 1 }, repeat: 2 }, { final: 'done' }] })
    assert.deepEqual((await m.respond(request(3))).decision, { kind: 'final', text: 'done' })
    assert.deepEqual((await m.respond(request(2))).decision, {
      kind: 'tool_calls',
      calls: [{ name: 'a', args: { x: 1 }, callId: 'call_1' }],
    })
  })

  it('measureInput reports the tokens a request holds: more tools offered, more input tokens; off, the configured figure', async () => {
    const tool = (i: number) => ({
      name: `tool_${i}`,
      description: `does thing number ${i} for the customer`,
      inputSchema: { type: 'object' },
    })
    const withTools = (n: number) => ({ ...request(1), tools: Array.from({ length: n }, (_, i) => tool(i)) })
    const measured = await model({ script: [{ final: 'x' }], measureInput: true, usage: { inputTokens: 7 } })
    const few = (await measured.respond(withTools(2))).usage.inputTokens
    const many = (await measured.respond(withTools(40))).usage.inputTokens
    assert.ok(few > 0)
    assert.ok(many > few * 10, `${many} tokens with 40 tools, ${few} with 2`)
    const fixed = await model({ script: [{ final: 'x' }], usage: { inputTokens: 7 } })
    assert.equal((await fixed.respond(withTools(40))).usage.inputTokens, 7)
  })

  it('records every request it received, without the signal', async () => {
    const m = await model({ script: [{ final: 'x' }] })
    await m.respond(request(1))
    assert.equal(m.requests.length, 1)
    assert.deepEqual(m.requests[0].messages, [{ role: 'user', text: 'hi', source: 2 }])
    assert.equal('signal' in m.requests[0], false)
  })

  it('fails the first attempts of a step as configured, then answers', async () => {
    const m = await model({ script: [{ final: 'ok', failFirst: { code: 'model_transient', times: 2 } }] })
    await assert.rejects(m.respond(request(1)), { code: 'model_transient' })
    await assert.rejects(m.respond(request(1)), { code: 'model_transient' })
    assert.equal((await m.respond(request(1))).decision.kind, 'final')
  })

  it('says model_permanent when the script runs out, or repeats the last answer if told to', async () => {
    const strict = await model({ script: [{ final: 'x' }] })
    await assert.rejects(strict.respond(request(2)), { code: 'model_permanent', message: /has 1 answers and step 2 asked for another/ })
    const lenient = await model({ script: [{ final: 'x' }], onExhausted: 'repeat-last' })
    assert.equal((await lenient.respond(request(7))).decision.kind, 'final')
  })

  it('stops waiting when the request is aborted', async () => {
    const m = await model({ script: [{ final: 'late', delayMs: 10_000 }] })
    const controller = new AbortController()
    const pending = m.respond(request(1, controller.signal))
    controller.abort(new Error('stop'))
    await assert.rejects(pending, /stop/)
  })

  it('reads the script from a YAML file relative to the preset folder', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'script.yml'), '- ask: Which order?\n- final: thanks\n')
    const m = await model({ file: 'script.yml' }, dir)
    assert.deepEqual((await m.respond(request(1))).decision, { kind: 'ask_user', question: 'Which order?' })
  })

  it('refuses an entry that says two things at once', async () => {
    const { fork } = await plug(plugin, { script: [{ tool: 'a', final: 'b' }] })
    assert.match(String(fork.error?.message), /script\[0\] must have exactly one of tool, calls, final, ask \(found tool, final\)/)
  })

  it("answers summary requests from summaries, without taking a step's answer", async () => {
    const m = await model({ script: [{ final: 'step one' }], summaries: ['first summary', 'later summary'] })
    const summary = (runId: string) => m.respond({ ...request(1), runId, purpose: 'summary' })
    assert.deepEqual((await summary('r')).decision, { kind: 'final', text: 'first summary' })
    assert.deepEqual((await summary('r')).decision, { kind: 'final', text: 'later summary' })
    assert.deepEqual((await summary('r')).decision, { kind: 'final', text: 'later summary' })
    assert.deepEqual((await summary('other')).decision, { kind: 'final', text: 'first summary' })
    assert.deepEqual((await m.respond(request(1))).decision, { kind: 'final', text: 'step one' })
    const none = await model({ script: [{ final: 'x' }] })
    await assert.rejects(none.respond({ ...request(1), purpose: 'summary' }), { code: 'model_permanent', message: /no summaries/ })
  })
})
