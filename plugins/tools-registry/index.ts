import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { ToolRegistry } from './registry.ts'

export { ToolRegistry } from './registry.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.plugin(ToolRegistry, config)
})
