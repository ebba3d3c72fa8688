import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  count: number
  seed: number
}

/** The most filler tools one agent gets: enough for a tool-search evaluation, few enough to load in a second or so. */
export const MaxCount = 2000

export default {
  name: 'eval-filler-tools',
  version: '1.0.0',
  description:
    'For evaluations only: registers `count` read-only distractor tools with plausible business names, so tool choice and tool search face realistic competition.',
  requires: { tools: '^1.0.0' },
  config: Schema.object({
    count: Schema.natural().max(MaxCount).required().description(`How many distractor tools to register (0 to ${MaxCount}).`),
    seed: Schema.natural().default(1).description('Which names and descriptions: the same seed gives the same tools, in the same order.'),
  }),
} satisfies Manifest
