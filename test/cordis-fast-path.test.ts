/**
 * core/kernel/cordis.ts reads services and dispatches events around cordis's traced accessors (for speed). These
 * tests pin it to the public API on the installed cordis: same service objects, same listeners reached,
 * and one agent's events never reach another agent's plugins.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Context, symbols } from 'cordis'
import { createAgentContext, definePlugin, readService, type RunEvent } from 'cordage'
import { agentFilter, createDispatch } from '../core/kernel/cordis.ts'

const event = (runId: string): RunEvent<'step/end'> => ({
  type: 'step/end',
  seq: 1,
  time: 0,
  runId,
  schema: 1,
  producer: 'kernel@test',
  data: { actions: 0 },
})

describe('cordis fast path', () => {
  it('reads the same service object ctx.get gives, and names the plugin that provided it', async () => {
    const root = new Context()
    const agent = createAgentContext(root, 'a')
    const policy = { version: 'v', decide: () => ({ verdict: 'allow' as const, ruleId: 'r', reason: '' }) }
    agent.plugin(
      definePlugin({ name: 'fake-policy', version: '2.3.4', provides: { policy: '1.0.0' } }, (ctx) => {
        ctx.set('policy', policy)
      }),
    )
    await new Promise((r) => setImmediate(r))
    const entry = readService(agent, 'policy')
    assert.equal(entry?.value, policy)
    assert.equal(entry?.value, (agent.get('policy') as any)?.[symbols.original] ?? agent.get('policy'))
    assert.equal(entry?.provider, 'fake-policy@2.3.4')
    assert.equal(readService(root, 'policy'), undefined, 'an agent service is not visible at the root')
    assert.equal(readService(createAgentContext(root, 'b'), 'policy'), undefined, 'nor in another agent')
  })

  it("delivers an agent's events to its own plugins and to root listeners, never to another agent's", async () => {
    const root = new Context()
    const a = createAgentContext(root, 'a')
    const b = createAgentContext(root, 'b')
    const got: string[] = []
    a.plugin(
      definePlugin({ name: 'listen-a', version: '1.0.0' }, (ctx) => {
        ctx.on('step/end', (e) => got.push(`a:${e.runId}`))
      }),
    )
    b.plugin(
      definePlugin({ name: 'listen-b', version: '1.0.0' }, (ctx) => {
        ctx.on('step/end', (e) => got.push(`b:${e.runId}`))
      }),
    )
    root.on('step/end', (e) => got.push(`root:${e.runId}`))
    await new Promise((r) => setImmediate(r))
    createDispatch(a, 'a')(event('run_a'))
    createDispatch(b, 'b')(event('run_b'))
    assert.deepEqual(got.sort(), ['a:run_a', 'b:run_b', 'root:run_a', 'root:run_b'])
  })

  it('delivers plugin events of an agent to that agent and the root only', async () => {
    const root = new Context()
    const a = createAgentContext(root, 'a')
    const b = createAgentContext(root, 'b')
    const got: string[] = []
    a.on('plugin/loaded', (e) => got.push(`a:${e.agent}`))
    b.on('plugin/loaded', (e) => got.push(`b:${e.agent}`))
    root.on('plugin/loaded', (e) => got.push(`root:${e.agent}`))
    a.emit(agentFilter('a'), 'plugin/loaded', { agent: 'a', name: 'p', version: '1.0.0' })
    assert.deepEqual(got.sort(), ['a:a', 'root:a'])
  })

  it('reaches the same listeners ctx.emit reaches', () => {
    const root = new Context()
    const seen: string[] = []
    root.on('step/end', () => seen.push('one'))
    root.on('step/end', () => seen.push('two'))
    root.emit('step/end', event('x'))
    const viaEmit = [...seen]
    seen.length = 0
    createDispatch(root, 'a')(event('x'))
    assert.deepEqual(seen, viaEmit)
  })

  it('keeps dispatching when a listener throws, and reports the error through internal/error', () => {
    const root = new Context()
    const errors: unknown[] = []
    root.on('internal/error', (e: unknown) => errors.push(e))
    const seen: string[] = []
    root.on('step/end', () => {
      throw new Error('listener bug')
    })
    root.on('step/end', () => seen.push('after'))
    createDispatch(root, 'a')(event('x'))
    assert.deepEqual(seen, ['after'])
    assert.equal((errors[0] as Error).message, 'listener bug')
  })
})
