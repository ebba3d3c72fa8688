/**
 * The floor: a hand-written loop with the same script and the same no-op tool, and nothing else — no
 * record, no policy, no transcript. Both calls are awaited because every real harness awaits its model
 * and its tools; what is left is the cost of the loop itself.
 */
import type { Subject } from './measure.ts'

type Reply = { call: string } | { text: string }

async function model(step: number, steps: number): Promise<Reply> {
  return step < steps ? { call: 'noop' } : { text: 'done' }
}

async function noop(): Promise<string> {
  return 'ok'
}

export function bareSubject(): Subject {
  return {
    name: 'bare loop',
    async run(steps) {
      let calls = 0
      for (let step = 1; ; step++) {
        const reply = await model(step, steps)
        if ('text' in reply) {
          if (step !== steps || calls !== steps - 1) throw new Error(`bare loop: ${step} steps, ${calls} calls`)
          return
        }
        await noop()
        calls++
      }
    },
  }
}
