import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

/** When a run's workspace is removed: never, or when the run ends (always, or only when it completed). */
export type Keep = 'always' | 'failed' | 'never'

export interface Config {
  root?: string
  /** The root is a private folder of the operating system's temporary folder (see temp-root.ts). */
  temporary: boolean
  template?: string
  keep: Keep
}

export default {
  name: 'workspace-local',
  version: '1.0.0',
  description: 'One working directory per run under a local root, filled from a template folder on first use.',
  provides: { workspace: '1.0.0' },
  config: Schema.object({
    root: Schema.string().description(
      'Folder that holds one directory per run (relative to the preset). Default: .cordage/workspaces in the working directory, beside the default SQLite store.',
    ),
    temporary: Schema.boolean()
      .default(false)
      .description(
        "Put the workspaces in the operating system's temporary folder (<tmpdir>/cordage-workspaces-<user id>, private to the user) instead of root. Not with root.",
      ),
    template: Schema.string().description('Folder copied into each new workspace (relative to the preset). Empty workspace when unset.'),
    keep: Schema.union(['always', 'failed', 'never'])
      .default('always')
      .description(
        'always: never remove a workspace; failed: remove it when its run completes, keep it otherwise; never: remove it when its run ends.',
      ),
  }),
} satisfies Manifest
