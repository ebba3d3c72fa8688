import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  url?: string
  schema: string
  poolSize: number
  snapshotEvery: number
  chainKeyEnv: string
}

export default {
  name: 'store-postgres',
  version: '1.5.0',
  description: 'Runs, the side-effect ledger and leases in PostgreSQL, for many workers on many machines.',
  provides: { store: '2.3.0' },
  // The chain key is a secret: runs scrub its value from everything they record.
  secrets: ['chainKeyEnv'],
  config: Schema.object({
    url: Schema.string().description(
      'Connection URL, e.g. postgres://user:password@host:5432/db. Default: the CORDAGE_PG_URL environment variable, else the standard PG* variables.',
    ),
    schema: Schema.string()
      .pattern(/^[a-z_][a-z0-9_]{0,62}$/)
      .default('cordage')
      .description('PostgreSQL schema that holds the tables (created when missing).'),
    poolSize: Schema.natural().min(1).default(10).description('Connections in the pool.'),
    snapshotEvery: Schema.natural().min(1).default(500).description('Keep a snapshot of run state every this many events.'),
    chainKeyEnv: Schema.string()
      .pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .default('CORDAGE_LOG_KEY')
      .description(
        'Environment variable holding the key of the hash chain (HMAC-SHA-256, 16 characters or more). Unset: the chain is plain SHA-256.',
      ),
  }),
} satisfies Manifest
