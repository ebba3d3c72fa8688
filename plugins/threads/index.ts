import { CordageError, definePlugin, readService, StartRefusalCodes, type StoreService } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { turnSpending } from './spending.ts'
import { nextTurn } from './turn.ts'

export { historyOf } from './history.ts'

/**
 * Handles `run/before-start` (core/contracts/phases.ts): a run asked to join a thread gets its link, the
 * history of the turns before it and the claim of its turn, or a refusal that the kernel throws with
 * its code. A run that asked for no thread, or that an earlier handler linked, is left as it is.
 */
export default definePlugin<Config>(manifest, (ctx, config) => {
  ctx.on('run/before-start', async (draft, info) => {
    if (draft.threadAsked === undefined || draft.thread) return undefined
    try {
      const store = readService<StoreService>(ctx, 'store')?.value
      const turn = await nextTurn(draft, info.agent, { store, spent: (run) => turnSpending(ctx, run) }, config)
      return { ...draft, ...turn }
    } catch (error) {
      if (CordageError.is(error) && StartRefusalCodes.includes(error.code))
        return { ...draft, refused: { code: error.code, message: error.message } }
      throw error
    }
  })
})
