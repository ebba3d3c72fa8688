import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { definePlugin, defineTool, readService, type ToolsService } from 'cordage'
import { plug } from '../../../test/plug.ts'
import plugin from '../index.ts'

const tool = (name: string) =>
  defineTool({ name, description: name, input: z.object({}), sideEffect: 'none', run: () => ({ output: null }) })
const owner = (names: string[]) =>
  definePlugin({ name: 'owner', version: '2.0.0', requires: { tools: '^1.0.0' } }, (ctx) => {
    for (const n of names) ctx.tools.register(tool(n))
  })

describe('tools-registry', () => {
  it('registers tools with their owning plugin, and drops them when that plugin goes', async () => {
    const { ctx } = await plug(plugin)
    const fork = ctx.plugin(owner(['a', 'b']))
    await new Promise((r) => setImmediate(r))
    const tools = readService<ToolsService>(ctx, 'tools')!.value
    assert.deepEqual(
      tools.list().map((t) => [t.name, t.owner]),
      [
        ['a', 'owner@2.0.0'],
        ['b', 'owner@2.0.0'],
      ],
    )
    fork.dispose()
    assert.deepEqual(tools.list(), [])
  })

  it('refuses a second tool of the same name', async () => {
    const { ctx } = await plug(plugin)
    ctx.plugin(owner(['a']))
    const second = ctx.plugin(
      definePlugin({ name: 'other', version: '1.0.0', requires: { tools: '^1.0.0' } }, (c) => {
        c.tools.register(tool('a'))
      }),
    )
    await new Promise((r) => setImmediate(r))
    assert.match(String(second.error?.message), /tool "a" is already registered by owner@2\.0\.0/)
  })

  it('narrows the visible set with include and exclude patterns', async () => {
    const { ctx } = await plug(plugin, { include: ['crm_*', 'lookup'], exclude: ['crm_delete'] })
    ctx.plugin(owner(['crm_read', 'crm_delete', 'lookup', 'mail']))
    await new Promise((r) => setImmediate(r))
    const tools = readService<ToolsService>(ctx, 'tools')!.value
    assert.deepEqual(
      (await tools.visible({ state: {} as never })).map((t) => t.name),
      ['crm_read', 'lookup'],
    )
    assert.equal(tools.get('mail')?.name, 'mail', 'invisible tools stay in the registry')
  })
})
