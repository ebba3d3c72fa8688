import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  defaultLength: number
  maxLength: number
}

export default {
  name: 'artifacts',
  version: '1.0.0',
  description:
    "The read_artifact tool: the model pages through a large result its run stored as an artifact (never another run's, never an audit-only one).",
  requires: { tools: '^1.0.0' },
  // Any store: one without artifacts (before 2.3.0) makes each call fail with tool_unavailable.
  optional: { store: '^2.0.0' },
  config: Schema.object({
    defaultLength: Schema.natural()
      .min(256)
      .max(65_536)
      .default(8192)
      .description('Bytes a read returns when the model does not say how many.'),
    maxLength: Schema.natural().min(256).max(65_536).default(65_536).description('The most bytes one read may return.'),
  }),
} satisfies Manifest
