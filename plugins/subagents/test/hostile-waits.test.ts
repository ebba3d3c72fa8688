/**
 * A tool's `waitsFor` is only a claim (review of issue 17's child wait): a hostile tool must not pause
 * its run on a run it did not start (another agent's, another run's child), nor have cancelling its run
 * cancel that run; a child that has ended is not waited on (that looped without end); a cancel that
 * comes while the run pauses on its child is not lost; and a child whose parent has ended is not approved.
 */
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, afterEach, beforeEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent } from 'cordage'
import { Cordage } from 'cordage/host'
import { hooks } from './fixtures/hostile-waits/index.ts'
import { tempDir } from '../../../test/temp.ts'

const hostile = { path: resolve(import.meta.dirname, 'fixtures/hostile-waits') }
const dirs: string[] = []
const apps: Cordage[] = []
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
beforeEach(() => {
  const h = hooks()
  h.calls = 0
  h.target = undefined
  h.beforeReturn = undefined
})
afterEach(async () => {
  for (const app of apps.splice(0)) await app.stop()
})

function entry(name: string, script: unknown[], extra: { spawns?: string[]; plugins?: unknown[] } = {}, ask = false) {
  return {
    description: `the ${name} agent`,
    parallelTools: true,
    budgets: { maxSteps: 8 },
    ...(extra.spawns ? { spawns: extra.spawns } : {}),
    model: { plugin: 'model-scripted', config: { script } },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      {
        plugin: 'policy-rules',
        config: {
          default: 'deny',
          approvers: ['*'],
          rules: [
            ...(ask ? [{ id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } }] : []),
            { id: 'rest', verdict: 'allow', match: {} },
          ],
        },
      },
      { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
      ...(extra.plugins ?? []),
    ],
  }
}

const followup = [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'refund approved' } }, { final: 'Noted.' }]

/** lead (with the hostile tools and spawn_agent), researcher (its write waits for approval), quick (answers at once). */
async function setUp(leadScript: unknown[]) {
  const dir = tempDir('cordage-hostile-waits-')
  dirs.push(dir)
  const agents = {
    lead: entry('lead', leadScript, {
      spawns: ['researcher', 'quick'],
      plugins: [hostile, { plugin: 'subagents', config: { agents: ['researcher', 'quick'] } }],
    }),
    researcher: entry('researcher', followup, {}, true),
    quick: entry('quick', [{ final: 'Done.' }]),
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify({ cordage: 1, agents }))
  const app = await Cordage.fromPreset(file, {
    onError: (error) => {
      throw error
    },
  })
  apps.push(app)
  // A second preset on the same store, whose lead may start nobody (an older or narrower preset).
  const narrow = join(dir, 'lead-only.yml')
  writeFileSync(narrow, stringify({ cordage: 1, agents: { lead: entry('lead', leadScript) } }))
  return { dir, app, narrow }
}

const claim = [{ tool: 'claim_wait', args: {} }, { final: 'I went on.' }]

async function toolErrors(app: Cordage, agent: string, runId: string) {
  return (await app.agent(agent).store().load(runId)).filter((e): e is RunEvent<'tool/error'> => e.type === 'tool/error')
}

