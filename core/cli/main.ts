/**
 * @module cli/main
 * The `cordage` command. {@link main} takes argv and an output sink and returns the exit code, so tests
 * run it in-process as well as through the real binary.
 */
import { existsSync } from 'node:fs'
import { relative } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import { RunEventTypes, type RunEvent, type RunOverrides } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import { parseLogLevel, type LogLevel } from '../host/log-level.ts'
import type { RunState } from '../kernel/state.ts'
import { isWaiting, Transitions, type RunStatus } from '../kernel/status.ts'
import { KernelVersion } from '../kernel/version.ts'
import type { AgentRuntime, ApprovalOptions, RunHandle } from '../kernel/agent.ts'
import { helpText, parse, type Parsed } from './args.ts'
import { ExitCodes, exitCodeFor } from './exit-codes.ts'
import { formatEvent, formatGrant, formatSummary, formatWaiting } from './format.ts'
import { verify } from './verify.ts'
import { effects } from './effects.ts'
import { scan } from './scan.ts'
import type { Output } from './output.ts'
export type { Output } from './output.ts'

const DefaultPreset = 'presets/default.yml'

export async function main(argv: string[], io: Output): Promise<number> {
  try {
    const parsed = parse(argv)
    if (parsed === 'help') {
      io.out(helpText())
      return ExitCodes.ok
    }
    if (parsed === 'usage') {
      io.err(helpText())
      io.err('error [invalid_input]: no command given; run cordage <command> (the list above), or cordage --help')
      return ExitCodes.usage
    }
    if (parsed === 'version') {
      io.out(`cordage ${KernelVersion}`)
      return ExitCodes.ok
    }
    if (parsed.flags.help) {
      io.out(helpText(parsed.command))
      return ExitCodes.ok
    }
    return await commands[parsed.command.name](parsed, io)
  } catch (error) {
    if (CordageError.is(error)) {
      io.err(`error [${error.code}]: ${error.message}`)
      if (['run_busy', 'lease_lost', 'seq_conflict'].includes(error.code)) return ExitCodes.busy
      return ['config', 'usage', 'environment_drift'].includes(error.kind) ? ExitCodes.usage : ExitCodes.failed
    }
    io.err(`internal error: ${(error as Error)?.stack ?? error}`)
    return ExitCodes.failed
  }
}

type Handler = (args: Parsed, io: Output) => Promise<number>

