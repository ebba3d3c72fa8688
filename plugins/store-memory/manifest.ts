import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  /** Refuse appends beyond this many events per run (a guard against runaway loops in tests). */
  maxEventsPerRun: number
}

export default {
  name: 'store-memory',
  version: '2.3.0',
  description: 'Keeps run events in process memory. Fast, and gone when the process exits.',
  provides: { store: '2.3.0' },
  config: Schema.object({
    maxEventsPerRun: Schema.natural().default(1_000_000).description('Refuse appends beyond this many events per run.'),
  }),
} satisfies Manifest
