import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  defaultLength: number
  maxLength: number
  artifactAboveBytes: number
  keepRedacted: boolean
  headChars: number
}

export default {
  name: 'artifacts',
  version: '1.1.0',
  description:
    "Keeps a large result apart as an artifact (and a redacted one's raw form, audit-only, when asked), and the read_artifact tool that pages through one of the calling run's artifacts (never another run's, never an audit-only one).",
  requires: { tools: '^1.0.0' },
  // Any store: one without artifacts (before 2.3.0) keeps every result inline, and read_artifact fails with tool_unavailable.
  optional: { store: '^2.0.0' },
  config: Schema.object({
    defaultLength: Schema.natural()
      .min(256)
      .max(65_536)
      .default(8192)
      .description('Bytes a read returns when the model does not say how many.'),
    maxLength: Schema.natural().min(256).max(65_536).default(65_536).description('The most bytes one read may return.'),
    artifactAboveBytes: Schema.natural()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(256 * 1024)
      .description(
        "A result larger than this many bytes is kept apart as an artifact (a tool's own artifactAboveBytes wins). The agent's artifactAboveBytes sets it too.",
      ),
    keepRedacted: Schema.boolean()
      .default(false)
      .description("Keep the raw form of a result the guardrail redacted, audit-only. The agent's audit.keepRedacted sets it too."),
    headChars: Schema.natural()
      .min(100)
      .max(65_536)
      .default(4000)
      .description('Characters of a large result (or of the tool’s own observation of it) the model reads.'),
  }),
} satisfies Manifest