const commands: Record<string, Handler> = {
  async run({ flags }, io) {
    const app = await open(io, flags, flags.agent ? [String(flags.agent)] : undefined)
    try {
      const agent = pickAgent(app, flags.agent as string | undefined)
      const task = flags.task as string | undefined
      if (task !== undefined && !task.trim())
        throw new CordageError(
          'invalid_input',
          "--task is empty; give the task as text, or leave --task out to use the agent's task from the preset",
        )
      if (task === undefined && !agent.defaultTask)
        throw new CordageError('invalid_input', `agent "${agent.name}" has no task in the preset; pass --task TEXT`)
      let runId: string | undefined
      follow(app, io, !!flags.json, () => runId)
      const handle = agent.start(task, { overrides: overridesOf(agent, flags) })
      runId = handle.runId
      const stopOnSignal = cancelOnSignal(agent, handle.runId, io)
      try {
        return finish(await handle.done, io, flags, volatileStore(app, agent.name))
      } finally {
        stopOnSignal()
      }
    } finally {
      await app.stop()
    }
  },

  async submit({ flags }, io) {
    const app = await open(io, flags, flags.agent ? [String(flags.agent)] : undefined)
    try {
      const agent = pickAgent(app, flags.agent as string | undefined)
      const task = flags.task as string | undefined
      if (task !== undefined && !task.trim()) throw new CordageError('invalid_input', '--task is empty')
      const runId = await agent.submit(task)
      io.out(flags.json ? JSON.stringify({ runId }) : runId)
      return ExitCodes.ok
    } finally {
      await app.stop()
    }
  },

  async approve(args, io) {
    const wide = approvalScope(args)
    return steer(args, io, (agent, [run, action]) => agent.approve(run, action, { ...continuing(args), ...wide }))
  },

  async reject(args, io) {
    return steer(args, io, (agent, [run, action]) => agent.reject(run, action, continuing(args)))
  },

  async reconcile(args, io) {
    const { committed, 'not-committed': notCommitted } = args.flags
    if (!!committed === !!notCommitted)
      throw new CordageError('invalid_input', 'say what happened: exactly one of --committed or --not-committed')
    return steer(args, io, (agent, [run, action]) =>
      agent.reconcile(run, action, !!committed, { ...continuing(args), receipt: args.flags.receipt }),
    )
  },

  async resume(args, io) {
    return steer(args, io, (agent, [run]) =>
      agent.resume(run, { by: by(args), input: args.flags.input as string | undefined, acceptDrift: !!args.flags['accept-drift'] }),
    )
  },

  async cancel(args, io) {
    return steer(args, io, async (agent, [run]) => {
      // Driven by another process, the run is asked to stop through the store; this waits for it.
      const done = agent.cancel(run, { by: by(args), reason: args.flags.reason as string | undefined })
      return { runId: run, done }
    })
  },

  async runs({ flags }, io) {
    // Reading runs starts only the stores: no tool servers, no model keys needed.
    const app = await open(io, flags, undefined, true)
    try {
      knownAgent(app, flags.agent as string | undefined)
      const status = flags.status as RunStatus | undefined
      if (status !== undefined && !Object.hasOwn(Transitions, status)) {
        throw new CordageError(
          'invalid_input',
          `--status must be one of ${Object.keys(Transitions).join(', ')}, got ${JSON.stringify(status)}`,
        )
      }
      const seen = new Map<string, ReturnType<typeof formatSummary>>()
      const rows = []
      for (const name of app.agentNames()) {
        if (flags.agent && name !== flags.agent) continue
        for (const run of await app.agent(name).store().list({ status })) {
          if (seen.has(run.runId)) continue
          seen.set(run.runId, '')
          // A waiting run says what it waits on, and whose child it is: the chain of a pending approval.
          const state = isWaiting(run.status) ? await app.agent(name).load(run.runId) : undefined
          rows.push(state ? { ...run, waiting: state.waiting, parent: state.parent } : run)
        }
      }
      rows.sort((a, b) => b.createdAt - a.createdAt)
      if (flags.json) for (const run of rows) io.out(JSON.stringify(run))
      else if (rows.length === 0) io.err(`no runs in the store of ${app.preset.shown}${storeHint(app)}`)
      else for (const run of rows) io.out(formatSummary(run) + ('waiting' in run ? formatWaiting(run) : ''))
      return ExitCodes.ok
    } finally {
      await app.stop()
    }
  },

  async events({ flags, positionals: [runId] }, io) {
    const after = flags.after === undefined ? 0 : Number(flags.after)
    if (!Number.isInteger(after) || after < 0)
      throw new CordageError('invalid_input', `--after must be a whole number ≥ 0, got ${JSON.stringify(flags.after)}`)
    const app = await open(io, flags, undefined, true)
    try {
      const agent = await locate(app, runId, flags.agent as string | undefined)
      if (!flags.follow) {
        for (const event of await agent.store().read(runId, { after })) print(io, event, !!flags.json)
        return ExitCodes.ok
      }
      // Replays what is stored after the cursor, then each new event as it becomes durable.
      const stop = new AbortController()
      const onSignal = () => stop.abort()
      process.once('SIGINT', onSignal)
      try {
        for await (const event of agent.follow(runId, { after, signal: stop.signal })) print(io, event, !!flags.json)
      } finally {
        process.off('SIGINT', onSignal)
      }
      return ExitCodes.ok
    } finally {
      await app.stop()
    }
  },

  async worker({ flags }, io) {
    const poll = flags.poll === undefined ? 500 : Number(flags.poll)
    if (!Number.isInteger(poll) || poll < 10)
      throw new CordageError('invalid_input', `--poll must be a whole number of milliseconds ≥ 10, got ${JSON.stringify(flags.poll)}`)
    const app = await open(io, flags, flags.agent ? [String(flags.agent)] : undefined)
    const agents = app.agentNames().map((n) => app.agent(n))
    follow(app, io, !!flags.json, () => undefined, true)
    const stop = new AbortController()
    const onSignal = () => {
      io.err('stopping: the runs in progress go on to their next pause or end')
      stop.abort()
    }
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    let driven = 0
    // Parents whose child ended without waking them (its process stopped first) go on here.
    const { parentSweep } = await import('../host/agents.ts')
    const sweeps = agents.map((agent) =>
      parentSweep(
        agent,
        (error) => io.err(`error [${error.code}]: ${error.message}`),
        (runId) => app.forRun(agent.name, runId),
      ),
    )
    try {
      while (!stop.signal.aborted) {
        let found = false
        for (const sweep of sweeps) {
          const woken = await sweep()
          driven += woken
          found ||= woken > 0
        }
        for (const agent of agents) {
          let handle
          try {
            handle = await agent.driveNext()
          } catch (error) {
            // A run whose stored log is damaged is reported and passed over; the others go on.
            if (!CordageError.is(error, 'store_corrupt')) throw error
            io.err(`error [store_corrupt]: ${error.message}`)
            found = true
            continue
          }
          if (!handle) continue
          found = true
          driven++
          const state = await handle.done
          io.err(`run ${state.runId} ${state.status}${state.failureCode ? ` (${state.failureCode})` : ''}`)
        }
        if (!found && flags.once) break
        if (!found) await new Promise((r) => setTimeout(r, poll))
      }
      // Runtimes pinned for one run (onDrift: pin) are released as their runs pause or end (on the turn
      // after): this says none is left behind.
      await new Promise((r) => setImmediate(r))
      if (!flags.json)
        io.err(`worker ${agents[0]?.options.worker ?? ''} drove ${driven} run(s); ${app.pinnedRuntimes()} pinned runtime(s) loaded`)
      return ExitCodes.ok
    } finally {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      await app.stop()
    }
  },

  async grants({ flags }, io) {
    const app = await open(io, flags, undefined, true)
    try {
      knownAgent(app, flags.agent as string | undefined)
      let listed = 0
      for (const name of app.agentNames()) {
        if (flags.agent && name !== flags.agent) continue
        for (const grant of await app.agent(name).grants({ inactive: !!flags.all })) {
          listed++
          io.out(flags.json ? JSON.stringify(grant) : formatGrant(grant))
        }
      }
      if (!listed && !flags.json) io.err(`no ${flags.all ? '' : 'active '}grants in the stores of ${app.preset.shown}`)
      return ExitCodes.ok
    } finally {
      await app.stop()
    }
  },

  async revoke({ flags, positionals: [id] }, io) {
    const app = await open(io, flags, undefined, true)
    try {
      knownAgent(app, flags.agent as string | undefined)
      const agents = app.agentNames().filter((n) => !flags.agent || n === flags.agent)
      for (const name of agents) {
        const found = (await app.agent(name).grants({ inactive: true })).find((g) => g.id === id)
        if (!found) continue
        const grant = await app
          .agent(name)
          .revokeGrant(id, { by: (flags.by as string | undefined) ?? 'cli', reason: flags.reason as string | undefined })
        io.out(flags.json ? JSON.stringify(grant) : `revoked ${formatGrant(grant)}`)
        return ExitCodes.ok
      }
      throw new CordageError('invalid_input', `no grant ${id} in the stores of ${app.preset.shown} (cordage grants --all lists them)`)
    } finally {
      await app.stop()
    }
  },

  async check({ flags }, io) {
    const app = await open(io, flags)
    try {
      for (const name of app.agentNames()) {
        const plugins = app.pluginsOf(name)
        if (flags.json) io.out(JSON.stringify({ agent: name, plugins }))
        else
          io.out(
            `agent ${name}: ${Object.entries(plugins)
              .map(([n, v]) => `${n}@${v}`)
              .join(', ')}`,
          )
      }
      if (!flags.json && app.lockFile) io.out(`locked by ${relative(process.cwd(), app.lockFile) || app.lockFile}`)
      if (!flags.json) io.out(`preset ${app.preset.shown} is valid`)
      return ExitCodes.ok
    } finally {
      await app.stop()
    }
  },

  // Reading runs starts only the stores: no tool servers, no model keys needed.
  verify: (args, io) => verify(args, io, (flags) => open(io, flags, undefined, true)),
  effects: (args, io) => effects(args, io, (flags) => open(io, flags, undefined, true)),
  scan: (args, io) => scan(args, io, (flags) => open(io, flags, undefined, true)),

  dev: async (args, io) => (await import('./dev.ts')).dev(args, io, (flags, agents) => open(io, flags, agents), overridesOf),
  // Loaded on demand, and loads no host: it only writes files.
  init: async (args, io) => (await import('./init.ts')).init(args, io),

  async lock({ flags }, io) {
    const file = (flags.preset as string | undefined) ?? DefaultPreset
    if (!flags.preset && !existsSync(file))
      throw new CordageError('preset_not_found', `no --preset given and ${DefaultPreset} does not exist here; pass --preset FILE`)
    const { lockPreset } = await import('./lock.ts')
    for (const line of await lockPreset(file, !!flags.json)) io.out(line)
    return ExitCodes.ok
  },

  async eval(args, io) {
    // Loaded on demand: the other commands do not pay for the eval engine.
    const { evalCommand } = await import('./eval.ts')
    return evalCommand(args, io)
  },

  async playground({ flags }, io) {
    const port = flags.port === undefined ? undefined : Number(flags.port)
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new CordageError('invalid_input', `--port must be a whole number from 0 to 65535, got ${JSON.stringify(flags.port)}`)
    const file = (flags.preset as string | undefined) ?? DefaultPreset
    if (!flags.preset && !existsSync(file))
      throw new CordageError('preset_not_found', `no --preset given and ${DefaultPreset} does not exist here; pass --preset FILE`)
    // Loaded on demand: the other commands do not pay for the web server.
    if (!flags.watch && flags.debounce !== undefined)
      throw new CordageError('invalid_input', '--debounce applies to --watch only; add --watch')
    const { debounceOf, printReload, printWatching } = await import('./dev.ts')
    const watch = flags.watch ? { debounceMs: debounceOf(flags) } : undefined
    const { startPlayground } = await import('cordage/playground')
    const token = (flags.token as string | undefined) ?? (process.env.CORDAGE_PLAYGROUND_TOKEN || undefined)
    const playground = await startPlayground({
      preset: file,
      port,
      watch,
      token,
      readOnly: !!flags['read-only'],
      logLevel: logLevelOf(flags),
      log: (line) => io.err(line),
      onError: (error) => io.err(`[playground] ${(error as Error)?.message ?? error}`),
    })
    // The address carries the secret token (printed to whoever started it, as notebook servers do).
    io.err(
      `playground for ${playground.app.preset.shown} on ${playground.url} ${playground.readOnly ? '(read-only) ' : ''}(Ctrl-C to stop)`,
    )
    // Who swapped what through the page's API, in the terminal too.
    playground.feed.subscribe(({ type, data: d }) => {
      if (type === 'plugin/swapped')
        io.err(
          `${d.ok ? 'swapped' : 'swap FAILED:'} ${d.name} in ${d.agent}${d.ok ? `: ${d.from} → ${d.to}` : ` [${d.code}]`} by ${JSON.stringify(d.by)} (${d.via})`,
        )
    })
    if (playground.reloader) {
      // The same lines as cordage dev: what is watched, then each reload as it happens.
      playground.app.root.on('plugin/reloaded', (event) => printReload(event, io))
      printWatching(playground.reloader, io)
    }
    await new Promise<void>((done) => {
      process.once('SIGINT', () => done())
      process.once('SIGTERM', () => done())
    })
    await playground.close()
    return ExitCodes.ok
  },
}

