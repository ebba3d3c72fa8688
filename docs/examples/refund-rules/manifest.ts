import { Schema } from 'cordis'
import type { Manifest } from 'cordage'

export interface Config {
  maxRefund: number
}

export default {
  name: 'refund-rules',
  version: '0.1.0',
  description: 'Business rules on the returns desk: a refund cap the model is told and policy cannot overrule, and no email address in a result.',
  config: Schema.object({ maxRefund: Schema.number().min(0).default(100).description('Refunds above this go to finance.') }),
} satisfies Manifest
