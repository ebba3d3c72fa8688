import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  path?: string
  synchronous: 'full' | 'normal'
  snapshotEvery: number
  busyTimeoutMs: number
  chainKeyEnv: string
}

export default {
  name: 'store-sqlite',
  version: '1.5.0',
  description: 'Runs, the side-effect ledger and leases in an embedded SQLite database (better-sqlite3). The default store.',
  provides: { store: '2.3.0' },
  // The chain key is a secret: runs scrub its value from everything they record.
  secrets: ['chainKeyEnv'],
  config: Schema.object({
    path: Schema.string().description(
      "Database file. Relative paths are resolved against the preset's folder. Default: .cordage/cordage.db in the working directory.",
    ),
    synchronous: Schema.union(['full', 'normal'])
      .default('full')
      .description(
        'full: every commit reaches the disk before the append returns (survives power loss); normal: survives a process crash only.',
      ),
    snapshotEvery: Schema.natural()
      .min(1)
      .default(500)
      .description('Keep a snapshot of run state every this many events, so loading a long run reads the snapshot and the tail.'),
    busyTimeoutMs: Schema.natural().default(5000).description('How long a writer waits for another process to finish its transaction.'),
    chainKeyEnv: Schema.string()
      .pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .default('CORDAGE_LOG_KEY')
      .description(
        'Environment variable holding the key of the hash chain (HMAC-SHA-256, 16 characters or more). Unset: the chain is plain SHA-256.',
      ),
  }),
} satisfies Manifest
