import { definePlugin, CordageError, readService, type StoreService } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { readArtifactTool } from './read-artifact.ts'

export { readArtifactTool, type ReadResult } from './read-artifact.ts'
export { charEdges, decode } from './chunk.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  if (config.defaultLength > config.maxLength)
    throw new CordageError(
      'plugin_config_invalid',
      `artifacts: defaultLength (${config.defaultLength}) must not be more than maxLength (${config.maxLength})`,
    )
  // The store is read at each call: a swapped store is the one asked.
  ctx.tools.register(readArtifactTool(() => readService<StoreService>(ctx, 'store')?.value, config))
})
