/**
 * One measurement's world: a fresh PostgreSQL schema (the runs of one worker count never mix with
 * another's), the order book's table in a schema beside it, and a preset whose agent uses both.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import pg from 'pg'
import { stringify } from 'yaml'
import { uncounted } from './statements.ts'

export interface Shape {
  /** The scripted model's wait before each answer: the time a real model takes, during which a worker waits. */
  modelDelayMs: number
  leaseTtlMs: number
  pollMs: number
}

export interface World {
  schema: string
  /** schema.table of the order book: the write tool's own record. */
  orders: string
  /** Tagged with the schema, so pg_stat_activity tells this measurement's connections apart. */
  url: string
  /** The workers' preset. */
  presetFile: string
  /** The same agent for the process that submits, on connections named apart from the workers'. */
  submitPreset: string
  /** The bench's own connection (not counted): bookkeeping and proofs. */
  db: pg.Client
  close(): Promise<void>
}

export const Agent = 'orders'

export async function openWorld(baseUrl: string, workers: number, shape: Shape): Promise<World> {
  const schema = `scale_${process.pid}_w${workers}`
  const url = withAppName(baseUrl, schema)
  const db = uncounted(new pg.Client({ connectionString: baseUrl }))
  await db.connect()
  // The order book in a schema of its own: store-postgres refuses a schema holding tables not its own.
  const book = `${schema}_book`
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${book} CASCADE; CREATE SCHEMA ${book}`)
  // No unique key: a duplicated effect must show up as a second row, not as an error.
  await db.query(
    `CREATE TABLE ${book}.orders (id BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, run_id TEXT NOT NULL, order_ref TEXT NOT NULL, pid INTEGER NOT NULL, token INTEGER)`,
  )
  const dir = mkdtempSync(join(tmpdir(), 'cordage-scale-'))
  const presetFile = join(dir, 'worker.yml')
  const submitPreset = join(dir, 'submit.yml')
  writeFileSync(presetFile, stringify(preset(url, schema, shape)))
  writeFileSync(submitPreset, stringify(preset(withAppName(baseUrl, `${schema}_submit`), schema, shape)))
  return {
    schema,
    orders: `${book}.orders`,
    url,
    presetFile,
    submitPreset,
    db,
    async close() {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${book} CASCADE`).catch(() => {})
      await db.end()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function preset(url: string, schema: string, shape: Shape) {
  return {
    cordage: 1,
    agents: {
      [Agent]: {
        task: 'record the order',
        budgets: { maxSteps: 5 },
        durability: { leaseTtlMs: shape.leaseTtlMs },
        model: {
          plugin: 'model-scripted',
          config: { delayMs: shape.modelDelayMs, script: [{ tool: 'record_order', args: { order: 'o-1' } }, { final: 'recorded' }] },
        },
        plugins: [
          { plugin: 'store-postgres', config: { url, schema } },
          'tools-registry',
          'context-basic',
          {
            plugin: 'policy-rules',
            config: { default: 'deny', rules: [{ id: 'orders', verdict: 'allow', match: { tool: 'record_order' } }] },
          },
          { plugin: 'verifier-basic', config: { minCount: 0 } },
          {
            path: resolve(import.meta.dirname, 'order-book'),
            config: { url: withAppName(url, `${schema}_book`), table: `${schema}_book.orders` },
          },
        ],
      },
    },
  }
}

function withAppName(url: string, name: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('application_name', name)
  return parsed.toString()
}
