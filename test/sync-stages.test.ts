/**
 * The loop's stages run at once when nothing they ask answers later (core/kit/later.ts), and a defined
 * tool's body is called directly (core/kernel/tool-call.ts): what the loop did when every stage was
 * awaited, kept. A tool's odd answer (a thenable that throws or resolves with a promise, an invoke
 * that promises nothing) is the call failing or answering, never the run crashing; a cancel known
 * before a wave starts stops all of it.
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { startApp, testPreset, type TestApp } from '../core/testing/index.ts'
import { removeDirs, scratchDir } from './sqlite-preset.ts'

after(removeDirs)

const g = globalThis as Record<string, unknown>
const log: string[] = (g.__stagesLog ??= []) as string[]

function probePlugin(): string {
  const dir = scratchDir('cordage-stages-')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(
    join(dir, 'manifest.ts'),
    `
import { Schema } from 'cordis'
export default { name: 'stages-probe', version: '1.0.0', requires: { tools: '^1.0.0' }, config: Schema.object({}) }
`,
  )
  writeFileSync(
    join(dir, 'index.ts'),
    `
import { z } from 'zod'
import { definePlugin, defineTool } from 'cordage'
import manifest from './manifest.ts'
const log = (globalThis.__stagesLog ??= [])
const none = { input: z.object({}), sideEffect: 'none', timeoutMs: 60000 }
export default definePlugin(manifest, (ctx) => {
  ctx.tools.register(defineTool({ ...none, name: 'bad_thenable', description: 'A body whose thenable throws in then.',
    run() { log.push('bad_thenable'); return { then() { throw new Error('thenable broke') } } } }))
  ctx.tools.register(defineTool({ ...none, name: 'nested_thenable', description: 'A body whose thenable resolves with a promise.',
    run() { log.push('nested_thenable'); return { then(ok) { ok(Promise.resolve({ output: 'nested answer' })) } } } }))
  ctx.tools.register({ name: 'raw_broken', description: 'A hand-written tool whose invoke gives no promise.',
    input: z.object({}), inputSchema: { type: 'object' }, sideEffect: 'none', idempotent: true, timeoutMs: 60000,
    needsApproval: false, retries: 0, tags: [], invoke() { log.push('raw_broken'); return undefined } })
  ctx.tools.register(defineTool({ ...none, name: 'silent', description: 'A body that returns nothing.',
    run() { log.push('silent') } }))
  ctx.tools.register(defineTool({ ...none, name: 'a', description: 'A read.', footprint: () => ({ reads: ['a'] }),
    run() { log.push('a'); globalThis.__stagesHookA?.(); return { output: 'a done' } } }))
  ctx.tools.register(defineTool({ name: 'w', description: 'A write.', input: z.object({}), sideEffect: 'external', timeoutMs: 60000,
    run() { log.push('w' + (globalThis.__stagesCancelled ? ' after the cancel' : '')); return { output: 'written', receipt: 'r1' } } }))
})
`,
  )
  return dir
}

let app: TestApp | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
  log.length = 0
  delete g.__stagesHookA
  delete g.__stagesCancelled
})

async function start(script: unknown[], extra: Record<string, unknown> = {}) {
  const preset = testPreset({
    script: script as never,
    rules: [{ id: 'all', verdict: 'allow', match: {} }],
    plugins: [{ path: probePlugin() }, { plugin: 'verifier-basic', config: { minCount: 0 } }],
  })
  Object.assign((preset.agents as Record<string, Record<string, unknown>>).agent, extra)
  app = await startApp(preset)
  return app
}

const errorsOf = (events: RunEvent[]) => events.filter((e) => e.type === 'tool/error').map((e) => (e.data as { message: string }).message)

describe('a defined tool whose body answers with a thenable that is not a promise', () => {
  it('a then() that throws is the tool failing (recorded, the run goes on), not the run crashing', async () => {
    const t = await start([{ tool: 'bad_thenable', args: {} }, { final: 'done' }])
    const run = await t.run()
    assert.deepEqual(log, ['bad_thenable'])
    assert.equal(run.state.status, 'COMPLETED', `run ended ${run.state.status}: ${run.state.failureCode}`)
    assert.match(errorsOf(run.events).join(), /thenable broke/)
  })

  it('a thenable that resolves with a promise gives the promised result, as Promise.resolve adopts it', async () => {
    const t = await start([{ tool: 'nested_thenable', args: {} }, { final: 'done' }])
    const run = await t.run()
    const end = run.events.find((e) => e.type === 'tool/end')
    assert.ok(end, 'tool/end recorded')
    assert.equal((end.data as { observation: string }).observation, 'nested answer')
  })
})

describe('a defined tool whose body returns no result', () => {
  it('is recorded as run, without output, and the run fails at the next boundary with tool_failed, saying what it returned', async () => {
    const t = await start([{ tool: 'silent', args: {} }, { final: 'done' }])
    const run = await t.run()
    assert.deepEqual(log, ['silent'])
    assert.equal(run.state.status, 'FAILED')
    assert.equal(run.state.failureCode, 'tool_failed')
    assert.match(run.state.reason ?? '', /silent returned nothing, not a result: a tool returns \{ output \}/)
    const end = run.events.find((e) => e.type === 'tool/end')
    assert.equal((end?.data as { output: unknown } | undefined)?.output, null, 'tool/end recorded, without output')
    assert.equal(run.events.filter((e) => e.type === 'step/model-request').length, 1, 'no second model call')
  })
})

describe('a hand-written tool whose invoke breaks the contract (gives no promise)', () => {
  it('is recorded as a failed call, as before, not a crash of the run', async () => {
    const t = await start([{ tool: 'raw_broken', args: {} }, { final: 'done' }])
    const run = await t.run()
    assert.deepEqual(log, ['raw_broken'])
    assert.equal(run.state.status, 'COMPLETED', `run ended ${run.state.status}: ${run.state.failureCode}`)
    assert.equal(errorsOf(run.events).length, 1)
  })
})

describe('cancellation reaching a step of calls that answer at once', () => {
  it('a write proposed after a call that led to a cancel is not started once the cancel is known', async () => {
    const t = await start(
      [
        {
          calls: [
            { tool: 'a', args: {} },
            { tool: 'w', args: {} },
          ],
        },
        { final: 'done' },
      ],
      { parallelTools: false },
    )
    const agent = t.agent()
    const handle = agent.start()
    g.__stagesHookA = () =>
      void Promise.resolve().then(() => {
        void agent.cancel(handle.runId, { by: 'test' })
        g.__stagesCancelled = true
      })
    const state = await handle.done
    assert.equal(state.status, 'CANCELLED')
    assert.deepEqual(log, ['a'], 'the write never ran')
  })
})
