import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  /** The longest a preview may take, whatever the tool's own time limit. */
  limitMs: number
  /** Offer the model `dry_run` on the tools that declare a preview. */
  dryRuns: boolean
}

export default {
  name: 'previews',
  version: '1.0.0',
  description:
    "Previews before writes: runs a tool's preview (bounded in time) for the person asked to approve the call, and offers the model dry runs of the tools that have one.",
  requires: { tools: '^1.0.0' },
  config: Schema.object({
    limitMs: Schema.natural()
      .min(1)
      .max(300_000)
      .default(30_000)
      .description("The longest a preview may take (ms), whatever the tool's own timeoutMs; serviceTimeouts.phases bounds it too."),
    dryRuns: Schema.boolean().default(true).description('Offer `dry_run` to the model on every tool that declares a preview.'),
  }),
} satisfies Manifest
