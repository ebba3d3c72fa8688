import { counterOf, definePlugin, readService, type ModelService } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { BasicContext } from './projection.ts'

export { BasicContext, estimateTokens } from './projection.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Read at each step: the model may be swapped, and its counter calibrated, while runs go on.
  const context = new BasicContext(config.system, config.cachedRuns, () => counterOf(readService<ModelService>(ctx, 'model')?.value))
  ctx.set('context', context)
  ctx.on('run/end', (event) => context.forget(event.runId))
})
