import { CordageError, definePlugin } from 'cordage'
import manifest, { type Config } from './manifest.ts'
import { handoffTool, spawnTool } from './tools.ts'

export default definePlugin<Config>(manifest, (ctx, config) => {
  const known = new Set(ctx.agents.list().map((a) => a.name))
  for (const [key, names] of [
    ['agents', config.agents],
    ['handoffs', config.handoffs],
  ] as const) {
    for (const name of names) {
      if (!known.has(name)) {
        throw new CordageError(
          'plugin_config_invalid',
          `subagents: ${key} names "${name}", which is not another agent of this preset; agents: ${[...known].join(', ') || 'none'}`,
        )
      }
    }
  }
  // The preset says whom this agent may reach; the plugin's lists say which of them its tools offer.
  const reach = ctx.agents.reach()
  for (const [key, names, allowed, presetKey] of [
    ['agents', config.agents, reach.spawns, 'spawns'],
    ['handoffs', config.handoffs, reach.handoffs, 'handoffs'],
  ] as const) {
    for (const name of names) {
      if (!allowed.includes(name)) {
        throw new CordageError(
          'plugin_config_invalid',
          `subagents: ${key} names "${name}", but the preset does not let agent "${ctx.agents.self}" ${key === 'agents' ? 'start' : 'hand runs to'} it: add "${name}" to agents.${ctx.agents.self}.${presetKey} in the preset`,
        )
      }
    }
  }
  if (!config.agents.length && !config.handoffs.length) {
    throw new CordageError(
      'plugin_config_invalid',
      'subagents: name at least one agent in agents (for spawn_agent) or handoffs (for handoff)',
    )
  }
  if (config.agents.length) ctx.tools.register(spawnTool(ctx.agents, config))
  if (config.handoffs.length) ctx.tools.register(handoffTool(ctx.agents, config))
})