async function open(io: Output, flags: Parsed['flags'], agents?: string[], storeOnly = false): Promise<Cordage> {
  const logLevel = logLevelOf(flags)
  const file = (flags.preset as string | undefined) ?? DefaultPreset
  if (!flags.preset && !existsSync(file))
    throw new CordageError('preset_not_found', `no --preset given and ${DefaultPreset} does not exist here; pass --preset FILE`)
  // The host (cordis, the catalogue, esbuild) is loaded by the commands that use it, not by --version or --help.
  const { Cordage } = await import('../host/app.ts')
  const model = await modelSets(file, flags)
  try {
    return await Cordage.fromPreset(file, {
      agents,
      storeOnly,
      catalog: model?.catalog,
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
function overridesOf(agent: AgentRuntime, flags: Parsed['flags']): RunOverrides | undefined {
  if (flags.model === undefined) return undefined
  const plugin = String(flags.model).split('@')[0]
  return { model: `${plugin}@${agent.plugins[plugin]}` }
}

/** `--log-level LEVEL`, checked; undefined when not given ($CORDAGE_LOG_LEVEL or the preset decide). */
function logLevelOf(flags: Parsed['flags']): LogLevel | undefined {
  return flags['log-level'] === undefined ? undefined : parseLogLevel(String(flags['log-level']), '--log-level')
}

/** `--agent NAME` of a command that only filters by agent: a name the preset does not have is an error, not an empty list. */
function knownAgent(app: Cordage, name: string | undefined): void {
  if (name !== undefined && !app.agentNames().includes(name)) {
    throw new CordageError(
      'agent_not_found',
      `preset ${app.preset.shown} has no agent ${JSON.stringify(name)}; agents: ${app.agentNames().join(', ')}`,
    )
  }
}

/** The agent named, or else the first one the preset lists. */
function pickAgent(app: Cordage, name?: string): AgentRuntime {
  return app.agent(name ?? app.agentNames()[0])
}

/**
 * The agent the run belongs to (its run/start names it). Several agents may share one store, so finding
 * the run in an agent's store is not enough: steering it with another agent's plugins would be wrong.
 */
async function locate(app: Cordage, runId: string, name?: string): Promise<AgentRuntime> {
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

async function steer(
  args: Parsed,
  io: Output,
  command: (agent: AgentRuntime, positionals: string[]) => Promise<RunHandle>,
): Promise<number> {
  const [runId] = args.positionals
  const app = await open(io, args.flags)
  try {
    let agent = await locate(app, runId, args.flags.agent as string | undefined)
    // A run that goes on may need plugins pinned to its recorded versions (onDrift: pin).
    if (args.command.name !== 'cancel' && !args.flags['no-resume']) agent = await app.forRun(agent.name, runId)
    follow(app, io, !!args.flags.json, () => runId)
    const handle = await command(agent, args.positionals)
    return finish(await handle.done, io, args.flags)
  } finally {
    await app.stop()
  }
}

/**
 * Print the events of one run (or, with `all`, of every run) as they become durable. Events are
 * dispatched only after the store accepted them, which is always after the command returned the run
 * id, so none is missed.
 */
function follow(app: Cordage, io: Output, json: boolean, runId: () => string | undefined, all = false): void {
  for (const type of RunEventTypes) {
    app.root.on(type, (event: RunEvent) => {
      if (all || event.runId === runId()) print(io, event, json)
    })
  }
}

function continuing(args: Parsed) {
  return {
    by: by(args),
    reason: args.flags.reason as string | undefined,
    resume: !args.flags['no-resume'],
    acceptDrift: !!args.flags['accept-drift'],
  }
}

/** The scope flags of approve, checked: --args and --any-args and --expires only widen a run or grant approval. */
function approvalScope(args: Parsed): Pick<ApprovalOptions, 'scope' | 'args' | 'expiresInMs'> {
  const { scope, args: pattern, 'any-args': anyArgs, expires } = args.flags as Record<string, string | boolean | undefined>
  if (scope !== undefined && !['once', 'run', 'grant'].includes(scope as string))
    throw new CordageError('invalid_input', `--scope must be once, run or grant, got ${JSON.stringify(scope)}`)
  const wide = scope === 'run' || scope === 'grant'
  if (!wide && (pattern !== undefined || anyArgs || expires !== undefined))
    throw new CordageError('invalid_input', '--args, --any-args and --expires go with --scope run or --scope grant')
  if (pattern !== undefined && anyArgs) throw new CordageError('invalid_input', 'give --args or --any-args, not both')
  let parsed: ApprovalOptions['args']
  if (pattern !== undefined) {
    try {
      parsed = JSON.parse(pattern as string)
    } catch (error) {
      throw new CordageError('invalid_input', `--args is not JSON (${(error as Error).message}); write it like '{"amount":{"lte":100}}'`)
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new CordageError('invalid_input', '--args must be a JSON object: argument path → test')
  }
  return {
    scope: scope as ApprovalOptions['scope'],
    args: anyArgs ? 'any' : parsed,
    expiresInMs: expires === undefined ? undefined : duration(expires as string),
  }
}

function duration(text: string): number {
  const m = /^(\d+)(s|m|h|d)$/.exec(text)
  if (!m || Number(m[1]) === 0)
    throw new CordageError('invalid_input', `--expires must be a duration like 30m, 12h or 7d, got ${JSON.stringify(text)}`)
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd']
}

function print(io: Output, event: RunEvent, json: boolean) {
  io.out(json ? JSON.stringify(event) : formatEvent(event, io.color))
}

/**
 * The status line and the hints, on stderr in both output modes: with --json, stdout holds only the
 * events, and stderr still says how the run ended and what to do next.
 */
function finish(state: RunState, io: Output, flags: Parsed['flags'], volatile = false): number {
  const preset = flags.preset ? ` --preset ${flags.preset}` : ''
  const code = state.failureCode ? ` (${state.failureCode})` : ''
  io.err(`run ${state.runId} ${state.status}${code}`)
  if (state.status === 'WAITING_RECONCILIATION' && state.waiting?.actionId) {
    io.err(`  settle:  cordage reconcile ${state.runId} ${state.waiting.actionId} --committed|--not-committed${preset}`)
  }
  const decided = state.waiting?.actionId ? state.actions[state.waiting.actionId]?.status : undefined
  const child = state.waiting?.child
  if (child) {
    // Waiting on its child: what is to be done is done there.
    if (state.status === 'WAITING_APPROVAL' && child.actionId) {
      io.err(`  approve: cordage approve ${child.runId} ${child.actionId}${preset}`)
      io.err(`  reject:  cordage reject ${child.runId} ${child.actionId}${preset}`)
    } else if (state.status === 'WAITING_USER') io.err(`  answer:  cordage resume ${child.runId} --input "..."${preset}`)
  } else if (state.status === 'WAITING_APPROVAL' && (decided === 'approved' || decided === 'rejected')) {
    io.err(`  ${decided}; continue: cordage resume ${state.runId}${preset}`)
  } else if (state.status === 'WAITING_APPROVAL' && state.waiting?.actionId) {
    // When the policy names who may decide, say so: the default --by (cli) would be refused.
    const approvers = state.actions[state.waiting.actionId]?.decision?.approvers
    const by = approvers && !approvers.includes('*') ? ` --by ${approvers.length === 1 ? approvers[0] : `<${approvers.join('|')}>`}` : ''
    io.err(`  approve: cordage approve ${state.runId} ${state.waiting.actionId}${preset}${by}`)
    io.err(`  reject:  cordage reject ${state.runId} ${state.waiting.actionId}${preset}${by}`)
  } else if (state.status === 'WAITING_USER') {
    io.err(`  answer:  cordage resume ${state.runId} --input "..."${preset}`)
  }
  if (state.parent || state.waiting?.child) io.err(formatWaiting(state).replace(/^\n/, ''))
  if (volatile && isWaiting(state.status)) {
    io.err(
      '  note: this agent uses store-memory, which keeps the run only while this process lives; the commands above need a durable store',
    )
  }
  return exitCodeFor(state.status)
}

function by(args: Parsed): string {
  return (args.flags.by as string | undefined) ?? 'cli'
}

/** The agent keeps runs only in this process's memory. */
function volatileStore(app: Cordage, agent: string): boolean {
  return 'store-memory' in app.pluginsOf(agent)
}

function storeHint(app: Cordage): string {
  const stores = app
    .agentNames()
    .map((n) => app.pluginsOf(n))
    .filter((p) => p['store-memory'])
  return stores.length ? ' (store-memory keeps runs only while the process that made them lives)' : ''
}

/** Ctrl-C cancels the run (it ends CANCELLED, exit 6); a second Ctrl-C exits at once. */
function cancelOnSignal(agent: AgentRuntime, runId: string, io: Output): () => void {
  let count = 0
  const onSignal = () => {
    if (++count > 1) process.exit(ExitCodes.cancelled)
    io.err('cancelling… (Ctrl-C again to exit now)')
    void agent.cancel(runId, { by: 'cli', reason: 'interrupted' }).catch(() => {})
  }
  process.on('SIGINT', onSignal)
  return () => process.off('SIGINT', onSignal)
}
