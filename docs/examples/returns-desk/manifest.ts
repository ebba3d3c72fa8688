import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  /** Orders the desk knows, by id: amount paid, whether it arrived damaged, and the customer's email. */
  orders: Record<string, { amount: number; damaged: boolean; customer?: string }>
}

export default {
  name: 'returns-desk',
  version: '0.1.0',
  description: 'Refunds for damaged orders: look up an order, issue a refund, verify the answer names the refund.',
  requires: { tools: '^1.0.0' },
  provides: { verifier: '1.0.0' },
  config: Schema.object({
    orders: Schema.dict(Schema.object({
      amount: Schema.number().min(0).required(),
      damaged: Schema.boolean().default(false),
      customer: Schema.string().description("The customer's email address."),
    })).default({}).description('Orders by id.'),
  }),
} satisfies Manifest
