/**
 * core/kernel/visible-tools.ts: what a visible list comes to (tools by name, views, names) is built once
 * per list and shared by every run shown the same list, so a run's start does not cost more the more
 * tools there are; a new list, or the same list changed in place, is built again.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { z } from 'zod'
import { defineTool } from '../../core/kernel/tool.ts'
import { VisibleTools } from '../../core/kernel/visible-tools.ts'
import type { Tool } from '../../core/contracts/services/tools.ts'
import type { ShownTools } from '../../core/contracts/phases.ts'
import { refundAnswer, supportDesk, type Harness } from '../helpers.ts'

const tool = (name: string): Tool =>
  defineTool({
    name,
    description: `the ${name} tool`,
    input: z.object({ q: z.string() }),
    sideEffect: 'none',
    run: () => ({ output: null }),
  })

/** No tools/before-show handler: the views are shown as built. */
const asBuilt = async (was: ShownTools) => was

async function shown(list: Tool[], step = 's1'): Promise<VisibleTools> {
  const visible = new VisibleTools()
  await visible.refresh(step, 'test', () => list, asBuilt)
  return visible
}

describe('VisibleTools', () => {
  it('builds a list once: another run shown the same list gets the same views, names and tools by name', async () => {
    const list = [tool('a'), tool('b')]
    const first = await shown(list)
    const second = await shown(list)
    assert.deepEqual(first.names, ['a', 'b'])
    assert.deepEqual(first.views, [
      { name: 'a', description: 'the a tool', inputSchema: list[0]!.inputSchema },
      { name: 'b', description: 'the b tool', inputSchema: list[1]!.inputSchema },
    ])
    assert.equal(second.views, first.views)
    assert.equal(second.names, first.names)
    assert.equal(second.byName, first.byName)
    assert.equal(first.byName.get('b'), list[1])
  })

  it('builds a new list again, and the same list again when it was changed in place', async () => {
    const list = [tool('a')]
    const first = await shown(list)
    const other = await shown([list[0]!, tool('c')])
    assert.notEqual(other.views, first.views)
    assert.deepEqual(other.names, ['a', 'c'])
    list.push(tool('d'))
    const changed = await shown(list)
    assert.notEqual(changed.names, first.names)
    assert.deepEqual(changed.names, ['a', 'd'])
    assert.equal(changed.byName.get('d')?.name, 'd')
  })

  it('hands out frozen views and names, since runs share them', async () => {
    const visible = await shown([tool('a')])
    assert.ok(Object.isFrozen(visible.views) && Object.isFrozen(visible.views[0]) && Object.isFrozen(visible.names))
    assert.throws(() => visible.names.push('x'), TypeError)
  })

  it('asks once per step, and keeps what it has when the service answers the same list at the next step', async () => {
    const list = [tool('a')]
    const visible = new VisibleTools()
    let asked = 0
    const ask = () => (asked++, list)
    await visible.refresh('s1', 'test', ask, asBuilt)
    const views = visible.views
    await visible.refresh('s1', 'test', ask, asBuilt)
    await visible.refresh('s2', 'test', ask, asBuilt)
    assert.equal(asked, 2)
    assert.equal(visible.views, views)
  })

  it('refuses an answer that is not a list, given at once or later', async () => {
    assert.throws(() => new VisibleTools().refresh('s1', 'odd', () => 'tools', asBuilt), { code: 'verdict_invalid' })
    await assert.rejects(new VisibleTools().refresh('s1', 'odd', async () => 'tools', asBuilt) as Promise<void>, {
      code: 'verdict_invalid',
    })
  })

  it('waits only when the service or a handler answers later', async () => {
    const list = [tool('a')]
    const atOnce = (was: ShownTools) => was
    const visible = new VisibleTools()
    assert.equal(
      visible.refresh('s1', 'test', () => list, atOnce),
      undefined,
    )
    assert.equal(visible.step, 's1')
    const later = visible.refresh('s2', 'test', async () => list, atOnce)
    assert.ok(later instanceof Promise)
    await later
    const shownLater = visible.refresh('s3', 'test', () => list, asBuilt)
    assert.ok(shownLater instanceof Promise)
    assert.equal(visible.step, 's2')
    await shownLater
    assert.equal(visible.step, 's3')
  })
})

describe('visible tools across runs (tools-registry)', () => {
  let harness: Harness | undefined
  after(async () => await harness?.stop())

  it('records the same names for two runs on an unchanged registry, without building them twice', async () => {
    harness = await supportDesk({ script: [{ final: refundAnswer }, { final: refundAnswer }] })
    const first = await harness.agent.run('one')
    const second = await harness.agent.run('two')
    const toolsOf = async (runId: string) =>
      (await harness!.events(runId)).filter((e) => e.type === 'step/context').map((e) => (e.data as { tools: string[] }).tools)
    const [a, b] = [await toolsOf(first.runId), await toolsOf(second.runId)]
    assert.equal(a.length, 1)
    assert.ok(a[0]!.includes('lookup_policy'))
    assert.deepEqual(b, a)
    // One list for both runs: the registry handed out the same visible list, so it was not built again.
    assert.equal(b[0], a[0])
  })
})