describe('a tool that says it waits on a child run', () => {
  it('is refused a run of another agent that it did not start: the run does not pause, and that run is left alone', async () => {
    const { app } = await setUp(claim)
    const other = await app.agent('researcher').run('note the refund')
    assert.equal(other.status, 'WAITING_APPROVAL', other.reason)
    hooks().target = { agent: 'researcher', runId: other.runId }

    const run = await app.agent('lead').run('go')
    assert.equal(run.status, 'COMPLETED', run.reason)
    assert.equal(run.waiting, undefined)
    const [error] = await toolErrors(app, 'lead', run.runId)
    assert.equal(error?.data.code, 'tool_failed')
    assert.match(error.data.message, new RegExp(`run ${other.runId} of agent "researcher" is not a child started by this call`))
    assert.equal(hooks().calls, 1)
    assert.equal((await app.agent('researcher').load(other.runId)).status, 'WAITING_APPROVAL', 'untouched')
  })

  it("is refused another run's child, and the agents service does not cancel a run that is not the asking run's child", async () => {
    const { app } = await setUp([{ tool: 'spawn_agent', args: { agent: 'researcher', task: 'note it' } }, { final: 'ok' }])
    const first = await app.agent('lead').run('first')
    assert.equal(first.status, 'WAITING_APPROVAL', first.reason)
    const childId = first.waiting!.child!.runId

    // The service itself: an unrelated run of researcher is not lead's child to read or cancel.
    const other = await app.agent('researcher').run('note the refund')
    const agents = (app.agent('lead').ctx as unknown as { agents: import('cordage').AgentDirectory }).agents
    assert.equal(await agents.child('researcher', other.runId), undefined)
    await assert.rejects(agents.cancelChild('researcher', other.runId, { by: 'x' }), { code: 'invalid_input' })
    await assert.rejects(agents.cancelChild('researcher', childId, { by: 'parent:someone-else' }), { code: 'invalid_input' })
    await assert.rejects(agents.child('nobody', other.runId), { code: 'invalid_input' })
    assert.equal((await app.agent('researcher').load(other.runId)).status, 'WAITING_APPROVAL')
    assert.equal((await app.agent('researcher').load(childId)).status, 'WAITING_APPROVAL')
  })

  it('is refused a child that has already ended: the call fails once, instead of pausing and waking without end', async () => {
    const { app } = await setUp([{ tool: 'spawn_then_wait', args: { agent: 'quick' } }, { final: 'I went on.' }])
    const run = await app.agent('lead').run('go')
    await app.agent('lead').idle()
    const done = await app.agent('lead').load(run.runId)
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.equal(hooks().calls, 1, 'called once, not resumed again and again')
    const [error] = await toolErrors(app, 'lead', run.runId)
    assert.equal(error?.data.code, 'tool_failed')
    assert.match(error.data.message, /has already ended \(COMPLETED\)/)
    const events = await app.agent('lead').store().load(run.runId)
    assert.ok(!events.some((e) => e.type === 'run/paused'), 'never paused')
  })

  it('ends CANCELLED, and cancels its child, when the cancel comes while it pauses on that child', async () => {
    const { app } = await setUp([{ tool: 'spawn_then_wait', args: { agent: 'researcher' } }, { final: 'I went on.' }])
    let cancelled: Promise<unknown> | undefined
    // The spawn call has returned (its abort no longer reaches the child); the cancel comes now.
    hooks().beforeReturn = (runId) => {
      cancelled = app.agent('lead').cancel(runId, { by: 'bob', reason: 'not needed' })
    }
    const run = await app.agent('lead').run('go')
    await cancelled
    assert.equal(run.status, 'CANCELLED', run.reason)
    const childId = `${run.runId}.s1.a1`
    const child = await app.agent('researcher').load(childId)
    assert.equal(child.status, 'CANCELLED')
    assert.equal(child.cancel?.by, `parent:${run.runId}`)
    await assert.rejects(app.agent('researcher').approve(childId, 's1.a1'), { code: 'run_not_waiting' })
  })

  it("is not approved once its parent has ended, when the parent's cancel could not reach it", async () => {
    const { app, narrow } = await setUp([{ tool: 'spawn_agent', args: { agent: 'researcher', task: 'note it' } }, { final: 'ok' }])
    const parent = await app.agent('lead').run('go')
    assert.equal(parent.status, 'WAITING_APPROVAL', parent.reason)
    const childId = parent.waiting!.child!.runId
    // Cancelled from a process whose lead may start nobody: it may not cancel the child, and says so.
    const other = await Cordage.fromPreset(narrow, {
      onError: (error) => {
        throw error
      },
    })
    apps.push(other)
    await assert.rejects(other.agent('lead').cancel(parent.runId, { by: 'bob' }), (error: { code?: string }) =>
      ['invalid_input', 'agent_not_found'].includes(error.code ?? ''),
    )
    assert.equal((await app.agent('lead').load(parent.runId)).status, 'CANCELLED')
    assert.equal((await app.agent('researcher').load(childId)).status, 'WAITING_APPROVAL', 'the child could not be reached')

    await assert.rejects(app.agent('researcher').approve(childId, 's1.a1', { by: 'alice' }), {
      code: 'run_not_waiting',
      message: new RegExp(`child of run ${parent.runId} \\(agent lead\\), which has ended CANCELLED`),
    })
    assert.equal((await app.agent('researcher').load(childId)).status, 'WAITING_APPROVAL', 'nothing recorded')
  })

  it('is cancelled when a neighbour in its wave ends the run, so its child does not wait on after its parent', async () => {
    const { app } = await setUp([
      {
        calls: [
          { tool: 'spawn_then_wait', args: { agent: 'researcher' } },
          { tool: 'explode', args: {} },
        ],
      },
      { final: 'ok' },
    ])
    const run = await app.agent('lead').run('go')
    assert.equal(run.status, 'FAILED', run.reason)
    assert.equal(run.failureCode, 'internal_error')
    const child = await app.agent('researcher').load(`${run.runId}.s1.a1`)
    assert.equal(child.status, 'CANCELLED')
    assert.equal(child.cancel?.by, `parent:${run.runId}`)
  })
})
