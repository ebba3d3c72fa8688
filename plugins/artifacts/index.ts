import { definePlugin, CordageError, readService, type StoreService } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { readArtifactTool } from './read-artifact.ts'
import { shapeResult } from './shape.ts'

export { readArtifactTool, type ReadResult } from './read-artifact.ts'
export { charEdges, decode } from './chunk.ts'
export { headOf, referenceLine, shapeResult, thresholdOf, type ShapeConfig } from './shape.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  if (config.defaultLength > config.maxLength)
    throw new CordageError(
      'plugin_config_invalid',
      `artifacts: defaultLength (${config.defaultLength}) must not be more than maxLength (${config.maxLength})`,
    )
  // The store is read at each call: a swapped store is the one asked.
  const store = () => readService<StoreService>(ctx, 'store')?.value
  ctx.tools.register(readArtifactTool(store, config))
  const noted = new Set<string>()
  const note = (why: string) => {
    if (noted.has(why)) return
    noted.add(why)
    ctx.logger('artifacts').warn(`this agent's store keeps no artifacts, so ${why}`)
  }
  // After the guardrail screened the result: what is kept apart, and what the model reads of it.
  ctx.on('tool/shape-result', (value) => shapeResult(value, config, typeof store()?.putArtifact === 'function', note))
})
