import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { findLoan, renewLoan } from './tools.ts'
import { renewalVerifier } from './verifier.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.tools.register(findLoan(config.loans))
  ctx.tools.register(renewLoan(config.loans))
  ctx.set('verifier', renewalVerifier)
})
