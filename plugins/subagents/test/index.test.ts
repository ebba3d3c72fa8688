import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import { readService, type AgentDirectory, type RunEvent, type RunState } from 'cordage'
import { Cordage } from 'cordage/host'
import { tempDir } from '../../../test/temp.ts'

const dirs: string[] = []
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const answer = 'Damaged items can be refunded in full within 30 days of delivery [source: policy/refunds#2].'

interface AgentSketch {
  script: unknown[]
  budgets?: Record<string, number>
  subagents?: Record<string, unknown>
  rules?: unknown[]
  verifier?: Record<string, unknown>
  desk?: Record<string, unknown>
}

/** A preset of several agents on one SQLite file (a handoff needs a shared store), each allowed to reach what its subagents config offers. */
function load(agents: Record<string, AgentSketch>): Promise<Cordage> {
  return loadRaw(agents, true)
}

/** The same, with the preset's spawns and handoffs only when `reach` says so. */
async function loadRaw(agents: Record<string, AgentSketch>, reach = false): Promise<Cordage> {
  const dir = tempDir('cordage-subagents-')
  dirs.push(dir)
  const preset = {
    cordage: 1,
    agents: Object.fromEntries(
      Object.entries(agents).map(([name, a]) => [
        name,
        {
          description: `the ${name} agent`,
          budgets: { maxSteps: 8, ...a.budgets },
          // Whom the preset lets the agent reach: what its subagents tools offer.
          ...(a.subagents && reach
            ? {
                spawns: (a.subagents as { agents?: string[] }).agents ?? [],
                handoffs: (a.subagents as { handoffs?: string[] }).handoffs ?? [],
              }
            : {}),
          model: { plugin: 'model-scripted', config: { script: a.script } },
          plugins: [
            { plugin: 'store-sqlite', config: { path: 'runs.db' } },
            'tools-registry',
            'context-basic',
            { plugin: 'verifier-basic', config: { minCount: 0, ...a.verifier } },
            {
              plugin: 'policy-rules',
              config: { default: 'deny', approvers: ['*'], rules: a.rules ?? [{ id: 'all', verdict: 'allow', match: {} }] },
            },
            { plugin: 'support-desk', config: { outbox: 'outbox.jsonl', slowLookupDelayMs: 5000, slowLookupTimeoutMs: 10_000, ...a.desk } },
            ...(a.subagents ? [{ plugin: 'subagents', config: a.subagents }] : []),
          ],
        },
      ]),
    ),
  }
  const file = join(dir, 'preset.yml')
  writeFileSync(file, stringify(preset))
  return Cordage.fromPreset(file, {
    onError: (error) => {
      throw error
    },
  })
}

let app: Cordage | undefined
afterEach(async () => {
  await app?.stop()
  app = undefined
})

const researcher: AgentSketch = { script: [{ tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: answer }] }
const lead = (extra: Partial<AgentSketch> = {}): AgentSketch => ({
  script: [
    { tool: 'spawn_agent', args: { agent: 'researcher', task: 'What is the refund window for damaged items?' } },
    { final: 'The researcher found it: 30 days.' },
  ],
  subagents: { agents: ['researcher'] },
  ...extra,
})

const eventsOf = (name: string, runId: string) => app!.agent(name).store().load(runId)

