/**
 * @module host/plug
 * Plugging a planned plugin into an agent's context and proving it started: the module exports the
 * plugin its manifest describes, cordis applied it without error, and it set every service it
 * declares. cordis itself does not throw on a failed plugin (it logs and marks the fork), so each of
 * these is checked here and turned into a `plugin_start_failed` that names the plugin.
 */
import { symbols, type Context, type ForkScope } from 'cordis'
import { agentFilter, readService, ServiceNames, type ServiceName } from '../kernel/cordis.ts'
import { CordageError } from '../contracts/errors.ts'
import type { CordagePlugin } from '../contracts/manifest.ts'
import { importPluginModule } from './bounded-import.ts'
import type { PlannedPlugin } from './resolve.ts'

/** Errors cordis reported while a plugin started, which plugOne turns into a thrown CordageError instead. */
export const handledErrors = new WeakSet<object>()

export interface LoadedPlugin {
  planned: PlannedPlugin
  plugin: CordagePlugin
  fork: ForkScope<Context>
}

/** Import, plug and check one plugin. On failure nothing of it stays plugged. */
export async function plugOne(ctx: Context, agent: string, planned: PlannedPlugin): Promise<LoadedPlugin> {
  const { manifest } = planned.entry
  const label = `${manifest.name}@${manifest.version}`
  const plugin = await loadEntry(ctx, agent, planned, label)

  let captured: unknown
  const undeclared = new Set<string>()
  const stopErrors = ctx.on('internal/error', (error: unknown) => {
    captured ??= error
    if (error && typeof error === 'object') handledErrors.add(error)
  })
  // cordis warns when code reads a service it did not inject; for a plugin that means a service its
  // manifest does not require, which works or not depending on plugin order. Make it an error here.
  const stopWarnings = ctx.on('internal/warning', (warning: unknown) => {
    const name = /^property (\S+) is not registered/.exec((warning as Error)?.message ?? '')?.[1]
    if (name && ServiceNames.includes(name as ServiceName)) undeclared.add(name)
  })
  const fork = ctx.plugin(plugin, planned.config)
  try {
    await settle(ctx, label, planned.where)
  } catch (error) {
    stopErrors()
    stopWarnings()
    fork.dispose()
    throw failed(ctx, agent, planned, error as CordageError)
  }
  stopErrors()
  stopWarnings()

  if (undeclared.size) {
    fork.dispose()
    const names = [...undeclared]
    throw failed(
      ctx,
      agent,
      planned,
      new CordageError(
        'plugin_requirement_missing',
        `plugin ${label} (${planned.where}) uses service${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')} without requiring ${names.length > 1 ? 'them' : 'it'}; add ${names.map((n) => `${n}: '^1.0.0'`).join(', ')} to "requires" in its manifest`,
      ),
    )
  }

  const problem = fork.error
    ? `failed while starting: ${(fork.error as Error)?.message ?? fork.error}`
    : !fork.isActive
      ? `did not start: it waits for ${
          Object.keys(plugin.inject)
            .filter((s) => !readService(ctx, s))
            .join(', ') || 'a service'
        }`
      : missingServices(ctx, planned, label)
  if (problem) {
    fork.dispose()
    // A plugin that refused its config says so with its own code; any other failure is a failed start.
    const cause = fork.error ?? captured
    const code = CordageError.is(cause) && cause.kind === 'config' ? cause.code : 'plugin_start_failed'
    throw failed(ctx, agent, planned, new CordageError(code, `plugin ${label} (${planned.where}) ${problem}`, { cause }))
  }
  ctx.emit(agentFilter(agent), 'plugin/loaded', { agent, name: manifest.name, version: manifest.version })
  return { planned, plugin, fork }
}

/** Dispose a plugged plugin and say so. */
export function unplug(ctx: Context, agent: string, loaded: LoadedPlugin, reason: 'swap' | 'stop' | 'rollback'): void {
  loaded.fork.dispose()
  const { manifest } = loaded.planned.entry
  ctx.emit(agentFilter(agent), 'plugin/disposed', { agent, name: manifest.name, version: manifest.version, reason })
}

