import { definePlugin, readService, type StoreService } from 'cordage'
import { coveringGrant } from './cover.ts'
import manifest from './manifest.ts'

export { coveringGrant } from './cover.ts'

export default definePlugin(manifest, (ctx) => {
  // Only names the grant: the kernel checks it again, approves the call and records by whom.
  ctx.on('tool/after-decide', async (call, { agent, state }) => {
    if (call.grantId !== undefined) return undefined
    const store = readService<StoreService>(ctx, 'store')?.value
    const grant = await coveringGrant(call, agent, state.grants, store?.grants && ((query) => store.grants!(query)))
    return grant ? { ...call, grantId: grant.id } : undefined
  })
})
