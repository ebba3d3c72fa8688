import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { CitationVerifier } from './evidence.ts'

export { CitationVerifier } from './evidence.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  try {
    new RegExp(config.pattern)
  } catch (error) {
    throw new CordageError('plugin_config_invalid', `verifier-basic: pattern is not a valid regular expression: ${(error as Error).message}`)
  }
  ctx.set('verifier', new CitationVerifier(config))
})
