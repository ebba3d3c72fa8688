import { definePlugin, CordageError, readService, safeRegex, type ModelService, type StoreService } from 'cordage'
import { SummaryCompactor } from './compactor.ts'
import manifest, { type Config } from './manifest.ts'
import { recallTool } from './recall.ts'

export { SummaryCompactor, Strategy, StrategyVersion, SummaryRef, type SummaryOptions } from './compactor.ts'
export { recallTool, describe } from './recall.ts'
export { namedSeqs, uncovered } from './coverage.ts'
export { needsOf, type Need, type NeedKind } from './needs.ts'
export { extractiveSummary } from './extractive.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  if (config.reserveTokens >= config.windowTokens) {
    throw new CordageError(
      'plugin_config_invalid',
      `compaction-summary: reserveTokens (${config.reserveTokens}) must be less than windowTokens (${config.windowTokens})`,
    )
  }
  const compactor = new SummaryCompactor(
    {
      ...config,
      // The schema has checked that both compile for the linear-time engine: they run on text the model
      // and the tools control.
      patterns: { citation: safeRegex(config.citationPattern), commitment: safeRegex(config.commitmentPattern, 'i') },
    },
    () => readService<ModelService>(ctx, 'model')?.value,
  )
  ctx.set('compactor', compactor)
  // The tool is this plugin's: it leaves with the plugin on a swap or a stop.
  if (config.recall) ctx.tools.register(recallTool(() => readService<StoreService>(ctx, 'store')?.value, config.recallMaxChars))
  ctx.on('run/end', (event) => compactor.forget(event.runId))
})
