import { definePlugin } from 'cordage'
import { withDryRuns } from './dry-run-view.ts'
import manifest, { type Config } from './manifest.ts'
import { runPreview } from './run-preview.ts'

export { dryRunView, offersDryRun } from './dry-run-view.ts'
export { runPreview } from './run-preview.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  // What the model is shown: `dry_run` on the tools with a preview (the kernel refuses it on the others).
  if (config.dryRuns) ctx.on('tools/before-show', ({ views }) => ({ views: withDryRuns(views, (name) => ctx.tools.get(name)) }))
  // Before an approval request is recorded, and in place of a dry run's call: the tool's own preview.
  ctx.on('tool/preview', async (call, info) => {
    if (call.preview) return undefined
    const tool = ctx.tools.get(call.tool)
    const preview = tool ? await runPreview(tool, call.args, call.actionId, info, config.limitMs) : { status: 'unavailable' as const }
    return { ...call, preview }
  })
})
