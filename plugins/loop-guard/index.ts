import { definePlugin } from 'cordage'
import { LoopGuard } from './guard.ts'
import manifest, { type Config } from './manifest.ts'

export { LoopGuard } from './guard.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('progress', new LoopGuard(config))
})
