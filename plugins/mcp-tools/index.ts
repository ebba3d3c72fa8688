import { CordageError, definePlugin } from 'cordage'
import { resolveServers } from './config.ts'
import { ServerConnection } from './connection.ts'
import manifest, { type Config } from './manifest.ts'
import { ServerTools } from './server-tools.ts'

export { IdempotencyKeyMeta } from './connection.ts'

export default definePlugin<Config>(manifest, async (ctx, config) => {
  const specs = resolveServers(config, ctx.baseDir, process.env)
  const connections: ServerConnection[] = []
  // cordis ignores a disposer returned from apply; this also runs when the start below fails.
  ctx.on('dispose', () => {
    for (const connection of connections) connection.close()
  })

  // cordis's logger: the host shows warnings by default, `info` (tools added or removed, reconnected)
  // with --log-level info, and scrubs the agent's secrets too (docs/guides/logging.md).
  const logger = ctx.logger('mcp-tools')
  const started = await Promise.allSettled(
    specs.map(async (spec) => {
      const log = (message: string, level: 'info' | 'warn' = 'warn') => {
        if (config.log) logger[level](`${spec.name}: ${spec.secrets.redact(message)}`)
      }
      const tools: ServerTools = new ServerTools(spec, {
        register: (tool) => ctx.tools.register(tool),
        call: (tool, args, io, timeoutMs) => connection.call(tool, args, io, timeoutMs),
        log,
      })
      const connection = new ServerConnection(spec, { reconnect: config.reconnect, log, onTools: (list) => tools.sync(list, false) })
      connections.push(connection)
      tools.sync(await connection.start(), true)
    }),
  )

  const failures = started.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []))
  if (failures.length) {
    for (const connection of connections) connection.close()
    if (failures.length === 1) throw failures[0]
    const first = CordageError.is(failures[0]) ? failures[0].code : 'plugin_start_failed'
    throw new CordageError(
      first,
      `${failures.length} MCP servers failed to start:\n  ${failures.map((f) => (f as Error).message).join('\n  ')}`,
    )
  }
})
