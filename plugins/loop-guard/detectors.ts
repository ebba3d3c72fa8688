/**
 * Three ways a run stops moving, each a pure function of its recent attempts: the same call with the
 * same outcome again and again; two calls taking turns; steps whose tools find nothing new.
 */
import type { RunState } from 'cordage'
import { evidenceBefore, type Attempt } from './history.ts'

export interface Finding {
  reason: string
  thresholds: Record<string, number>
}

/** The same tool, arguments and outcome `times` times (not necessarily in a row). */
export function repeated(attempts: Attempt[], times: number): Finding | undefined {
  const counts = new Map<string, number>()
  for (const a of attempts) {
    const n = (counts.get(a.fingerprint) ?? 0) + 1
    counts.set(a.fingerprint, n)
    if (n >= times) {
      const [call, outcome] = a.fingerprint.split('→')
      return {
        reason: `${call.split(':')[0]} was called ${n} times with the same arguments and got the same ${outcome.startsWith('error') ? `error (${outcome.slice(6)})` : 'result'}`,
        thresholds: { times },
      }
    }
  }
  return undefined
}

/** A-B-A-B...: the last `2 × cycles` calls alternate between two different calls. */
export function oscillating(attempts: Attempt[], cycles: number): Finding | undefined {
  const window = attempts.slice(-2 * cycles)
  if (window.length < 2 * cycles) return undefined
  const [a, b] = [window[0].call, window[1].call]
  if (a === b) return undefined
  if (!window.every((w, i) => w.call === (i % 2 === 0 ? a : b))) return undefined
  return { reason: `${a.split(':')[0]} and ${b.split(':')[0]} took turns ${cycles} times with the same arguments`, thresholds: { cycles } }
}

/** The last `steps` steps with tool calls found no evidence that was not already known. */
export function stagnant(state: Readonly<RunState>, attempts: Attempt[], steps: number): Finding | undefined {
  const stepNumbers = [...new Set(attempts.map((a) => a.step))]
  if (stepNumbers.length < steps) return undefined
  const recent = stepNumbers.slice(-steps)
  const seen = evidenceBefore(state, recent[0])
  for (const step of recent) {
    for (const a of attempts.filter((x) => x.step === step)) {
      if (a.evidence && !seen.has(a.evidence)) return undefined
      if (a.evidence) seen.add(a.evidence)
    }
  }
  return { reason: `${steps} steps in a row found nothing that was not known before`, thresholds: { steps } }
}
