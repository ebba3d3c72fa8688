/**
 * A parent waits for a child that waits for a person (issue 17, item 3): it pauses in the child's
 * status with `waiting.child`, goes on once the child has ended (woken by the process that ended it,
 * or by a worker's sweep when that wake was lost), is refused a resume while the child still waits,
 * and cancelling it cancels the child, whose approval is then void.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, afterEach, describe, it } from 'node:test'
import { stringify } from 'yaml'
import type { RunEvent, RunState } from 'cordage'
import { Cordage } from 'cordage/host'
import { main } from '../../../core/cli/main.ts'
import { tempDir } from '../../../test/temp.ts'

const dirs: string[] = []
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const note = 'Noted on T-1 [source: T-1].'

function agentEntry(name: string, script: unknown[], extra: Record<string, unknown> = {}, rules?: unknown[]) {
  return {
    description: `the ${name} agent`,
    budgets: { maxSteps: 8 },
    ...extra,
    model: { plugin: 'model-scripted', config: { script } },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      {
        plugin: 'policy-rules',
        config: { default: 'deny', approvers: ['*'], rules: rules ?? [{ id: 'all', verdict: 'allow', match: {} }] },
      },
      { plugin: 'support-desk', config: { outbox: 'outbox.jsonl' } },
      ...(extra.spawns ? [{ plugin: 'subagents', config: { agents: extra.spawns } }] : []),
    ],
  }
}

/** The lead asks the researcher, whose write (record_followup) waits for approval; both on one SQLite file. */
function preset(dir: string, file = 'preset.yml', only?: string, researcherScript?: unknown[]): string {
  const agents: Record<string, unknown> = {
    lead: agentEntry(
      'lead',
      [{ tool: 'spawn_agent', args: { agent: 'researcher', task: 'Note the refund on T-1.' } }, { final: 'The researcher noted it.' }],
      { spawns: ['researcher'] },
    ),
    researcher: agentEntry(
      'researcher',
      researcherScript ?? [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'refund approved' } }, { final: note }],
      {},
      [
        { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
        { id: 'rest', verdict: 'allow', match: {} },
      ],
    ),
  }
  if (only) for (const name of Object.keys(agents)) if (name !== only) delete agents[name]
  const path = join(dir, file)
  writeFileSync(path, stringify({ cordage: 1, agents }))
  return path
}

function open(file: string): Promise<Cordage> {
  return Cordage.fromPreset(file, {
    onError: (error) => {
      throw error
    },
  })
}

const apps: Cordage[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.stop()
})

async function setUp() {
  const dir = tempDir('cordage-child-wait-')
  dirs.push(dir)
  const file = preset(dir)
  const app = await open(file)
  apps.push(app)
  const parent = await app.agent('lead').run('note the refund')
  const childId = `${parent.runId}.s1.a1`
  return { dir, file, app, parent, childId }
}

/** Lines the support desk wrote to its outbox: the write's side effects. */
function outbox(dir: string): number {
  const path = join(dir, 'outbox.jsonl')
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), color: false })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

