/**
 * From the checked config to what a connection needs. schemastery has checked each field's type; what
 * it cannot say is checked here: which fields each transport needs, unique namespaces, environment
 * variables that must be set. Every problem names its config path and how to fix it.
 */
import { isAbsolute, resolve } from 'node:path'
import { CordageError } from 'cordage'
import type { Config, ServerConfig } from './manifest.ts'
import { Secrets } from './secrets.ts'

export interface StdioEndpoint {
  kind: 'stdio'
  command: string
  args: string[]
  env: Record<string, string>
  cwd: string
}

export interface HttpEndpoint {
  kind: 'http'
  url: URL
  headers: Record<string, string>
}

export interface ServerSpec {
  name: string
  /** Where the server is in the config, for messages: `servers[0] ("orders")`. */
  where: string
  endpoint: StdioEndpoint | HttpEndpoint
  connectTimeoutMs: number
  secrets: Secrets
  config: ServerConfig
}

/**
 * @throws CordageError `plugin_config_invalid` listing every problem found
 * @example resolveServers(config, ctx.baseDir, process.env)
 */
export function resolveServers(config: Config, baseDir: string, env: NodeJS.ProcessEnv): ServerSpec[] {
  const problems: string[] = []
  const seen = new Map<string, number>()
  const specs: ServerSpec[] = []
  config.servers.forEach((server, i) => {
    const where = `servers[${i}] ("${server.name}")`
    const first = seen.get(server.name.toLowerCase())
    if (first !== undefined)
      problems.push(`${where}.name: servers[${first}] already uses the namespace "${server.name}"; give each server its own name`)
    seen.set(server.name.toLowerCase(), i)
    const secrets = new Secrets(env)
    const endpoint =
      server.transport === 'stdio'
        ? stdioEndpoint(server, where, baseDir, secrets, problems)
        : httpEndpoint(server, where, secrets, problems)
    if (endpoint) specs.push({ name: server.name, where, endpoint, connectTimeoutMs: server.connectTimeoutMs, secrets, config: server })
  })
  if (problems.length) {
    throw new CordageError(
      'plugin_config_invalid',
      problems.length === 1 ? problems[0] : `${problems.length} problems:\n  ${problems.join('\n  ')}`,
    )
  }
  return specs
}

function stdioEndpoint(
  server: ServerConfig,
  where: string,
  baseDir: string,
  secrets: Secrets,
  problems: string[],
): StdioEndpoint | undefined {
  if (!server.command) {
    const hint = server.url ? `; it has a url: set transport: http to connect to it` : ' (for example command: node, args: [./server.mjs])'
    problems.push(`${where}.command: transport stdio needs the command that starts the server${hint}`)
    return undefined
  }
  if (server.url) problems.push(`${where}.url: only transport http uses a url; remove it, or set transport: http and remove command`)
  const expand = expander(secrets, problems)
  const args = server.args.map((a, j) => expand(a, `${where}.args[${j}]`))
  const env = Object.fromEntries(Object.entries(server.env).map(([k, v]) => [k, expand(v, `${where}.env.${k}`)]))
  // A bare name is looked up on PATH; anything with a slash is a path, relative to the preset.
  const command = server.command.includes('/') && !isAbsolute(server.command) ? resolve(baseDir, server.command) : server.command
  return { kind: 'stdio', command, args, env, cwd: resolve(baseDir, server.cwd ?? '.') }
}

function httpEndpoint(server: ServerConfig, where: string, secrets: Secrets, problems: string[]): HttpEndpoint | undefined {
  if (!server.url) {
    const hint = server.command ? `; it has a command: set transport: stdio to start it` : ' (for example url: http://127.0.0.1:8931/mcp)'
    problems.push(`${where}.url: transport http needs the server's MCP endpoint${hint}`)
    return undefined
  }
  if (server.command) problems.push(`${where}.command: transport http does not start anything; remove command, or set transport: stdio`)
  const expand = expander(secrets, problems)
  const raw = expand(server.url, `${where}.url`)
  const headers = Object.fromEntries(Object.entries(server.headers).map(([k, v]) => [k, expand(v, `${where}.headers.${k}`)]))
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    problems.push(`${where}.url: "${secrets.redact(raw)}" is not a URL; expected something like http://127.0.0.1:8931/mcp`)
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${where}.url: expected an http: or https: URL, found ${url.protocol}`)
    return undefined
  }
  return { kind: 'http', url, headers }
}

/** Expands `${VAR}` in one value, reporting each variable that is not set under that value's path. */
function expander(secrets: Secrets, problems: string[]) {
  return (value: string, path: string): string => {
    const missing: string[] = []
    const out = secrets.expand(value, missing)
    for (const name of new Set(missing)) {
      problems.push(`${path}: the environment variable ${name} (from \${${name}}) is not set; set it before starting Cordage`)
    }
    return out
  }
}
