/**
 * @module cli/open
 * What the commands that read a preset share: opening it (with `--model`, `--set`, `--log-level`), and
 * finding the agent a command or a run is about.
 */
import { existsSync } from 'node:fs'
import { CordageError } from '../contracts/errors.ts'
import type { RunOverrides } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import { parseLogLevel, type LogLevel } from '../host/log-level.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import type { Parsed } from './args.ts'
import type { Output } from './output.ts'

export const DefaultPreset = 'presets/default.yml'

/** `--preset FILE`, or the default preset when it exists here. */
export function presetFile(flags: Parsed['flags']): string {
  const file = (flags.preset as string | undefined) ?? DefaultPreset
  if (!flags.preset && !existsSync(file))
    throw new CordageError('preset_not_found', `no --preset given and ${DefaultPreset} does not exist here; pass --preset FILE`)
  return file
}

/**
 * Which agents a command starts (docs/reference/presets.md#which-agents-a-command-starts): every agent
 * (a worker, the playground, `check`); the ones named (`run --agent`); `stores`, each agent's store only
 * (commands that read runs); or `on demand`, each agent's store now and the whole agent once the command
 * acts through it ({@link startAgent}: commands about one run or thread).
 */
export type Starting = 'every agent' | 'stores' | 'on demand' | string[] | ((names: string[]) => string[])

/**
 * How much of the plugin catalogue a command reads: `as named`, the folders of the plugins the preset
 * names (a command that loads one preset and ends; host/catalog.ts ScanOptions.lazy), or `whole`, every
 * folder at the start (a process that stays up and lists or swaps plugins: dev, worker, playground).
 */
export type CatalogReading = 'as named' | 'whole'

export async function open(
  io: Output,
  flags: Parsed['flags'],
  starting: Starting = 'every agent',
  reading: CatalogReading = 'as named',
): Promise<Cordage> {
  const logLevel = logLevelOf(flags)
  const file = presetFile(flags)
  // The host (cordis, the catalogue, esbuild) is loaded by the commands that use it, not by --version or --help.
  const { Cordage } = await import('../host/app.ts')
  const { PluginCatalog } = await import('../host/catalog.ts')
  const model = await modelSets(file, flags)
  try {
    return await Cordage.fromPreset(file, {
      agents: typeof starting === 'string' ? undefined : starting,
      storeOnly: starting === 'stores',
      onDemand: starting === 'on demand',
      catalog: model?.catalog ?? (await PluginCatalog.scan(undefined, { lazy: reading === 'as named' })),
      sets: model?.sets ?? (flags.set as string[] | undefined),
      lock: !flags['no-lock'],
      logLevel,
      log: (line) => io.err(line),
    })
  } catch (error) {
    // Named as the user wrote them: --model X and --set model.…, not the --set overrides they became.
    if (!model || !CordageError.is(error)) throw error
    throw new CordageError(error.code, model.shown(error.message), { cause: error, data: error.data })
  }
}

/**
 * `--model PLUGIN[@RANGE]` (and the `--set model.…` that go with it) as `--set` overrides, checked
 * against the catalogue, which is then the one the preset is loaded with (cli/model-flag.ts).
 */
async function modelSets(file: string, flags: Parsed['flags']) {
  if (flags.model === undefined && !(flags.set as string[] | undefined)?.some((s) => /^model[.[=]/.test(s))) return undefined
  const { PluginCatalog } = await import('../host/catalog.ts')
  const { modelOverride } = await import('./model-flag.ts')
  const catalog = await PluginCatalog.scan()
  const override = modelOverride(file, flags, catalog)
  return override && { catalog, sets: override.sets, shown: override.shown }
}

/** What run/start records of `--model`: the model plugin the agent runs instead of the preset's, `name@version`. */
export function overridesOf(agent: AgentRuntime, flags: Parsed['flags']): RunOverrides | undefined {
  if (flags.model === undefined) return undefined
  const plugin = String(flags.model).split('@')[0]
  return { model: `${plugin}@${agent.plugins[plugin]}` }
}

/** `--log-level LEVEL`, checked; undefined when not given ($CORDAGE_LOG_LEVEL or the preset decide). */
export function logLevelOf(flags: Parsed['flags']): LogLevel | undefined {
  return flags['log-level'] === undefined ? undefined : parseLogLevel(String(flags['log-level']), '--log-level')
}

/** `--agent NAME` of a command that only filters by agent: a name the preset does not have is an error, not an empty list. */
export function knownAgent(app: Cordage, name: string | undefined): void {
  if (name !== undefined && !app.agentNames().includes(name)) {
    throw new CordageError(
      'agent_not_found',
      `preset ${app.preset.shown} has no agent ${JSON.stringify(name)}; agents: ${app.agentNames().join(', ')}`,
    )
  }
}

/** The agent named, or else the first one the preset lists. */
export function pickAgent(app: Cordage, name?: string): AgentRuntime {
  return app.agent(name ?? app.agentNames()[0])
}

/**
 * A command that starts every agent of the preset (`worker`, `playground`) could not start one: the
 * error says so and how to serve the others, as the docs say (presets.md#which-agents-a-command-starts).
 */
export async function openEvery(io: Output, flags: Parsed['flags'], command: string): Promise<Cordage> {
  try {
    return await open(io, flags, flags.agent ? [String(flags.agent)] : 'every agent', 'whole')
  } catch (error) {
    const agent = CordageError.is(error) ? (error.data as { agent?: string } | undefined)?.agent : undefined
    if (!agent || flags.agent) throw error
    throw everyAgent(error as CordageError, agent, command)
  }
}

/** The error of agent `agent` that did not start, with what a command that starts every agent can do about it. */
export function everyAgent(error: CordageError, agent: string, command: string): CordageError {
  return new CordageError(
    error.code,
    `${error.message}; cordage ${command} starts every agent of the preset: fix agent "${agent}", or serve the others one at a time with --agent NAME`,
    { cause: error, data: error.data },
  )
}

/** What `run` and `submit` start: the agent named, else the preset's first (a thread's agent is found on demand). */
export function startingFor(flags: Parsed['flags']): Starting {
  if (flags.thread !== undefined) return 'on demand'
  return (names) => [(flags.agent as string | undefined) ?? names[0]]
}

/** The agent a command acts through, with all its plugins started (in an app opened on demand, only its store was). */
export function startAgent(app: Cordage, agent: AgentRuntime): Promise<AgentRuntime> {
  return app.ensureAgent(agent.name)
}

/**
 * The agent the run belongs to (its run/start names it). Several agents may share one store, so finding
 * the run in an agent's store is not enough: steering it with another agent's plugins would be wrong.
 */
export async function locate(app: Cordage, runId: string, name?: string): Promise<AgentRuntime> {
  const candidates = name ? [app.agent(name)] : app.agentNames().map((n) => app.agent(n))
  let last: unknown
  for (const agent of candidates) {
    let owner: string | undefined
    try {
      // The agent that drives it now: the one of its run/start, or of its last run/handoff.
      owner = (await agent.load(runId)).agent || undefined
    } catch (error) {
      if (!CordageError.is(error, 'run_not_found')) throw error
      last = error
      continue
    }
    if (owner === agent.name) return agent
    if (owner && app.agentNames().includes(owner) && !name) return app.agent(owner)
    throw new CordageError(
      'agent_not_found',
      `run ${runId} belongs to agent "${owner}", which ${app.agentNames().includes(owner ?? '') ? `is not --agent ${name}` : `is not in preset ${app.preset.shown}`}`,
    )
  }
  throw last ?? new CordageError('run_not_found', `no run ${runId}`)
}