describe('a parent waits for a child that waits for a person', () => {
  it('pauses the parent in the child status, naming the child, and refuses to resume it while the child waits', async () => {
    const { app, parent, childId, dir } = await setUp()
    assert.equal(parent.status, 'WAITING_APPROVAL', parent.reason)
    assert.deepEqual(parent.waiting?.child, { runId: childId, agent: 'researcher', actionId: 's1.a1' })
    assert.equal(parent.waiting?.actionId, 's1.a1', 'the spawn_agent call waits')
    assert.equal(parent.actions['s1.a1'].status, 'running', 'no outcome recorded for the call yet')
    assert.match(
      parent.waiting?.reason ?? '',
      new RegExp(`waits on child run ${childId.replace(/\./g, '\\.')} \\(agent researcher\\), which is WAITING_APPROVAL`),
    )
    const events = await app.agent('lead').store().load(parent.runId)
    assert.ok(!events.some((e) => e.type === 'tool/end' || e.type === 'run/end'), 'the parent neither observed nor ended')
    const paused = events.find((e): e is RunEvent<'run/paused'> => e.type === 'run/paused')!
    assert.deepEqual(paused.data.child, { runId: childId, agent: 'researcher', actionId: 's1.a1' })

    // Fail closed: nothing lets the parent go on (and so complete) while its child's write is pending.
    await assert.rejects(app.agent('lead').resume(parent.runId), {
      code: 'child_waiting',
      message: new RegExp(`waits on its child run .*WAITING_APPROVAL.*cordage approve ${childId.replace(/\./g, '\\.')} s1\\.a1`),
    })
    await assert.rejects(app.agent('lead').approve(parent.runId, 's1.a1'), { code: 'child_waiting' })
    await assert.rejects(app.agent('lead').reconcile(parent.runId, 's1.a1', true), { code: 'reconcile_not_possible' })
    const still = await app.agent('lead').load(parent.runId)
    assert.equal(still.status, 'WAITING_APPROVAL')
    assert.equal(still.lastSeq, parent.lastSeq, 'the refused commands recorded nothing')
    assert.equal(outbox(dir), 0)
  })

  it("goes on once the child's write is approved and the child ends, and completes with the child's answer", async () => {
    const { app, parent, childId, dir } = await setUp()
    const child = await (await app.agent('researcher').approve(childId, 's1.a1', { by: 'alice' })).done
    assert.equal(child.status, 'COMPLETED', child.reason)
    // The child's end resumed the parent in this process before its handle resolved: the parent is driven here now.
    await app.agent('lead').idle()
    const done = await app.agent('lead').load(parent.runId)
    assert.equal(done.status, 'COMPLETED', done.reason)
    const observation = done.transcript.find((t) => t.kind === 'observation')
    assert.equal(observation?.kind === 'observation' && observation.text, `researcher (run ${childId}) answered: ${note}`)
    const events = await app.agent('lead').store().load(parent.runId)
    const resumed = events.find((e): e is RunEvent<'run/resumed'> => e.type === 'run/resumed')!
    assert.deepEqual([resumed.data.from, resumed.data.by], ['WAITING_APPROVAL', `child ${childId}`])
    assert.equal(done.nestedSteps, 2, "the child's steps are counted once it answered")
    assert.equal(outbox(dir), 1, 'the approved write ran once')
    assert.equal(
      (await app.agent('researcher').store().list({ limit: 100 })).filter((r) => r.runId.startsWith(`${parent.runId}.`)).length,
      1,
    )
  })

  it('cancelling the parent cancels the child: its approval is void, and the write never runs', async () => {
    const { app, parent, childId, dir } = await setUp()
    const cancelled = await app.agent('lead').cancel(parent.runId, { by: 'bob', reason: 'not needed' })
    assert.equal(cancelled.status, 'CANCELLED')
    const child = await app.agent('researcher').load(childId)
    assert.equal(child.status, 'CANCELLED')
    assert.equal(child.cancel?.by, `parent:${parent.runId}`)
    await assert.rejects(app.agent('researcher').approve(childId, 's1.a1', { by: 'alice' }), { code: 'run_not_waiting' })
    const childEvents = await app.agent('researcher').store().load(childId)
    assert.ok(!childEvents.some((e) => e.type === 'tool/start'), 'the write never started')
    assert.equal(outbox(dir), 0)
    assert.equal((await app.agent('lead').load(parent.runId)).status, 'CANCELLED', 'the child ending did not wake the cancelled parent')
  })

  it('lists the chain of a pending approval: parent run, child run, action', async () => {
    const { app, file, parent, childId } = await setUp()
    const listed = await cli(['runs', '--preset', file, '--status', 'WAITING_APPROVAL'])
    assert.equal(listed.code, 0, listed.err)
    assert.match(
      listed.out,
      new RegExp(`waits on child run ${childId.replace(/\./g, '\\.')} \\(agent researcher, action s1\\.a1\\), started by its call s1\\.a1`),
    )
    assert.match(listed.out, new RegExp(`approval of action s1\\.a1: cordage approve ${childId.replace(/\./g, '\\.')} s1\\.a1`))
    assert.match(listed.out, new RegExp(`child of run ${parent.runId} \\(agent lead, call s1\\.a1\\)`))
    const rows = (await cli(['runs', '--preset', file, '--status', 'WAITING_APPROVAL', '--json'])).out.split('\n').map((l) => JSON.parse(l))
    const parentRow = rows.find((r) => r.runId === parent.runId)
    assert.deepEqual(parentRow.waiting.child, { runId: childId, agent: 'researcher', actionId: 's1.a1' })
    assert.deepEqual(rows.find((r) => r.runId === childId).parent.runId, parent.runId)

    // `cordage resume` of the parent is refused, and says what to run instead.
    const refused = await cli(['resume', parent.runId, '--preset', file])
    assert.equal(refused.code, 2)
    assert.match(refused.err, new RegExp(`error \\[child_waiting\\].*cordage approve ${childId.replace(/\./g, '\\.')} s1\\.a1`))

    // Approving the child from the command line says whose child it is; the parent goes on in that process.
    const approved = await cli(['approve', childId, 's1.a1', '--preset', file])
    assert.equal(approved.code, 0, approved.err)
    assert.match(approved.err, new RegExp(`child of run ${parent.runId} \\(agent lead, call s1\\.a1\\)`))
    const leadState = await app.agent('lead').load(parent.runId)
    assert.equal(leadState.status, 'COMPLETED', `${leadState.failureCode}: ${leadState.reason}`)

    // A run that ends up waiting on its child says so, with the child's commands.
    const ran = await cli(['run', '--preset', file, '--agent', 'lead', '--task', 'note it again'])
    assert.equal(ran.code, 5, ran.err)
    const waiting = /run (\S+) WAITING_APPROVAL/.exec(ran.err)![1]
    assert.match(ran.err, new RegExp(`approve: cordage approve ${waiting.replace(/\./g, '\\.')}\\.s1\\.a1 s1\\.a1`))
    assert.match(ran.err, /waits on child run \S+\.s1\.a1 \(agent researcher, action s1\.a1\)/)
  })

  it("waits WAITING_USER on a child's question: the answer is given to the child, and the parent goes on with its answer", async () => {
    const dir = tempDir('cordage-child-wait-')
    dirs.push(dir)
    const app = await open(preset(dir, 'preset.yml', undefined, [{ ask: 'Which ticket?' }, { final: 'It is ticket T-1.' }]))
    apps.push(app)
    const parent = await app.agent('lead').run('note the refund')
    const childId = `${parent.runId}.s1.a1`
    assert.equal(parent.status, 'WAITING_USER', parent.reason)
    assert.deepEqual(parent.waiting?.child, { runId: childId, agent: 'researcher' })
    assert.match(parent.waiting?.reason ?? '', /which is WAITING_USER: Which ticket\?/)
    // The question is the child's: an answer given to the parent is refused while the child waits.
    await assert.rejects(app.agent('lead').resume(parent.runId, { input: 'T-1' }), { code: 'child_waiting' })
    const child = await (await app.agent('researcher').resume(childId, { input: 'T-1' })).done
    assert.equal(child.status, 'COMPLETED', child.reason)
    await app.agent('lead').idle()
    const done = await app.agent('lead').load(parent.runId)
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.ok(
      !done.transcript.some((t) => t.kind === 'user' && t.text === 'T-1'),
      "the child's answer is not put in the parent's conversation",
    )
    const observation = done.transcript.find((t) => t.kind === 'observation')
    assert.equal(observation?.kind === 'observation' && observation.text, `researcher (run ${childId}) answered: It is ticket T-1.`)
  })

  it('waits along a chain: a grandchild waits for approval, so do its parent and grandparent; approving it completes all three', async () => {
    const dir = tempDir('cordage-child-wait-')
    dirs.push(dir)
    const ask = (target: string, answer: string) => [
      { tool: 'spawn_agent', args: { agent: target, task: 'Note the refund on T-1.' } },
      { final: answer },
    ]
    const agents = {
      lead: agentEntry('lead', ask('researcher', 'Done, says the researcher.'), { spawns: ['researcher'] }),
      researcher: agentEntry('researcher', ask('clerk', 'Done, says the clerk.'), { spawns: ['clerk'] }),
      clerk: agentEntry('clerk', [{ tool: 'record_followup', args: { ticketId: 'T-1', note: 'refund approved' } }, { final: note }], {}, [
        { id: 'followups', verdict: 'ask', match: { tool: 'record_followup' } },
        { id: 'rest', verdict: 'allow', match: {} },
      ]),
    }
    writeFileSync(join(dir, 'preset.yml'), stringify({ cordage: 1, agents }))
    const app = await open(join(dir, 'preset.yml'))
    apps.push(app)
    const top = await app.agent('lead').run('note the refund')
    const middle = `${top.runId}.s1.a1`
    const bottom = `${middle}.s1.a1`
    assert.equal(top.status, 'WAITING_APPROVAL', top.reason)
    assert.deepEqual(top.waiting?.child, { runId: middle, agent: 'researcher', actionId: 's1.a1' })
    assert.deepEqual((await app.agent('researcher').load(middle)).waiting?.child, { runId: bottom, agent: 'clerk', actionId: 's1.a1' })
    await assert.rejects(app.agent('researcher').resume(middle), { code: 'child_waiting' })

    assert.equal((await (await app.agent('clerk').approve(bottom, 's1.a1', { by: 'alice' })).done).status, 'COMPLETED')
    await app.agent('researcher').idle()
    await app.agent('lead').idle()
    assert.equal((await app.agent('researcher').load(middle)).status, 'COMPLETED')
    const done = await app.agent('lead').load(top.runId)
    assert.equal(done.status, 'COMPLETED', done.reason)
    assert.equal(done.nestedSteps, 4, "the researcher's two steps and the clerk's two")
    assert.equal(outbox(dir), 1)
  })

  it("resumes a parent whose child ended without waking it (the child's process could not): a worker's sweep does", async () => {
    const { dir, file, app, parent, childId } = await setUp()
    // While the child waits, a worker leaves the parent alone.
    const early = await cli(['worker', '--once', '--preset', file, '--agent', 'lead'])
    assert.equal(early.code, 0, early.err)
    assert.equal((await app.agent('lead').load(parent.runId)).lastSeq, parent.lastSeq, 'nothing recorded')
    // Another process, whose preset has only the researcher: the child ends there, and its parent's agent is unknown there.
    const only = await open(preset(dir, 'researcher-only.yml', 'researcher'))
    apps.push(only)
    const child = await (await only.agent('researcher').approve(childId, 's1.a1', { by: 'alice' })).done
    assert.equal(child.status, 'COMPLETED', child.reason)
    assert.equal((await app.agent('lead').load(parent.runId)).status, 'WAITING_APPROVAL', 'not woken')

    const worked = await cli(['worker', '--once', '--preset', file, '--agent', 'lead'])
    assert.equal(worked.code, 0, worked.err)
    const done: RunState = await app.agent('lead').load(parent.runId)
    assert.equal(done.status, 'COMPLETED', done.reason)
    const resumed = (await app.agent('lead').store().load(parent.runId)).find((e): e is RunEvent<'run/resumed'> => e.type === 'run/resumed')
    assert.equal(resumed?.data.by, 'worker')
  })
})
