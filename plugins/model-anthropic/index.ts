import { calibrated, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { AnthropicMessagesModel } from './anthropic-model.ts'

export { AnthropicMessagesModel } from './anthropic-model.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Anthropic publishes no tokenizer: context plugins count with the kit's estimate, scaled by the
  // input tokens the API reports (core/kit/token-calibration.ts).
  ctx.set('model', calibrated(new AnthropicMessagesModel(config)))
})
