import { counterOf, definePlugin, readService, type ModelService } from 'cordage'
import { DefaultContext } from './context.ts'
import manifest, { type Config } from './manifest.ts'
import { loadSources } from './sources.ts'

export { DefaultContext, OmittedRef, type ContextOptions } from './context.ts'
export { estimateTokens, messageTokens } from './tokens.ts'
export { loadSources, paragraphs, type SourceItem } from './sources.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Sources are read once, here: a missing file fails the plugin's start, not a run's step.
  // The model is read at each step: it may be swapped, and its counter calibrated, while runs go on.
  const context = new DefaultContext(config, loadSources(config.sources, ctx.baseDir), () =>
    counterOf(readService<ModelService>(ctx, 'model')?.value),
  )
  ctx.set('context', context)
  ctx.on('run/end', (event) => context.forget(event.runId))
})
