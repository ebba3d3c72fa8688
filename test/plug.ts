/**
 * Plug one plugin into a fresh agent context, with its config checked against its schema as the host
 * would, for tests of a single plugin's behaviour.
 */
import { Context } from 'cordis'
import { createAgentContext, type CordagePlugin } from 'cordage'
import { attachLogSink } from 'cordage/host'

export async function plug(plugin: CordagePlugin, config: Record<string, unknown> = {}, ctx?: Context) {
  const agent = ctx ?? createAgentContext(new Context(), 'test')
  // These tests check `fork.error` themselves; cordis would also print each expected failure as an
  // "[E] app" stack trace on stdout. Logged as a Cordage app does (cordis's lines at debug, so not shown),
  // for this root only.
  attachLogSink(agent, {
    level: 'warn',
    write: (line) => {
      process.stderr.write(`${line}\n`)
    },
  })
  const resolved = plugin.manifest.config ? plugin.manifest.config(config) : config
  const fork = agent.plugin(plugin, resolved)
  await new Promise((r) => setImmediate(r))
  return { ctx: agent, fork }
}
