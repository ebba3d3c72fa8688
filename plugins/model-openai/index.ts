import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { OpenAIChatModel } from './openai-model.ts'

export { OpenAIChatModel } from './openai-model.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('model', new OpenAIChatModel(config))
})
