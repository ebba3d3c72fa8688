import { calibrated, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { OpenAIChatModel } from './openai-model.ts'
import { chosenEncoding, tokenizer } from './tokens.ts'

export { OpenAIChatModel } from './openai-model.ts'
export { encodingOf, tokenizer } from './tokens.ts'

export default definePlugin<Config>(manifest, async (ctx, config) => {
  const model = new OpenAIChatModel(config)
  // With the model's tokenizer, context plugins count as the API does; without it, the estimate learns
  // from the input tokens the server reports.
  const encoding = chosenEncoding(config.tokenizer, config.model)
  if (!encoding) return void ctx.set('model', calibrated(model))
  const tokens = await tokenizer(encoding)
  ctx.set('model', { tokens, respond: (request) => model.respond(request) })
})
