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
  // Before the model reads its context: it is told the cap, so it does not propose what would be refused.
  ctx.on('step/before-model', ({ messages, tokens }) => ({
    messages: [{ role: 'system', text: `Refunds above ${config.maxRefund} go to finance.`, source: 0, ref: 'refund-rules' }, ...messages],
    tokens: tokens + 12,
  }))
})
