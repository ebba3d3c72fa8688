import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { handoffTool, spawnTool } from './tools.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const known = new Set(ctx.agents.list().map((a) => a.name))
  for (const [key, names] of [['agents', config.agents], ['handoffs', config.handoffs]] as const) {
    for (const name of names) {
      if (!known.has(name)) {
        throw new CordageError('plugin_config_invalid', `subagents: ${key} names "${name}", which is not another agent of this preset; agents: ${[...known].join(', ') || 'none'}`)
      }
    }
  }
  if (!config.agents.length && !config.handoffs.length) {
    throw new CordageError('plugin_config_invalid', 'subagents: name at least one agent in agents (for spawn_agent) or handoffs (for handoff)')
  }
  if (config.agents.length) ctx.tools.register(spawnTool(ctx.agents, config))
  if (config.handoffs.length) ctx.tools.register(handoffTool(ctx.agents, config))
})
