import { definePlugin } from 'cordage'
import { DefaultContext } from './context.ts'
import manifest, { type Config } from './manifest.ts'
import { loadSources } from './sources.ts'

export { DefaultContext, OmittedRef, type ContextOptions } from './context.ts'
export { estimateTokens, messageTokens } from './tokens.ts'
export { loadSources, paragraphs, type SourceItem } from './sources.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Sources are read once, here: a missing file fails the plugin's start, not a run's step.
  const context = new DefaultContext(config, loadSources(config.sources, ctx.baseDir))
  ctx.set('context', context)
  ctx.on('run/end', (event) => context.forget(event.runId))
})
