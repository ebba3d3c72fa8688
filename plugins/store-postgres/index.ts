import { chainKeyOf, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { PostgresStore } from './postgres-store.ts'

export { PostgresStore } from './postgres-store.ts'

export default definePlugin<Config>(manifest, async (ctx, config) => {
  const store = new PostgresStore(config.url ?? process.env.CORDAGE_PG_URL, config.schema, config.poolSize, config.snapshotEvery, {
    chainKey: chainKeyOf(config.chainKeyEnv, 'store-postgres'),
  })
  // Connect and migrate before the store is offered: a wrong URL fails the plugin's start, with the reason.
  try {
    await store.start()
  } catch (error) {
    await store.close()
    throw new Error(`store-postgres cannot use schema ${config.schema}: ${(error as Error).message}`, { cause: error })
  }
  ctx.set('store', store)
  ctx.on('dispose', () => store.close())
})