function missingServices(ctx: Context, planned: PlannedPlugin, label: string): string | undefined {
  for (const service of Object.keys(planned.entry.manifest.provides ?? {})) {
    const entry = readService(ctx, service)
    if (!entry) return `declares that it provides "${service}" but did not set it`
    if (entry.provider !== label) return `declares that it provides "${service}", but "${service}" is set by ${entry.provider}`
  }
  return undefined
}

/** Wait for every async plugin start cordis is tracking. */
/** How long a plugin's start (an async apply) may take, unless `CORDAGE_PLUGIN_START_TIMEOUT_MS` says otherwise. */
export const DefaultPluginStartTimeoutMs = 60_000

/**
 * Wait until cordis has applied the plugin, within a limit: an `apply` that never settles would
 * otherwise hang the host, or end the process with exit code 13 and no word. Generous by default: a
 * plugin may connect to a database or start MCP servers while it starts. The timer is ref'd on
 * purpose: it keeps the process alive until the answer is an error.
 */
async function settle(ctx: Context, label: string, where: string): Promise<void> {
  const lifecycle = (ctx.root as any).lifecycle
  const raw = process.env.CORDAGE_PLUGIN_START_TIMEOUT_MS
  const ms = raw === undefined || raw.trim() === '' ? DefaultPluginStartTimeoutMs : Number(raw)
  if (!Number.isInteger(ms) || ms < 1 || ms > 2_147_483_647) {
    throw new CordageError(
      'invalid_input',
      `CORDAGE_PLUGIN_START_TIMEOUT_MS must be a whole number of milliseconds from 1 to 2147483647, got ${JSON.stringify(raw)}; unset it for the default (${DefaultPluginStartTimeoutMs} ms)`,
    )
  }
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new CordageError(
            'plugin_load_timeout',
            `plugin ${label} (${where}) did not finish starting within ${ms} ms (an apply that never settles?); fix the plugin, or raise CORDAGE_PLUGIN_START_TIMEOUT_MS if it is only slow`,
          ),
        ),
      ms,
    )
  })
  try {
    await Promise.race([(lifecycle[symbols.original] ?? lifecycle).flush(), timeout])
  } finally {
    clearTimeout(timer)
  }
}

function failed(ctx: Context, agent: string, planned: PlannedPlugin, error: CordageError): CordageError {
  const { manifest } = planned.entry
  ctx.emit(agentFilter(agent), 'plugin/failed', {
    agent,
    name: manifest.name,
    version: manifest.version,
    code: error.code,
    message: error.message,
  })
  return error
}

/** The plugin its entry module default-exports: the one its manifest file names, or a failure that says what is wrong. */
async function loadEntry(ctx: Context, agent: string, planned: PlannedPlugin, label: string): Promise<CordagePlugin> {
  const { manifest } = planned.entry
  let plugin: CordagePlugin
  try {
    plugin = (planned.entry.module ??
      (await importPluginModule(planned.entry.entry, planned.entry.dir, 'entry module')).default) as CordagePlugin
  } catch (error) {
    if (CordageError.is(error, 'plugin_load_timeout'))
      throw failed(
        ctx,
        agent,
        planned,
        new CordageError('plugin_load_timeout', `plugin ${label} (${planned.where}): ${error.message}`, { cause: error }),
      )
    throw failed(
      ctx,
      agent,
      planned,
      new CordageError(
        'plugin_start_failed',
        `plugin ${label} (${planned.where}): cannot load ${planned.entry.entry}: ${(error as Error).message}`,
        { cause: error },
      ),
    )
  }
  if (!plugin || typeof plugin.apply !== 'function' || !plugin.manifest) {
    throw failed(
      ctx,
      agent,
      planned,
      new CordageError(
        'manifest_invalid',
        `plugin ${label} (${planned.where}): ${planned.entry.entry} must default-export definePlugin(manifest, apply)`,
      ),
    )
  }
  if (plugin.manifest.name !== manifest.name || plugin.manifest.version !== manifest.version) {
    throw failed(
      ctx,
      agent,
      planned,
      new CordageError(
        'manifest_invalid',
        `plugin ${label} (${planned.where}): ${planned.entry.entry} exports ${plugin.manifest.name}@${plugin.manifest.version}, but its manifest file says ${label}`,
      ),
    )
  }
  return plugin
}
