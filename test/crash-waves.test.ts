/**
 * Crashes in the middle of a wave of parallel side effects, and in the middle of a child run, with real
 * processes: the `cordage` binary runs an agent in a child process that SIGKILLs itself at a chosen
 * point, then new processes take the run over from the SQLite store (`cordage resume`, `cordage
 * reconcile`). Each case checks what the target system saw (wave-desk's outbox file, which deduplicates
 * idempotent writes by key), the statuses, and the invariants of every log involved.
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import type { RunEvent } from 'cordage'
import { FaultLab, wellFormed, type Exit } from './fault-lab.ts'
import { WaveOutbox, type Entry } from './fixtures/plugins/wave-desk/outbox.ts'

let lab: FaultLab | undefined
afterEach(() => {
  if (!lab) return
  lab.close()
  rmSync(lab.dir, { recursive: true, force: true })
  lab = undefined
})

const waveDesk = (scope = '') => ({
  path: resolve(import.meta.dirname, 'fixtures/plugins/wave-desk'),
  config: { outbox: 'outbox.jsonl', scope },
})
const outbox = (l: FaultLab): Entry[] => new WaveOutbox(join(l.dir, 'outbox.jsonl')).all()
const runIdOf = (exit: Exit) => exit.events[0].runId
const of = <T extends RunEvent['type']>(events: RunEvent[], type: T, actionId?: string): RunEvent<T>[] =>
  events.filter((e) => e.type === type && (!actionId || e.actionId === actionId)) as RunEvent<T>[]

/** How many times the target system saw each key. */
function effectsPerKey(entries: Entry[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const e of entries) counts[e.key] = (counts[e.key] ?? 0) + 1
  return counts
}

/**
 * The invariants a finished (or paused) log keeps whatever crashed in between: seq gap-free with at most
 * one run/end, last; every proposed action closed exactly once (tool/end, a final tool/error, or a
 * committed tool/reconciled) and nothing recorded for it after that; every tool/start after an `allow`
 * decision of its own action, under that decision's policy version, caused by it.
 */
function logProblems(events: RunEvent[], { open = [] as string[] } = {}): string[] {
  const problems: string[] = []
  const formed = wellFormed(events)
  if (formed) problems.push(formed)
  for (const proposed of of(events, 'tool/proposed')) {
    const id = proposed.actionId!
    const closers = events.filter(
      (e) =>
        e.actionId === id &&
        (e.type === 'tool/end' ||
          (e.type === 'tool/error' && !e.data.willRetry && !e.data.unknown) ||
          (e.type === 'tool/reconciled' && e.data.committed)),
    )
    const expected = open.includes(id) ? 0 : 1
    if (closers.length !== expected) problems.push(`${id} closed ${closers.length} times, expected ${expected}`)
    const last = closers.at(-1)
    const after = last && events.find((e) => e.actionId === id && e.seq > last.seq && e.type.startsWith('tool/'))
    if (after) problems.push(`${id}: ${after.type} at seq ${after.seq} after it was closed at seq ${last.seq}`)
  }
  for (const start of of(events, 'tool/start')) {
    const decision = of(events, 'tool/decision', start.actionId)
      .filter((d) => d.seq < start.seq)
      .at(-1)
    if (!decision) {
      problems.push(`tool/start ${start.actionId} (seq ${start.seq}) has no decision before it`)
      continue
    }
    if (decision.data.verdict !== 'allow') problems.push(`tool/start ${start.actionId} after a ${decision.data.verdict} decision`)
    if (decision.data.policyVersion !== start.data.policyVersion)
      problems.push(`tool/start ${start.actionId} under policy ${start.data.policyVersion}, decided under ${decision.data.policyVersion}`)
    if (start.causation !== decision.seq)
      problems.push(
        `tool/start ${start.actionId} (seq ${start.seq}) caused by seq ${start.causation}, not its decision (seq ${decision.seq})`,
      )
  }
  return problems
}

