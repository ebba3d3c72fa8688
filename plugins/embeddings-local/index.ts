import { definePlugin } from 'cordage'
import { LocalEmbeddings } from './local-embeddings.ts'
import manifest, { type Config } from './manifest.ts'
import { Dimensions, ModelId, sentenceEncoder } from './use-model.ts'

export { LocalEmbeddings, type SentenceModel } from './local-embeddings.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('embeddings', new LocalEmbeddings(ModelId, Dimensions, sentenceEncoder, config))
})
