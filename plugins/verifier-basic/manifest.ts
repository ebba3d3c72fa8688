import { Schema } from 'cordis'
import { regexPattern, type Manifest } from 'cordage'

export interface Config {
  pattern: string
  minCount: number
  mustBeObserved: boolean
  repairable: boolean
}

export default {
  name: 'verifier-basic',
  version: '1.0.0',
  description: "Completion contract: the final answer must cite evidence matching a pattern, seen in this run's tool results.",
  provides: { verifier: '1.0.0' },
  config: Schema.object({
    pattern: regexPattern('pattern', '\\[source: ([^\\]]+)\\]').description(
      'Regular expression (RE2 syntax: no lookaround, no backreferences) for one citation; its first group is the cited reference.',
    ),
    minCount: Schema.natural().default(1).description('Citations the answer needs at least (0 accepts any answer).'),
    mustBeObserved: Schema.boolean().default(true).description('Each cited reference must appear in a successful tool result of the run.'),
    repairable: Schema.boolean()
      .default(true)
      .description("Tell the kernel the model may fix the answer (if the agent's maxRepairs allows)."),
  }),
} satisfies Manifest
