import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  include: string[]
  exclude: string[]
}

export default {
  name: 'tools-registry',
  version: '1.0.0',
  description: 'The tool registry; the visible set is every registered tool, narrowed by include/exclude patterns.',
  provides: { tools: '1.0.0' },
  config: Schema.object({
    include: Schema.array(String)
      .default(['*'])
      .description('Name patterns (`*` matches any run of characters) of tools the model may see.'),
    exclude: Schema.array(String).default([]).description('Name patterns of tools the model never sees, even if included.'),
  }),
} satisfies Manifest
