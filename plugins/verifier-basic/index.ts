import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { CitationVerifier } from './evidence.ts'

export { CitationVerifier } from './evidence.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  let verifier: CitationVerifier
  try {
    verifier = new CitationVerifier(config)
  } catch (error) {
    // The schema refuses such a pattern first; this is for a config that did not come through it.
    throw new CordageError('plugin_config_invalid', `verifier-basic: pattern ${(error as Error).message}`)
  }
  ctx.set('verifier', verifier)
})
