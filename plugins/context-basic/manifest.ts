import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  system: string
  cachedRuns: number
}

export default {
  name: 'context-basic',
  version: '1.1.0',
  description: 'Projects the run transcript into messages: system prompt, user input, model turns, observations.',
  provides: { context: '1.3.0' },
  config: Schema.object({
    system: Schema.string()
      .default('You are a careful assistant. Use the tools to find facts, and cite the source of each fact you state.')
      .description('The system prompt.'),
    cachedRuns: Schema.natural().min(1).default(256).description('Runs whose projection is kept for incremental assembly.'),
  }),
} satisfies Manifest
