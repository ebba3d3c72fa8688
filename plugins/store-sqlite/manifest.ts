import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  path?: string
  synchronous: 'full' | 'normal'
  snapshotEvery: number
  busyTimeoutMs: number
}

export default {
  name: 'store-sqlite',
  version: '1.2.0',
  description: 'Runs, the side-effect ledger and leases in an embedded SQLite database (better-sqlite3). The default store.',
  provides: { store: '2.2.0' },
  config: Schema.object({
    path: Schema.string().description('Database file. Relative paths are resolved against the preset\'s folder. Default: .cordage/cordage.db in the working directory.'),
    synchronous: Schema.union(['full', 'normal']).default('full').description('full: every commit reaches the disk before the append returns (survives power loss); normal: survives a process crash only.'),
    snapshotEvery: Schema.natural().min(1).default(500).description('Keep a snapshot of run state every this many events, so loading a long run reads the snapshot and the tail.'),
    busyTimeoutMs: Schema.natural().default(5000).description('How long a writer waits for another process to finish its transaction.'),
  }),
} satisfies Manifest
