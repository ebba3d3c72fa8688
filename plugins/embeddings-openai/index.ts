import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { OpenAIEmbeddings } from './openai-embeddings.ts'

export { OpenAIEmbeddings } from './openai-embeddings.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('embeddings', new OpenAIEmbeddings(config))
})
