import { z } from 'zod'
import { CordageError, defineTool } from 'cordage'
import type { Config } from './manifest.ts'

/** Refunds issued, by idempotency key: the "payment system" this example talks to. */
export type Ledger = Map<string, { orderId: string; amount: number; refundId: string }>

export function checkOrder(orders: Config['orders']) {
  return defineTool({
    name: 'check_order',
    description: 'Look up an order: the amount paid and whether it arrived damaged.',
    input: z.object({ orderId: z.string().regex(/^O-\d+$/, 'order ids look like O-123') }),
    sideEffect: 'none',
    run: ({ orderId }) => {
      const order = orders[orderId]
      if (!order) throw new CordageError('tool_failed', `no order ${orderId}`)
      return { output: { orderId, ...order } }
    },
  })
}

export function issueRefund(orders: Config['orders'], ledger: Ledger) {
  return defineTool({
    name: 'issue_refund',
    description: 'Refund an order, in full or in part.',
    input: z.object({ orderId: z.string(), amount: z.number().positive() }),
    sideEffect: 'external',
    idempotent: true,
    needsApproval: true,
    // What the refund would do, without doing it: shown to whoever approves it, and to a model that asks for a dry run.
    preview: ({ orderId, amount }) => {
      const order = orders[orderId]
      if (!order) throw new CordageError('tool_failed', `no order ${orderId}`)
      return {
        summary: `refund ${amount} of the ${order.amount} paid for ${orderId}`,
        amount: { value: amount, currency: 'EUR' },
        record: { orderId, amount },
      }
    },
    run: ({ orderId, amount }, io) => {
      const order = orders[orderId]
      if (!order) throw new CordageError('tool_failed', `no order ${orderId}`)
      if (amount > order.amount) throw new CordageError('tool_failed', `cannot refund ${amount}, the order was ${order.amount}`)
      // The payment system deduplicates by the key the kernel hands us: a retry never pays twice.
      const existing = ledger.get(io.idempotencyKey)
      if (existing) return { output: existing, receipt: existing.refundId }
      const refund = { orderId, amount, refundId: `RF-${ledger.size + 1}` }
      ledger.set(io.idempotencyKey, refund)
      return { output: refund, receipt: refund.refundId, observation: `Refunded ${amount} on ${orderId}: ${refund.refundId}` }
    },
  })
}
