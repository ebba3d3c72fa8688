/**
 * The `progress` service: runs the detectors in a fixed order and turns the first finding into a
 * response: the detector's configured one, or its `then` once it has intervened before.
 */
import type { ProgressCheck, ProgressService, ProgressVerdict } from 'cordage'
import { oscillating, repeated, stagnant, type Finding } from './detectors.ts'
import { attemptsSince } from './history.ts'
import type { Config, DetectorConfig, Response } from './manifest.ts'

export class LoopGuard implements ProgressService {
  constructor(private readonly config: Config) {}

  check({ state }: ProgressCheck): ProgressVerdict {
    const { repeat, oscillation, stagnation } = this.config
    const checks: [string, DetectorConfig, () => Finding | undefined][] = [
      ['repeat', repeat, () => repeated(attemptsSince(state, 'repeat'), repeat.times)],
      ['oscillation', oscillation, () => oscillating(attemptsSince(state, 'oscillation'), oscillation.cycles)],
      ['stagnation', stagnation, () => stagnant(state, attemptsSince(state, 'stagnation'), stagnation.steps)],
    ]
    for (const [detector, config, find] of checks) {
      if (!config.enabled) continue
      const finding = find()
      if (!finding) continue
      const before = state.interventions.some((i) => i.detector === detector)
      return verdict(before ? config.then : config.response, detector, finding)
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
