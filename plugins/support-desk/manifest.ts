import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  outbox?: string
  slowLookupDelayMs: number
  slowLookupTimeoutMs: number
}

export default {
  name: 'support-desk',
  version: '1.1.0',
  description: 'Demo domain plugin: look up support policy (cites sources), record follow-ups (approval, idempotent), and a slow lookup.',
  requires: { tools: '^1.0.0' },
  config: Schema.object({
    outbox: Schema.string().description('JSON-lines file where follow-ups are written (relative to the preset). In memory when unset.'),
    slowLookupDelayMs: Schema.natural().default(3000).description('How long slow_lookup takes.'),
    slowLookupTimeoutMs: Schema.natural().min(1).default(1000).description('The time limit slow_lookup declares.'),
  }),
} satisfies Manifest