describe('subagents', () => {
  it('runs another agent as a child run: linked to its parent, its answer an observation, its steps and tokens counted', async () => {
    app = await load({ lead: lead(), researcher })
    const state = await app.agent('lead').run('refund window?')
    assert.equal(state.status, 'COMPLETED', state.reason)

    const childId = `${state.runId}.s1.a1`
    const child = await app.agent('researcher').load(childId)
    assert.equal(child.status, 'COMPLETED')
    assert.deepEqual(child.parent, { runId: state.runId, actionId: 's1.a1', agent: 'lead', depth: 1 })

    const end = (await eventsOf('lead', state.runId)).find((e): e is RunEvent<'tool/end'> => e.type === 'tool/end')!
    assert.equal(end.data.observation, `researcher (run ${childId}) answered: ${answer}`)
    assert.equal(end.data.usage?.steps, 2)
    assert.equal(state.nestedSteps, 2)
    // The scripted model reports 100 input and 20 output tokens a step (see model-scripted): two steps of the lead and two of the child.
    assert.equal(state.usage.inputTokens + state.usage.outputTokens, 2 * (child.usage.inputTokens + child.usage.outputTokens))
  })

  it("gives the child no more than the parent has left, and stops the parent once the child's steps used up its budget", async () => {
    const slowResearcher: AgentSketch = {
      script: [
        { tool: 'lookup_policy', args: { topic: 'refunds' } },
        { tool: 'lookup_policy', args: { topic: 'shipping' } },
        { final: answer },
      ],
    }
    app = await load({ lead: lead({ budgets: { maxSteps: 3 } }), researcher: slowResearcher })
    const state = await app.agent('lead').run('refund window?')
    const child = await app.agent('researcher').load(`${state.runId}.s1.a1`)
    assert.equal(child.budgets.maxSteps, 2, 'three steps, one used by the lead')
    assert.equal(child.status, 'STOPPED')
    assert.equal(child.failureCode, 'max_steps')
    assert.equal(state.status, 'STOPPED')
    assert.equal(state.failureCode, 'max_steps')
    assert.match(state.reason!, /3 of 3 steps used \(2 by subagents\)/)
  })

  it("applies the child's own policy: its write waits for approval, the parent waits for the child, and approving the child finishes both", async () => {
    const careful: AgentSketch = {
      script: [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'refund approved' } }, { final: 'Noted on T-1 [source: T-1].' }],
      rules: [{ id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } }],
    }
    app = await load({ lead: lead(), researcher: careful })
    const state = await app.agent('lead').run('note it')
    const childId = `${state.runId}.s1.a1`
    // The parent does not go on without its child's answer (plugins/subagents/test/child-wait.test.ts has the rest).
    assert.equal(state.status, 'WAITING_APPROVAL', state.reason)
    assert.equal(state.waiting?.child?.runId, childId)
    assert.ok(!state.transcript.some((t) => t.kind === 'observation'), 'no observation of a child that has not answered')
    const childEvents = (await eventsOf('researcher', childId)).map((e) => e.type)
    assert.ok(childEvents.includes('tool/approval-requested'))
    assert.ok(!childEvents.includes('tool/start'), 'the write did not run without approval')

    const done = await (await app.agent('researcher').approve(childId, 's1.a1', { by: 'alice' })).done
    assert.equal(done.status, 'COMPLETED', done.reason)
    await app.agent('lead').idle()
    assert.equal((await app.agent('lead').load(state.runId)).status, 'COMPLETED')
  })

  it('cancels the child when the parent is cancelled', async () => {
    const slow: AgentSketch = { script: [{ tool: 'slow_lookup', args: { query: 'refunds' } }, { final: answer }] }
    app = await load({ lead: lead(), researcher: slow })
    app.root.on('tool/start', (e: RunEvent) => {
      if (e.type === 'tool/start' && e.data.tool === 'slow_lookup')
        setTimeout(() => app!.agent('lead').cancel(e.runId.slice(0, e.runId.indexOf('.')), { by: 'test' }), 20)
    })
    const state = await app.agent('lead').run('refund window?')
    assert.equal(state.status, 'CANCELLED')
    const child = await app.agent('researcher').load(`${state.runId}.s1.a1`)
    assert.equal(child.status, 'CANCELLED')
    assert.match(child.reason ?? '', /the parent run was cancelled/)
  })

  it('starts a child only for a call running in the parent, and refuses to nest deeper than maxDepth', async () => {
    app = await load({ lead: lead(), researcher: { ...researcher, subagents: { agents: ['lead'], maxDepth: 1 } } })
    const parent = await app.agent('lead').run('refund window?')
    const agents = readService<AgentDirectory>(app.agent('lead').ctx, 'agents')!.value
    // The call s1.a1 has ended: nobody may start (or re-attach to, and so read) a child in its name now.
    // (A resumed parent's call runs again and re-attaches: test/crash-waves.test.ts.)
    const request = {
      agent: 'researcher',
      task: 'again',
      parent: { runId: parent.runId, actionId: 's1.a1', agent: 'lead' },
      maxDepth: 2,
      signal: new AbortController().signal,
    }
    await assert.rejects(agents.spawn(request), { code: 'invalid_input', message: /has no call s1\.a1 running now/ })
    await assert.rejects(agents.spawn({ ...request, parent: { ...request.parent, actionId: 's9.a9' } }), {
      code: 'invalid_input',
      message: /has no call s9\.a9 running now/,
    })
    assert.equal(
      (await app.agent('researcher').store().list({ limit: 100 })).filter((r) => r.runId.startsWith(`${parent.runId}.`)).length,
      1,
    )

    const nested = readService<AgentDirectory>(app.agent('researcher').ctx, 'agents')!.value
    await assert.rejects(
      nested.spawn({
        ...request,
        agent: 'lead',
        parent: { runId: `${parent.runId}.s1.a1`, actionId: 's1.a1', agent: 'researcher' },
        maxDepth: 1,
      }),
      { code: 'invalid_input', message: /would be 2 levels deep; at most 1/ },
    )
    await assert.rejects(agents.spawn({ ...request, agent: 'nobody' }), {
      code: 'invalid_input',
      message: /may not start agent "nobody": the preset's agents\.lead\.spawns lists researcher/,
    })
  })

  it('hands the run to another agent: one run, recorded as run/handoff, finished by the other agent with its plugins', async () => {
    app = await load({
      triage: {
        script: [{ tool: 'handoff', args: { agent: 'billing', reason: 'a refund question' } }],
        subagents: { handoffs: ['billing'] },
      },
      // The script is by step index: billing takes over at step 2.
      billing: {
        script: [{ final: 'never used' }, { tool: 'lookup_policy', args: { topic: 'refunds' } }, { final: answer }],
        verifier: { minCount: 1 },
      },
    })
    const state: RunState = await app.agent('triage').run('my kettle arrived broken; refund?')
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.equal(state.agent, 'billing')
    const events = await eventsOf('billing', state.runId)
    const handoff = events.find((e): e is RunEvent<'run/handoff'> => e.type === 'run/handoff')!
    assert.deepEqual([handoff.data.from, handoff.data.to, handoff.data.reason], ['triage', 'billing', 'a refund question'])
    assert.ok(!('subagents' in handoff.data.plugins), "billing's plugins, not triage's")
    const types = events.map((e) => e.type)
    assert.ok(types.indexOf('run/handoff') > types.indexOf('step/end'), 'after the step that asked for it')
    assert.equal(events.filter((e) => e.type === 'run/start').length, 1)
    // Lists and workers see who drives it now.
    assert.equal((await app.agent('billing').store().list({ limit: 10 })).find((r) => r.runId === state.runId)?.agent, 'billing')
    // Steering it goes through billing: triage is refused.
    await assert.rejects(app.agent('triage').resume(state.runId), {
      code: 'agent_not_found',
      message: /belongs to agent "billing", not "triage"/,
    })
    assert.equal(
      events
        .filter((e) => e.type === 'tool/decision')
        .at(-1)
        ?.producer.startsWith('policy-rules@'),
      true,
    )
  })

  it('runs the README example: triage hands over to billing, which asks the researcher', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const dir = tempDir('cordage-subagents-')
    dirs.push(dir)
    writeFileSync(join(dir, 'preset.yml'), /```yaml\n([\s\S]*?)```/.exec(readme)![1])
    app = await Cordage.fromPreset(join(dir, 'preset.yml'), {
      onError: (error) => {
        throw error
      },
    })
    const state = await app.agent('triage').run('My kettle arrived broken. Can I get a refund?')
    assert.equal(state.status, 'COMPLETED', state.reason)
    assert.equal(state.agent, 'billing')
    assert.equal(state.nestedSteps, 2)
    const child = await app.agent('researcher').load(`${state.runId}.s2.a1`)
    assert.equal(child.status, 'COMPLETED')
    assert.deepEqual(child.parent, { runId: state.runId, actionId: 's2.a1', agent: 'billing', depth: 1 })
  })

  it('refuses a config that names an agent the preset does not have, or does not let the agent reach', async () => {
    await assert.rejects(load({ lead: { ...lead(), subagents: { agents: ['reseacher'] } }, researcher }), {
      code: 'preset_invalid',
      message: /agents\.lead\.spawns\[0\]: "reseacher" is not an agent of this preset/,
    })
    // The plugin offers spawn_agent for researcher, but the preset does not list it in lead's spawns.
    await assert.rejects(loadRaw({ lead: { ...lead(), subagents: { agents: ['researcher'] } }, researcher }), {
      code: 'plugin_config_invalid',
      message:
        /subagents: agents names "researcher", but the preset does not let agent "lead" start it: add "researcher" to agents\.lead\.spawns/,
    })
  })
})
