import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { AnthropicMessagesModel } from './anthropic-model.ts'

export { AnthropicMessagesModel } from './anthropic-model.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('model', new AnthropicMessagesModel(config))
})
