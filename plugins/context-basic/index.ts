import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { BasicContext } from './projection.ts'

export { BasicContext, estimateTokens } from './projection.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const context = new BasicContext(config.system, config.cachedRuns)
  ctx.set('context', context)
  ctx.on('run/end', (event) => context.forget(event.runId))
})