/**
 * Every durable tool/start of a side-effecting call has its ledger intent in the store: same run, action
 * and arguments, as many attempts as starts, and (when `settled`) committed; otherwise pending unless its
 * outcome is on record. Checked right after a crash, this is "the intent is durable before the call runs".
 */
async function ledgerProblems(l: FaultLab, events: RunEvent[], { settled = false } = {}): Promise<string[]> {
  const problems: string[] = []
  const byAction = new Map<string, RunEvent<'tool/start'>[]>()
  for (const s of of(events, 'tool/start')) byAction.set(s.actionId!, [...(byAction.get(s.actionId!) ?? []), s])
  for (const [actionId, starts] of byAction) {
    const proposed = of(events, 'tool/proposed', actionId)[0]
    const key = starts.at(-1)!.data.idempotencyKey
    if (starts.some((s) => s.data.idempotencyKey !== key)) problems.push(`${actionId} started under different keys`)
    const effect = await l.db().effect(key)
    if (!effect) {
      problems.push(`${actionId}: no ledger entry for ${key}`)
      continue
    }
    if (effect.runId !== starts[0].runId || effect.actionId !== actionId)
      problems.push(`${key} belongs to ${effect.runId} ${effect.actionId}`)
    if (effect.argsHash !== proposed.data.argsHash)
      problems.push(`${key}: ledger args ${effect.argsHash}, proposed ${proposed.data.argsHash}`)
    if (effect.attempts !== starts.length) problems.push(`${key}: ${effect.attempts} intents in the ledger for ${starts.length} tool/start`)
    const closed = events.some(
      (e) =>
        e.actionId === actionId &&
        e.seq > starts.at(-1)!.seq &&
        (e.type === 'tool/end' || (e.type === 'tool/reconciled' && e.data.committed)),
    )
    const expected = settled || closed ? 'committed' : 'pending'
    if (effect.status !== expected) problems.push(`${key} is ${effect.status}, expected ${expected}`)
  }
  return problems
}

