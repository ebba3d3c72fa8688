import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { checkOrder, issueRefund, type Ledger } from './tools.ts'
import { refundVerifier } from './verifier.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const ledger: Ledger = new Map()
  ctx.tools.register(checkOrder(config.orders))
  ctx.tools.register(issueRefund(config.orders, ledger))
  ctx.set('verifier', refundVerifier)
})
