import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { MemoryStore } from './memory-store.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.set('store', new MemoryStore(config.maxEventsPerRun))
})