describe('crashes in a wave of parallel side effects', () => {
  // One step, three side-effecting calls with disjoint footprints (two accounts and a fax line): one wave.
  // The posts are idempotent (the outbox deduplicates by key); the fax is not, and cannot be asked.
  const postFast = { tool: 'post_entry', args: { account: 'acme', amount: 10 } }
  const postSlow = { tool: 'post_entry', args: { account: 'globex', amount: 20, ms: 300 } }
  const fax = (ms: number) => ({ tool: 'send_fax', args: { to: '+1-555-0100', text: 'invoice INV-9 paid', ms } })

  const cases = [
    {
      name: "after the wave's tool/start events became durable, before any call ran",
      calls: [postFast, fax(100), postSlow],
      faxId: 's1.a2',
      fault: 'kill-after=tool/start#1',
      doneAtCrash: [] as string[],
      recordedAtCrash: [] as string[],
    },
    {
      name: 'inside the fax, right after it committed, with one post done and one in flight',
      calls: [postFast, fax(100), postSlow],
      faxId: 's1.a2',
      fault: 'kill-in=send_fax',
      doneAtCrash: ['s1.a1', 's1.a2'],
      recordedAtCrash: [],
    },
    {
      name: 'after the first outcome of the wave was recorded (every call had finished)',
      calls: [postFast, fax(100), postSlow],
      faxId: 's1.a2',
      fault: 'kill-after=tool/end#1',
      doneAtCrash: ['s1.a1', 's1.a2', 's1.a3'],
      recordedAtCrash: ['s1.a1'],
    },
    {
      name: 'inside a post, with the fax first in the step: the posts wait until a person settled the fax',
      calls: [fax(0), { ...postFast, args: { ...postFast.args, ms: 150 } }, { ...postSlow, args: { ...postSlow.args, ms: 150 } }],
      faxId: 's1.a1',
      fault: 'kill-in=post_entry',
      doneAtCrash: ['s1.a1', 's1.a2'],
      recordedAtCrash: [],
    },
  ]

  for (const c of cases)
    it(`settles each call of the wave once when the process died ${c.name}`, async () => {
      lab = new FaultLab({ script: [{ calls: c.calls }, { final: 'posted and faxed' }], plugins: [waveDesk()] })
      const crashed = await lab.run(['run', '--json'], c.fault)
      assert.equal(crashed.signal, 'SIGKILL', crashed.stderr)
      const runId = runIdOf(crashed)
      const ids = c.calls.map((_, i) => `s1.a${i + 1}`)
      const keyOf = (id: string) => `${runId}/${id}`

      // What the dead process left: one wave (every start durable together, before any outcome), each
      // start with its ledger intent, and in the target system exactly what committed before the kill.
      const atCrash = await lab.events(runId)
      const starts = of(atCrash, 'tool/start')
      assert.deepEqual(
        starts.map((s) => s.actionId),
        ids,
        'the three calls started as one wave',
      )
      assert.deepEqual(
        starts.map((s) => s.seq),
        starts.map((_, i) => starts[0].seq + i),
        'their starts are consecutive: one flush',
      )
      assert.deepEqual(
        of(atCrash, 'tool/end').map((e) => e.actionId),
        c.recordedAtCrash,
      )
      assert.deepEqual(await ledgerProblems(lab, atCrash), [])
      assert.deepEqual(
        outbox(lab)
          .map((e) => e.key)
          .sort(),
        c.doneAtCrash.map(keyOf).sort(),
      )
      assert.deepEqual(logProblems(atCrash, { open: ids.filter((id) => !c.recordedAtCrash.includes(id)) }), [])

      // A new process takes over: idempotent calls before the fax run again under their key; the fax's
      // outcome is unknown and it cannot be asked, so the run waits for a person.
      await lab.leaseExpiry()
      const resumed = await lab.run(['resume', runId, '--json'])
      assert.equal(resumed.code, 5, resumed.stderr)
      const paused = resumed.events.at(-1)!
      assert.ok(
        paused.type === 'run/paused' &&
          paused.data.status === 'WAITING_RECONCILIATION' &&
          paused.data.code === 'unknown_effect' &&
          paused.data.actionId === c.faxId,
        JSON.stringify(paused),
      )
      const atPause = await lab.events(runId)
      assert.equal(of(atPause, 'run/recovered').length, 1)
      assert.equal(of(atPause, 'tool/start', c.faxId).length, 1, 'the fax was not sent again')
      const before = ids.slice(0, ids.indexOf(c.faxId))
      assert.deepEqual(
        of(atPause, 'tool/end').map((e) => e.actionId),
        [...new Set([...c.recordedAtCrash, ...before])],
        'the posts proposed before the fax are settled; those after it wait',
      )
      assert.equal(outbox(lab).filter((e) => e.tool === 'send_fax').length, c.doneAtCrash.includes(c.faxId) ? 1 : 0)
      assert.deepEqual(logProblems(atPause, { open: ids.filter((id) => !of(atPause, 'tool/end', id).length) }), [])

      // The person looks at the fax line and says what happened; the run goes on in this process.
      const faxSent = outbox(lab).some((e) => e.key === keyOf(c.faxId))
      assert.equal(faxSent, c.doneAtCrash.includes(c.faxId))
      const settled = await lab.run(['reconcile', runId, c.faxId, faxSent ? '--committed' : '--not-committed', '--by', 'dana', '--json'])
      assert.equal(settled.code, 0, settled.stderr)

      const events = await lab.events(runId)
      const end = events.at(-1)!
      assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED', JSON.stringify(end))
      // Exactly once in the target system, under the kernel's keys.
      assert.deepEqual(effectsPerKey(outbox(lab)), Object.fromEntries(ids.map((id) => [keyOf(id), 1])))
      const reconciled = of(events, 'tool/reconciled')
      assert.deepEqual(
        reconciled.map((e) => [e.actionId, e.data.committed, e.data.by]),
        [[c.faxId, faxSent, 'operator:dana']],
      )
      // Each call that had no recorded outcome ran again (same key, next attempt) unless it was the fax and it had been sent.
      for (const id of ids) {
        const again = !c.recordedAtCrash.includes(id) && !(id === c.faxId && faxSent)
        const s = of(events, 'tool/start', id)
        assert.deepEqual(
          s.map((e) => [e.data.attempt, e.data.idempotencyKey]),
          again
            ? [
                [1, keyOf(id)],
                [2, keyOf(id)],
              ]
            : [[1, keyOf(id)]],
          id,
        )
      }
      assert.deepEqual(logProblems(events), [])
      assert.deepEqual(await ledgerProblems(lab, events, { settled: true }), [])
      assert.equal(
        of(events, 'step/model-request', undefined).filter((e) => e.stepId === 's1').length,
        1,
        'the model was not asked for step 1 again',
      )
    })
})

