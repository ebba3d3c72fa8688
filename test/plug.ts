/**
 * Plug one plugin into a fresh agent context, with its config checked against its schema as the host
 * would, for tests of a single plugin's behaviour.
 */
import { Context, Logger } from 'cordis'

// These tests plug plugins straight into cordis and check `fork.error` themselves; cordis would also
// print each expected failure as an "[E] app" stack trace.
Logger.levels.app = Logger.SILENT
import { createAgentContext, type CordagePlugin } from 'cordage'

export async function plug(plugin: CordagePlugin, config: Record<string, unknown> = {}, ctx?: Context) {
  const agent = ctx ?? createAgentContext(new Context(), 'test')
  const resolved = plugin.manifest.config ? plugin.manifest.config(config) : config
  const fork = agent.plugin(plugin, resolved)
  await new Promise((r) => setImmediate(r))
  return { ctx: agent, fork }
}
