/**
 * The `progress` service: runs the detectors in a fixed order and turns the first finding into a
 * response: the detector's configured one, or its `then` once it has intervened before.
 */
import type { ProgressCheck, ProgressService, ProgressVerdict } from 'cordage'
import { oscillating, repeated, stagnant, type Finding } from './detectors.ts'
import { attemptsSince, interventionsIn, type Intervention } from './history.ts'
import type { Config, DetectorConfig, Response } from './manifest.ts'

export class LoopGuard implements ProgressService {
  constructor(private readonly config: Config) {}

  check({ state, slice }: ProgressCheck): ProgressVerdict {
    const { repeat, oscillation, stagnation } = this.config
    // Its past decisions, in the slice its verdicts keep them in (the kernel hands it back).
    const past = interventionsIn(slice)
    const checks: [string, DetectorConfig, () => Finding | undefined][] = [
      ['repeat', repeat, () => repeated(attemptsSince(state, past, 'repeat'), repeat.times)],
      ['oscillation', oscillation, () => oscillating(attemptsSince(state, past, 'oscillation'), oscillation.cycles)],
      ['stagnation', stagnation, () => stagnant(state, attemptsSince(state, past, 'stagnation'), stagnation.steps)],
    ]
    for (const [detector, config, find] of checks) {
      if (!config.enabled) continue
      const finding = find()
      if (!finding) continue
      const response = past.some((i) => i.detector === detector) ? config.then : config.response
      const kept: Intervention = { detector, response, afterStep: state.steps }
      return { ...verdict(response, detector, finding), state: { push: { interventions: [kept] } } }
    }
    return { kind: 'continue' }
  }
}

function verdict(response: Response, detector: string, { reason, thresholds }: Finding): ProgressVerdict {
  if (response === 'feedback') {
    return {
      kind: 'feedback',
      detector,
      reason,
      thresholds,
      text: `You are not making progress: ${reason}. Doing the same again will not help. Step back, say what you have learned, and try a different approach, or give your best final answer.`,
    }
  }
  if (response === 'ask')
    return { kind: 'ask', detector, reason, thresholds, question: `The agent seems stuck: ${reason}. How should it go on?` }
  return { kind: 'stop', detector, reason, thresholds }
}