describe('a crash while a child run is running', () => {
  const childAnswer = 'Posted 10 to acme and 20 to globex.'
  // The parent (fault-desk's `pay` agent) spawns `helper`, which posts two entries in one wave, then answers.
  const options = () => ({
    script: [
      { tool: 'spawn_agent', args: { agent: 'helper', task: 'post the two entries' } },
      { final: `The helper says: ${childAnswer}` },
    ],
    plugins: [{ plugin: 'subagents', config: { agents: ['helper'] } }],
    spawns: ['helper'],
    agents: {
      helper: {
        description: 'posts ledger entries',
        budgets: { maxSteps: 6 },
        retry: { attempts: 2, backoffMs: 1 },
        durability: { leaseTtlMs: 300, cancelWatchMs: 25, cancelGraceMs: 1500, effectWaitMs: 3000 },
        model: {
          plugin: 'model-scripted',
          config: {
            script: [
              {
                calls: [
                  { tool: 'post_entry', args: { account: 'acme', amount: 10, ms: 150 } },
                  { tool: 'post_entry', args: { account: 'globex', amount: 20, ms: 150 } },
                ],
              },
              { final: childAnswer },
            ],
          },
        },
        plugins: [
          { plugin: 'store-sqlite', config: { path: 'runs.db' } },
          'tools-registry',
          'context-basic',
          { plugin: 'verifier-basic', config: { minCount: 0 } },
          { plugin: 'policy-rules', version: '^1.0.0', config: { default: 'allow', rules: [] } },
          waveDesk('helper'),
        ],
      },
    },
  })

  const cases = [
    { name: 'after its wave started, before either post ran', fault: 'kill-after@helper=tool/start#1', doneAtCrash: 0, recordedAtCrash: 0 },
    {
      name: 'inside its first post, right after it committed, the other in flight',
      fault: 'kill-in=post_entry',
      doneAtCrash: 1,
      recordedAtCrash: 0,
    },
    {
      name: 'after one of its outcomes was recorded, the other not',
      fault: 'kill-after@helper=tool/end#1',
      doneAtCrash: 2,
      recordedAtCrash: 1,
    },
    {
      name: 'while it asked its model for the final answer',
      fault: 'kill-after@helper=step/model-request#2',
      doneAtCrash: 2,
      recordedAtCrash: 2,
    },
  ]

  for (const c of cases)
    it(`re-attaches the resumed parent to the same child, killed ${c.name}`, async () => {
      lab = new FaultLab(options())
      const crashed = await lab.run(['run', '--json'], c.fault)
      assert.equal(crashed.signal, 'SIGKILL', crashed.stderr)
      const parentId = runIdOf(crashed)
      const childId = `${parentId}.s1.a1`

      // The child was running when the process died; the parent's spawn_agent call had started (its intent durable).
      const childAtCrash = await lab.events(childId)
      const childStart = childAtCrash[0]
      assert.ok(
        childStart.type === 'run/start' &&
          childStart.data.agent === 'helper' &&
          childStart.data.parent?.runId === parentId &&
          childStart.data.parent.actionId === 's1.a1',
      )
      assert.equal(of(childAtCrash, 'run/end').length, 0, 'the child had not ended')
      const childStarts = of(childAtCrash, 'tool/start')
      assert.deepEqual(
        childStarts.map((s) => [s.actionId, s.seq - childStarts[0].seq]),
        [
          ['s1.a1', 0],
          ['s1.a2', 1],
        ],
        "the child's two posts started as one wave",
      )
      assert.equal(of(childAtCrash, 'tool/end').length, c.recordedAtCrash)
      assert.equal(outbox(lab).length, c.doneAtCrash)
      const parentAtCrash = await lab.events(parentId)
      assert.deepEqual(
        of(parentAtCrash, 'tool/start').map((e) => e.actionId),
        ['s1.a1'],
      )
      assert.equal(of(parentAtCrash, 'tool/end').length, 0)
      assert.deepEqual(await ledgerProblems(lab, parentAtCrash), [])
      assert.deepEqual(await ledgerProblems(lab, childAtCrash), [])
      assert.deepEqual((await lab.db().list({ limit: 100 })).map((r) => r.runId).sort(), [parentId, childId].sort())

      // A new process resumes the parent (only the parent): spawn_agent runs again under its key and finds the child.
      await lab.leaseExpiry()
      const resumed = await lab.run(['resume', parentId, '--json'])
      assert.equal(resumed.code, 0, resumed.stderr)

      assert.deepEqual((await lab.db().list({ limit: 100 })).map((r) => r.runId).sort(), [parentId, childId].sort(), 'no second child run')
      const child = await lab.events(childId)
      assert.equal(of(child, 'run/start').length, 1)
      assert.equal(of(child, 'run/recovered').length, 1, 'the child was taken over, not started again')
      const childEnd = child.at(-1)!
      assert.ok(
        childEnd.type === 'run/end' && childEnd.data.status === 'COMPLETED' && childEnd.data.answer === childAnswer,
        JSON.stringify(childEnd),
      )
      assert.deepEqual(logProblems(child), [])
      assert.deepEqual(await ledgerProblems(lab, child, { settled: true }), [])
      // The child's effects happened once each, under the child's keys.
      assert.deepEqual(effectsPerKey(outbox(lab)), { [`${childId}/s1.a1`]: 1, [`${childId}/s1.a2`]: 1 })
      assert.deepEqual(
        outbox(lab)
          .map((e) => e.args.account)
          .sort(),
        ['acme', 'globex'],
      )

      const parent = await lab.events(parentId)
      const end = parent.at(-1)!
      assert.ok(end.type === 'run/end' && end.data.status === 'COMPLETED', JSON.stringify(end))
      assert.equal(of(parent, 'run/recovered').length, 1)
      assert.deepEqual(
        of(parent, 'tool/start').map((e) => [e.actionId, e.data.tool, e.data.attempt, e.data.idempotencyKey]),
        [
          ['s1.a1', 'spawn_agent', 1, `${parentId}/s1.a1`],
          ['s1.a1', 'spawn_agent', 2, `${parentId}/s1.a1`],
        ],
      )
      const spawned = of(parent, 'tool/end', 's1.a1')
      assert.equal(spawned.length, 1)
      const output = spawned[0].data.output as { runId: string; status: string; answer?: string }
      assert.deepEqual([output.runId, output.status, output.answer], [childId, 'COMPLETED', childAnswer])
      assert.equal(spawned[0].data.observation, `helper (run ${childId}) answered: ${childAnswer}`)
      assert.equal(spawned[0].data.usage?.steps, 2, "the child's two steps, counted once")
      assert.deepEqual(logProblems(parent), [])
      assert.deepEqual(await ledgerProblems(lab, parent, { settled: true }), [])
    })
})
