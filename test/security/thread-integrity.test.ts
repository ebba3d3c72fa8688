/**
 * What a thread is made of is part of what `cordage verify` proves, on store-sqlite and store-postgres.
 * A store keeps a run's thread and turn as columns of its run row, outside the hash chain; each turn's
 * chained `run/start` names its thread, its turn and the run of the turn before. So `verify RUN`
 * compares the store's listing of the run with its run/start, and `verify --thread ID` the thread's
 * turn list with the runs' own chained records. The rows are edited with SQL behind the store's back,
 * as someone who can write the database would.
 */
import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { IntegrityLab, storeKinds } from './integrity-lab.ts'

const labs: IntegrityLab[] = []
after(async () => {
  for (const lab of labs) await lab.close()
})

/**
 * Agent `desk` on the lab's store, its runs joining threads through the threads plugin (plugins/threads).
 * Only the built-in plugins and a one-step script: what is checked here is which thread and turn a run
 * belongs to, not what it did, and each of the file's forty-odd `cordage` processes then costs half the
 * CPU it does with the vault preset of the other integrity tests (a TypeScript plugin the compiled
 * binary loads through tsx, guardrails, artifacts).
 */
function threadPreset(lab: IntegrityLab) {
  return {
    cordage: 1,
    agents: {
      desk: {
        task: 'Answer.',
        budgets: { maxSteps: 2 },
        model: { plugin: 'model-scripted', config: { script: [{ final: 'Answered.' }] } },
        plugins: [
          lab.storeEntry(),
          'tools-registry',
          'context-basic',
          { plugin: 'verifier-basic', config: { minCount: 0 } },
          { plugin: 'policy-rules', config: { default: 'deny', rules: [{ id: 'all', verdict: 'allow', match: { tool: '*' } }] } },
          'threads',
        ],
      },
    },
  }
}

/** Thread T-1 with two turns (runs a, b), thread T-2 with one (run c), and a run in no thread (d). */
async function threads(kind: 'sqlite' | 'postgres') {
  const lab = new IntegrityLab(kind)
  labs.push(lab)
  lab.writePreset(threadPreset(lab))
  const ids: string[] = []
  for (const args of [['--thread', 'T-1'], ['--thread', 'T-1'], ['--thread', 'T-2'], []]) {
    const run = await lab.run(args)
    assert.equal(run.code, 0, run.stderr)
    ids.push(run.runId)
  }
  const [a, b, c, d] = ids
  return { lab, a, b, c, d }
}

for (const { kind, skip } of storeKinds) {
  describe(`cordage verify and thread membership (store-${kind})`, { skip }, () => {
    it('passes the turns and threads as recorded; fails a run moved to another thread, from each side', async () => {
      const { lab, a, b, c } = await threads(kind)
      const turn = await lab.cli(['verify', b])
      assert.equal(turn.code, 0, turn.stderr)
      assert.match(
        turn.stdout,
        new RegExp(`\n {2}turn 2 of thread T-1, after run ${a}: as its run/start says, and as the store lists it\n`),
      )
      const thread = await lab.cli(['verify', '--thread', 'T-1'])
      assert.equal(thread.code, 0, thread.stderr)
      assert.match(thread.stdout, new RegExp(`^thread T-1: intact: 2 turn\\(s\\), each the run whose chained run/start names it`))

      // Run b becomes turn 2 of thread T-2 (after c), as far as the store's rows go.
      await lab.sql('UPDATE runs SET thread_id = ? WHERE run_id = ?', 'T-2', b)
      const moved = await lab.cli(['verify', b])
      assert.equal(moved.code, 1, moved.stderr)
      assert.match(
        moved.stdout,
        new RegExp(
          `^run ${b}: NOT INTACT at seq 1: the store lists it as turn 2 of thread T-2, but its run/start says turn 2 of thread T-1`,
        ),
      )
      assert.match(moved.stderr, new RegExp(`^error \\[store_corrupt\\]: run ${b}, seq 1: the store lists it as turn 2 of thread T-2`))
      const json = JSON.parse((await lab.cli(['verify', b, '--json'])).stdout)
      assert.deepEqual([json.intact, json.firstBad.seq, json.thread], [false, 1, { id: 'T-1', turn: 2, previousRunId: a }])

      const into = await lab.cli(['verify', '--thread', 'T-2'])
      assert.equal(into.code, 1, into.stderr)
      assert.match(
        into.stdout,
        new RegExp(`^thread T-2: NOT INTACT at turn 2: run ${b}'s run/start says it is turn 2 of thread T-1, not of T-2`),
      )
      const from = await lab.cli(['verify', '--thread', 'T-1'])
      assert.equal(from.code, 1, from.stderr)
      assert.match(
        from.stdout,
        new RegExp(
          `^thread T-1: NOT INTACT at turn 2: run ${b}'s run/start says it is turn 2 of thread T-1, but the store does not list it there`,
        ),
      )
      assert.match(from.stderr, /^error \[store_corrupt\]: thread T-1, turn 2: /)
      // What was not touched still verifies.
      assert.equal((await lab.cli(['verify', a])).code, 0)
      assert.equal((await lab.cli(['verify', c])).code, 0)
    })

    it('fails a run moved into a thread it never joined, and a thread whose agent was changed', async () => {
      const { lab, d } = await threads(kind)
      await lab.sql('UPDATE runs SET thread_id = ?, turn = ? WHERE run_id = ?', 'T-2', 2, d)
      const joined = await lab.cli(['verify', d])
      assert.equal(joined.code, 1, joined.stderr)
      assert.match(
        joined.stdout,
        new RegExp(`^run ${d}: NOT INTACT at seq 1: the store lists it as turn 2 of thread T-2, but its run/start says it is in no thread`),
      )
      const thread = await lab.cli(['verify', '--thread', 'T-2'])
      assert.equal(thread.code, 1)
      assert.match(thread.stdout, new RegExp(`^thread T-2: NOT INTACT at turn 2: run ${d}'s run/start says it is in no thread`))

      await lab.sql('UPDATE threads SET agent = ? WHERE thread_id = ?', 'mallory', 'T-1')
      const agent = await lab.cli(['verify', '--thread', 'T-1'])
      assert.equal(agent.code, 1)
      assert.match(
        agent.stdout,
        /^thread T-1: NOT INTACT at turn 1: the store says the thread belongs to agent mallory, but run \S+ started as agent desk/,
      )
    })

    it('is a usage error with both a run and --thread, with neither, or for a thread the stores do not have', async () => {
      const lab = new IntegrityLab(kind)
      labs.push(lab)
      lab.writePreset(threadPreset(lab))
      const both = await lab.cli(['verify', 'run_x', '--thread', 'T-1'])
      assert.equal(both.code, 2)
      assert.match(both.stderr, /^error \[invalid_input\]: "verify" takes RUN or --thread ID/)
      const neither = await lab.cli(['verify'])
      assert.equal(neither.code, 2)
      assert.match(neither.stderr, /^error \[invalid_input\]: "verify" takes RUN or --thread ID/)
      const missing = await lab.cli(['verify', '--thread', 'T-9'])
      assert.equal(missing.code, 2)
      assert.match(missing.stderr, /^error \[thread_not_found\]: no thread T-9/)
    })
  })
}
