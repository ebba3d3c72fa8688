/**
 * The run-state reducer (core/kernel/state.ts) on random legal histories (fast-check). Legal histories are
 * made the honest way: a real agent (the support desk preset) driven by a random script of model
 * answers (tool calls that pass, fail, need approval or do not exist, questions, answers with and
 * without a citation, transient model errors), with random approvals, rejections, answers to
 * questions and cancellations, under random step budgets. Then:
 * - replaying the stored events rebuilds exactly the state the live run had, at every pause and at
 *   the end;
 * - every prefix of a legal history replays;
 * - an event that changes the status along a transition the table does not allow is refused, at any
 *   point of the history.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { replay, Transitions, type RunEvent, type RunState, type RunStatus } from 'cordage'
import type { ScriptEntry } from '../../plugins/model-scripted/manifest.ts'
import { refundAnswer, supportDesk, type Harness } from '../helpers.ts'

let harness: Harness
before(async () => {
  harness = await supportDesk({ script: [{ final: refundAnswer }], budgets: { maxSteps: 6 }, plugins: ['grants'] })
})
after(async () => {
  await harness.stop()
})

const entry: fc.Arbitrary<ScriptEntry> = fc.oneof(
  fc.constantFrom('refunds', 'shipping', 'no-such-topic').map((topic) => ({ tool: 'lookup_policy', args: { topic } })),
  fc.nat({ max: 9 }).map((n) => ({ tool: 'record_followup', args: { ticketId: `T-${n}`, note: 'call back' } })),
  fc.constant<ScriptEntry>({
    calls: [
      { tool: 'lookup_policy', args: { topic: 'refunds' } },
      { tool: 'lookup_policy', args: { topic: 'shipping' } },
    ],
  }),
  fc.constant<ScriptEntry>({
    calls: [
      { tool: 'lookup_policy', args: { topic: 'refunds' } },
      { tool: 'record_followup', args: { ticketId: 'T-1', note: 'x' } },
    ],
  }),
  fc.constant({ tool: 'no_such_tool', args: {} }),
  fc.constant({ tool: 'lookup_policy', args: { wrong: 1 } }),
  fc.constant({ ask: 'Which order do you mean?' }),
  fc.constant({ final: refundAnswer }),
  fc.constant({ final: 'No citation here.' }),
  fc.constant({ final: refundAnswer, failFirst: { code: 'model_transient' as const, times: 1 } }),
)

/** What a person does when the run pauses. */
const Choices = ['approve', 'approve-run', 'reject', 'answer', 'cancel'] as const
type Choice = (typeof Choices)[number]

interface History {
  runId: string
  events: RunEvent[]
  /** The live state at each pause and at the end, with the number of events on record then. */
  checkpoints: { state: RunState; seq: number }[]
}

async function live(script: ScriptEntry[], choices: Choice[]): Promise<History> {
  const model = harness.model() as unknown as { entries: ScriptEntry[] }
  model.entries.splice(0, model.entries.length, ...script)
  const checkpoints: History['checkpoints'] = []
  let state = await harness.agent.run('help the customer')
  const runId = state.runId
  const snap = (s: RunState) => checkpoints.push({ state: structuredClone(s), seq: s.lastSeq })
  snap(state)
  for (let i = 0; state.status.startsWith('WAITING') && i < 12; i++) {
    const choice = choices[i % choices.length]
    if (choice === 'cancel') state = await harness.agent.cancel(runId, { by: 'ops' })
    else if (state.status === 'WAITING_APPROVAL') {
      const actionId = state.waiting!.actionId!
      const handle =
        choice === 'reject'
          ? await harness.agent.reject(runId, actionId, { by: 'bob' })
          : await harness.agent.approve(runId, actionId, { by: 'alice', scope: choice === 'approve-run' ? 'run' : 'once' })
      state = await handle.done
    } else if (state.status === 'WAITING_USER') {
      state = await (await harness.agent.resume(runId, { input: 'Order O-1', by: 'user' })).done
    } else break
    snap(state)
  }
  return { runId, events: await harness.events(runId), checkpoints }
}

const histories = fc.tuple(
  fc.array(entry, { minLength: 1, maxLength: 6 }),
  fc.array(fc.constantFrom(...Choices), { minLength: 1, maxLength: 4 }),
)

