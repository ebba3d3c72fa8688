import { definePlugin } from 'cordage'
import { BudgetMeter } from './meter.ts'
import manifest from './manifest.ts'

export { BudgetMeter } from './meter.ts'
export { available } from './available.ts'

export default definePlugin(manifest, (ctx) => {
  ctx.set('meter', new BudgetMeter())
})
