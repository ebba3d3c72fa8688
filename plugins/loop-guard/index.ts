import { definePlugin, pluginOf, sliceName } from 'cordage'
import { LoopGuard } from './guard.ts'
import manifest, { type Config } from './manifest.ts'

export { LoopGuard } from './guard.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Its history is kept in the slice the kernel records its verdicts' state under: its own name.
  ctx.set('progress', new LoopGuard(config, sliceName(pluginOf(ctx) ?? manifest.name)))
})
