import { definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'

const Email = /[\w.+-]+@[\w-]+\.[\w.]+/g

export default definePlugin<Config>(manifest, (ctx, config) => {
  // Before policy decides: a refund above the cap is refused, whatever the rules would say.
  ctx.on('tool/before-decide', ({ tool, args }) => {
    const amount = (args as { amount?: number }).amount ?? 0
    if (tool === 'issue_refund' && amount > config.maxRefund) return { refuse: `refunds above ${config.maxRefund} go to finance` }
  })
  // Before tool/end is recorded: no email address reaches the log or the model.
  ctx.on('tool/before-end', (result) => ({
    ...result,
    output: JSON.parse(JSON.stringify(result.output).replace(Email, '[email]')),
    observation: result.observation.replace(Email, '[email]'),
  }))
})
