import { resolve } from 'node:path'
import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { Outbox } from './outbox.ts'
import { lookupPolicy, recordFollowup, slowLookup } from './tools.ts'

export { Outbox } from './outbox.ts'
export { Knowledge } from './knowledge.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const outbox = new Outbox(config.outbox ? resolve(ctx.baseDir, config.outbox) : undefined)
  ctx.tools.register(lookupPolicy)
  ctx.tools.register(recordFollowup(outbox))
  ctx.tools.register(slowLookup(config.slowLookupDelayMs, config.slowLookupTimeoutMs))
})
