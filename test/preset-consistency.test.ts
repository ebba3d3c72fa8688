/**
 * One preset, one behaviour for every command (docs/reference/presets.md#which-agents-a-command-starts).
 * A preset whose `parent` agent cannot start (its subagents plugin names `child`, which the preset's
 * `spawns` does not allow) beside a good agent `pay`: every command about a run of `pay` starts only
 * `pay` and works, through the real binary; the commands that start every agent refuse at once, all
 * with the same message, which names the agent, the fix, and how to serve the others.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, type Exit } from './fault-lab.ts'

/** The agent that cannot start, and the child it names. */
const agents = {
  parent: {
    task: 'delegate',
    model: { plugin: 'model-scripted', config: { script: [{ final: 'done' }] } },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      { plugin: 'policy-rules', config: { default: 'deny' } },
      { plugin: 'subagents', config: { agents: ['child'] } },
    ],
  },
  child: {
    task: 'help',
    model: { plugin: 'model-scripted', config: { script: [{ final: 'helped' }] } },
    plugins: [
      { plugin: 'store-sqlite', config: { path: 'runs.db' } },
      'tools-registry',
      'context-basic',
      { plugin: 'verifier-basic', config: { minCount: 0 } },
      { plugin: 'policy-rules', config: { default: 'deny' } },
    ],
  },
}

/** What the subagents plugin of `parent` says when it is started: the same words wherever it is. */
const parentRefusal = /error \[plugin_config_invalid\]: .*agents\.parent\.plugins\[5\].*add "child" to agents\.parent\.spawns in the preset/

const runIdOf = (exit: Exit) => (exit.events[0] as RunEvent).runId

function noPresetError(exit: Exit, what: string): void {
  assert.doesNotMatch(exit.stderr, /plugin_config_invalid|agents\.parent/, `${what} started the parent agent:\n${exit.stderr}`)
}

describe('one preset, one behaviour: a command about a run starts only the agent the run belongs to', () => {
  const lab = new FaultLab({
    script: [{ tool: 'pay_once', args: { amount: 10 } }, { final: 'paid' }],
    rules: [{ id: 'payments-ask', verdict: 'ask', match: { tool: 'pay_once' } }],
    agents,
  })
  after(() => lab.close())

  it('run, events, approve, reject, resume and cancel of runs of the good agent all work', async () => {
    const first = await lab.run(['run', '--json'])
    assert.equal(first.code, 5, first.stderr)
    noPresetError(first, 'run')
    const runId = runIdOf(first)

    const events = await lab.run(['events', runId])
    assert.equal(events.code, 0, events.stderr)
    assert.match(events.stdout, /tool\/decision .*ask/)

    // resume opens the run, and says what it waits for.
    const resumed = await lab.run(['resume', runId])
    noPresetError(resumed, 'resume')
    assert.equal(resumed.code, 2, resumed.stderr)
    assert.match(
      resumed.stderr,
      /error \[run_not_waiting\]: .* still waits for approval of s1\.a1 \(pay_once\): approve or reject it first/,
    )

    const approved = await lab.run(['approve', runId, 's1.a1', '--by', 'alice'])
    assert.equal(approved.code, 0, approved.stderr)
    assert.equal(lab.payments().length, 1, 'paid once, after the approval')

    const second = runIdOf(await lab.run(['run', '--json']))
    const rejected = await lab.run(['reject', second, 's1.a1', '--by', 'alice'])
    noPresetError(rejected, 'reject')
    assert.equal(rejected.code, 0, rejected.stderr)
    assert.equal(lab.payments().length, 1, 'a rejected payment is not made')

    const third = runIdOf(await lab.run(['run', '--json']))
    const cancelled = await lab.run(['cancel', third, '--by', 'alice'])
    assert.equal(cancelled.code, 6, cancelled.stderr)
    const ends = (await lab.events(third)).filter((e) => e.type === 'run/end')
    assert.ok(ends.length === 1 && ends[0].type === 'run/end' && ends[0].data.status === 'CANCELLED')
  })

  it('reconcile of a crashed run of the good agent works', async () => {
    const crashing = new FaultLab({ script: [{ tool: 'pay_once', args: { amount: 10 } }, { final: 'paid' }], agents })
    after(() => crashing.close())
    const crashed = await crashing.run(['run', '--json'], 'kill-in=pay_once')
    assert.equal(crashed.signal, 'SIGKILL')
    await crashing.leaseExpiry()
    const resumed = await crashing.run(['resume', runIdOf(crashed)])
    assert.equal(resumed.code, 5, resumed.stderr)
    const settled = await crashing.run(['reconcile', runIdOf(crashed), 's1.a1', '--committed'])
    noPresetError(settled, 'reconcile')
    assert.equal(settled.code, 0, settled.stderr)
    assert.equal(crashing.payments().length, 1)
  })

  it('a worker for the good agent drives its submitted run', async () => {
    const submitted = await lab.run(['submit', '--agent', 'pay'])
    assert.equal(submitted.code, 0, submitted.stderr)
    const runId = submitted.stdout.trim()
    const worker = await lab.run(['worker', '--agent', 'pay', '--once'])
    assert.equal(worker.code, 0, worker.stderr)
    assert.match(worker.stderr, new RegExp(`run ${runId} WAITING_APPROVAL`))
  })

  it('the commands that start every agent, and run of the bad agent, refuse at once with the same message', async () => {
    const refusals = await Promise.all([
      lab.run(['run', '--agent', 'parent']),
      lab.run(['worker', '--once']),
      lab.run(['playground', '--port', '0']),
      lab.run(['check']),
    ])
    for (const [i, refused] of refusals.entries()) {
      const what = ['run --agent parent', 'worker', 'playground', 'check'][i]
      assert.equal(refused.code, 2, `${what}: ${refused.stderr}`)
      assert.match(refused.stderr, parentRefusal, what)
    }
    // The two that serve every agent say how to serve the others.
    assert.match(
      refusals[1].stderr,
      /cordage worker starts every agent of the preset: fix agent "parent", or serve the others .* --agent NAME/,
    )
    assert.match(
      refusals[2].stderr,
      /cordage playground starts every agent of the preset: fix agent "parent", or serve the others .* --agent NAME/,
    )
  })
})
