import { resolve } from 'node:path'
import { chainKeyOf, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { SqliteStore } from './sqlite-store.ts'

export { SqliteStore } from './sqlite-store.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // An explicit path belongs to the preset (resolved against its folder); the default belongs to where
  // cordage was started, like .git to a working tree.
  const file = config.path ? resolve(ctx.baseDir, config.path) : resolve(process.cwd(), '.cordage', 'cordage.db')
  const store = new SqliteStore(file, { ...config, chainKey: chainKeyOf(config.chainKeyEnv, 'store-sqlite') })
  ctx.set('store', store)
  ctx.on('dispose', () => store.close())
})
