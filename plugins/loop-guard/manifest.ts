import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export type Response = 'feedback' | 'ask' | 'stop'

export interface DetectorConfig {
  /** Off when false. */
  enabled: boolean
  /** What to do the first time it fires. */
  response: Response
  /** What to do when it fires again after an intervention of its own. */
  then: Response
}

export interface Config {
  repeat: DetectorConfig & { times: number }
  oscillation: DetectorConfig & { cycles: number }
  stagnation: DetectorConfig & { steps: number }
}

const response = Schema.union(['feedback', 'ask', 'stop'])
const detector = <T extends Record<string, Schema<any>>>(extra: T, defaults: Record<string, unknown>, what: string) =>
  Schema.object({
    enabled: Schema.boolean().default(true).description(`Watch for ${what}.`),
    response: response
      .default('feedback')
      .description(
        'The first time it fires: feedback (tell the model to re-plan), ask (pause for the user) or stop (end STOPPED no_progress).',
      ),
    then: response.default('stop').description('When it fires again after an intervention of its own.'),
    ...extra,
  }).default(defaults as never)

export default {
  name: 'loop-guard',
  version: '1.1.0',
  description:
    'Loop control: notices a run that repeats a call, oscillates between two, or stops finding anything new, and has the model re-plan, asks the user, or stops it.',
  provides: { progress: '2.0.0' },
  config: Schema.object({
    repeat: detector(
      { times: Schema.natural().min(2).default(3).description('The same tool, arguments and outcome this many times.') },
      { enabled: true, response: 'feedback', then: 'stop', times: 3 },
      'the same call with the same outcome, again and again',
    ),
    oscillation: detector(
      { cycles: Schema.natural().min(2).default(2).description('A-B-A-B: this many rounds of two calls taking turns.') },
      { enabled: true, response: 'feedback', then: 'stop', cycles: 2 },
      'two calls taking turns',
    ),
    stagnation: detector(
      { steps: Schema.natural().min(2).default(5).description('Steps in a row whose tools returned nothing not seen before.') },
      { enabled: true, response: 'ask', then: 'stop', steps: 5 },
      'steps that find nothing new',
    ),
  }),
} satisfies Manifest
