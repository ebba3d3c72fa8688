import pg from 'pg'
import { z } from 'zod'
import { definePlugin, defineTool } from 'cordage'
import manifest, { type Config } from './manifest.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Its own connection, apart from the store's pool: the effect is a system the kernel does not own.
  const pool = new pg.Pool({ connectionString: config.url, max: 1 })
  pool.on('error', () => {})
  ctx.on('dispose', () => pool.end())

  ctx.tools.register(
    defineTool({
      name: 'record_order',
      description: 'Record an order in the order book.',
      input: z.object({ order: z.string() }),
      sideEffect: 'external',
      // The order book does not deduplicate: the kernel alone must keep the call to one per action.
      idempotent: false,
      run: async ({ order }, io) => {
        const row = await pool.query<{ id: string }>(
          `INSERT INTO ${config.table} (key, run_id, order_ref, pid, token) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
          [io.idempotencyKey, io.runId, order, process.pid, io.fencingToken ?? null],
        )
        return { output: { order, id: row.rows[0].id }, receipt: row.rows[0].id }
      },
    }),
  )
})
