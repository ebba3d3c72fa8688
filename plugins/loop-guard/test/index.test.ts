import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sliceOf, type RunEvent } from 'cordage'
import { refundAnswer, supportDesk } from '../../../test/helpers.ts'

const lookup = (topic: string) => ({ tool: 'lookup_policy', args: { topic } })
const guard = (config: Record<string, unknown>) => ({ plugin: 'loop-guard', config })
const interventions = (events: RunEvent[]) => events.filter((e) => e.type === 'step/no-progress') as RunEvent<'step/no-progress'>[]

describe('loop-guard', () => {
  it('tells the model it repeats itself, then stops the run with no_progress when it goes on', async () => {
    const desk = await supportDesk({
      script: [{ ...lookup('refunds'), repeat: 7 }, { final: refundAnswer }],
      budgets: { maxSteps: 20 },
      plugins: [guard({})],
    })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'STOPPED')
      assert.equal(state.failureCode, 'no_progress')
      const events = await desk.events(state.runId)
      const [first, second] = interventions(events)
      assert.deepEqual([first.data.detector, first.data.response, first.data.thresholds], ['repeat', 'feedback', { times: 3 }])
      assert.match(first.data.reason, /lookup_policy was called 3 times with the same arguments and got the same result/)
      assert.equal(first.producer, 'loop-guard@1.1.0')
      assert.deepEqual([second.data.detector, second.data.response], ['repeat', 'stop'])
      // It escalated from its own slice of run state, each decision kept just before it was recorded.
      assert.deepEqual(sliceOf(state, 'loop-guard').interventions, [
        { detector: 'repeat', response: 'feedback', afterStep: 3 },
        { detector: 'repeat', response: 'stop', afterStep: 6 },
      ])
      for (const stalled of [first, second]) {
        const kept = events[stalled.seq - 2]
        assert.deepEqual([kept.type, kept.producer], ['slice/update', 'loop-guard@1.1.0'])
      }
      // Feedback after step 3, where the model sees it in step 4; the stop after step 6: no step 7.
      const steps = events.filter((e) => e.type === 'step/start').length
      assert.equal(steps, 6)
      const fourth = desk.model().requests[3].messages
      assert.match(fourth.at(-1)!.text, /You are not making progress/)
      assert.ok(!desk.model().requests[2].messages.some((m) => /not making progress/.test(m.text)))
    } finally {
      await desk.stop()
    }
  })

  it('asks the user when two calls take turns, with the thresholds on record', async () => {
    const script = [lookup('refunds'), lookup('shipping'), lookup('refunds'), lookup('shipping'), { final: refundAnswer }]
    const desk = await supportDesk({ script, plugins: [guard({ oscillation: { response: 'ask' } })] })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'WAITING_USER')
      const [found] = interventions(await desk.events(state.runId))
      assert.deepEqual([found.data.detector, found.data.response, found.data.thresholds], ['oscillation', 'ask', { cycles: 2 }])
      assert.match(state.waiting?.reason ?? '', /seems stuck: lookup_policy and lookup_policy took turns 2 times/)
      assert.equal(state.waiting?.code, 'no_progress')
      // The user's answer is a new situation: the run goes on, and the same history does not trip it again.
      const resumed = await (await desk.agent.resume(state.runId, { input: 'Just answer about refunds.' })).done
      assert.equal(resumed.status, 'COMPLETED', resumed.reason)
    } finally {
      await desk.stop()
    }
  })

  it('notices steps that find nothing new', async () => {
    const script = [
      lookup('refunds'),
      lookup('shipping'),
      lookup('refunds'),
      lookup('refunds'),
      lookup('shipping'),
      { final: refundAnswer },
    ]
    const desk = await supportDesk({
      script,
      plugins: [guard({ repeat: { enabled: false }, oscillation: { enabled: false }, stagnation: { steps: 3, response: 'stop' } })],
    })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'STOPPED')
      assert.equal(state.failureCode, 'no_progress')
      assert.match(state.reason ?? '', /stagnation: 3 steps in a row found nothing that was not known before/)
      assert.equal((await desk.events(state.runId)).filter((e) => e.type === 'step/start').length, 5)
    } finally {
      await desk.stop()
    }
  })

  it('leaves a run that makes progress alone', async () => {
    const desk = await supportDesk({
      script: [lookup('refunds'), lookup('shipping'), lookup('returns'), { final: refundAnswer }],
      plugins: [guard({ stagnation: { steps: 2 } })],
    })
    try {
      const state = await desk.agent.run()
      assert.equal(state.status, 'COMPLETED', state.reason)
      assert.equal(interventions(await desk.events(state.runId)).length, 0)
    } finally {
      await desk.stop()
    }
  })
})