/** A status-changing event for seq `seq` of run `runId` that moves the run to `to`. */
function moveTo(runId: string, seq: number, from: RunStatus, to: RunStatus): RunEvent {
  const base = { seq, time: seq, runId, schema: 1, producer: 'kernel@test' }
  if (to === 'RUNNING' && from === 'CREATED')
    return {
      ...base,
      type: 'run/start',
      data: { agent: 'support', task: 't', plugins: {}, services: {}, budgets: { maxSteps: 1, maxRepairs: 0 } },
    } as RunEvent
  if (to === 'RUNNING') return { ...base, type: 'run/resumed', data: { from: from as 'SUSPENDED', by: 'x' } } as RunEvent
  if (to === 'CANCELLING') return { ...base, type: 'run/cancel-requested', data: { by: 'x', requestedAt: seq } } as RunEvent
  if (to === 'WAITING_APPROVAL' || to === 'WAITING_USER' || to === 'WAITING_RECONCILIATION' || to === 'SUSPENDED')
    return { ...base, type: 'run/paused', data: { status: to, reason: 'x' } } as RunEvent
  return { ...base, type: 'run/end', data: { status: to, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, steps: 0 } } as RunEvent
}

const AllStatuses = Object.keys(Transitions) as RunStatus[]

describe('the run-state reducer, on random legal histories', () => {
  it('replaying the stored events rebuilds exactly the live state, at every pause and at the end', async () => {
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(histories, async ([script, choices]) => {
        const { runId, events, checkpoints } = await live(script, choices)
        for (const { state, seq } of checkpoints) {
          assert.deepEqual(replay(runId, events.slice(0, seq)), state, `state at seq ${seq}`)
          seen.add(state.status)
        }
        for (let n = 0; n <= events.length; n++) replay(runId, events.slice(0, n))
      }),
      { numRuns: 60 },
    )
    // The histories reach the statuses that matter; if the desk changed so they no longer do, say so.
    for (const status of ['COMPLETED', 'WAITING_APPROVAL', 'WAITING_USER', 'CANCELLED', 'FAILED_VERIFICATION'])
      assert.ok(seen.has(status), `no history reached ${status}: ${[...seen].join(', ')}`)
  })

  it('refuses every status change the table does not allow, at any point of a legal history', async () => {
    let refused = 0
    await fc.assert(
      fc.asyncProperty(histories, fc.nat(), fc.nat(), async ([script, choices], cut, pick) => {
        const { runId, events } = await live(script, choices)
        const prefix = events.slice(0, cut % (events.length + 1))
        const from = replay(runId, prefix).status
        const illegal = AllStatuses.filter((to) => !Transitions[from].includes(to))
        const to = illegal[pick % illegal.length]
        const bad = moveTo(runId, prefix.length + 1, from, to)
        refused++
        assert.throws(() => replay(runId, [...prefix, bad]), { code: 'illegal_transition' }, `${from} → ${to} by ${bad.type}`)
      }),
      { numRuns: 60 },
    )
    assert.equal(refused, 60)
  })

  it('refuses every illegal transition from every status (all pairs)', () => {
    // Reach each status by a legal history of made-up events, then try every target it may not go to.
    const paths: Record<RunStatus, RunStatus[]> = {
      CREATED: [],
      RUNNING: ['RUNNING'],
      WAITING_APPROVAL: ['RUNNING', 'WAITING_APPROVAL'],
      WAITING_USER: ['RUNNING', 'WAITING_USER'],
      WAITING_RECONCILIATION: ['RUNNING', 'WAITING_RECONCILIATION'],
      SUSPENDED: ['RUNNING', 'SUSPENDED'],
      CANCELLING: ['RUNNING', 'CANCELLING'],
      COMPLETED: ['RUNNING', 'COMPLETED'],
      FAILED: ['RUNNING', 'FAILED'],
      FAILED_VERIFICATION: ['RUNNING', 'FAILED_VERIFICATION'],
      STOPPED: ['RUNNING', 'STOPPED'],
      CANCELLED: ['RUNNING', 'CANCELLED'],
    }
    let tried = 0
    for (const from of AllStatuses) {
      const events: RunEvent[] = []
      let at: RunStatus = 'CREATED'
      for (const to of paths[from]) {
        events.push(moveTo('r', events.length + 1, at, to))
        at = to
      }
      assert.equal(replay('r', events).status, from)
      for (const to of AllStatuses) {
        const next = moveTo('r', events.length + 1, from, to)
        if (Transitions[from].includes(to)) continue
        tried++
        assert.throws(() => replay('r', [...events, next]), { code: 'illegal_transition' }, `${from} → ${to}`)
      }
    }
    assert.ok(tried > 100)
  })
})
