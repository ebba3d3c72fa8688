import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  url: string
  table: string
}

/**
 * The scale-out bench's write tool: `record_order` inserts one row into its own table. The table has no
 * unique key on purpose, so an effect made twice stays visible as two rows instead of being refused.
 */
export default {
  name: 'order-book',
  version: '1.0.0',
  requires: { tools: '^1.0.0' },
  config: Schema.object({
    url: Schema.string().required().description('PostgreSQL URL of the order book.'),
    table: Schema.string()
      .pattern(/^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/)
      .required()
      .description('schema.table the orders go to (the bench creates it).'),
  }),
} satisfies Manifest
