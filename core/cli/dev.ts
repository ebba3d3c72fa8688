/**
 * @module cli/dev
 * `cordage dev`: load a preset, watch the folders of the plugins its agents use, and hot-reload a
 * plugin into every agent that uses it when its files change (core/host/dev.ts). The preset is watched
 * too (core/host/preset-reload.ts): a changed plugin config or version is a reload of that plugin; a
 * changed plugin list (or model, or agent settings) builds the agents again from the edited preset when
 * no run is in flight, and is refused with a message when one is; an edit that does not load changes
 * nothing. Each reload is printed (ok, or why the old version still serves). With `--task`, the agent runs the task at start and again
 * after each successful reload, so an edit shows up in the next run's events. Runs until Ctrl-C.
 * `cordage playground --watch` runs the same reloader in the playground process: {@link debounceOf},
 * {@link printWatching} and {@link printReload} are shared with it, so both commands print the same lines.
 */
import { relative } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import { RunEventTypes, type PluginEvent, type RunEvent, type RunOverrides } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import { DevReloader } from '../host/dev.ts'
import { PresetWatcher, type PresetReload } from '../host/preset-reload.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import { formatEvent } from './format.ts'
import type { Output } from './output.ts'

/** One loaded app and what follows it: its plugin folders, its preset files, the agent dev runs. */
interface Attached {
  app: Cordage
  reloader: DevReloader
  preset: PresetWatcher
  agent: AgentRuntime
}

/**
 * The `dev` command. `open` loads the preset the way every other command does (main.ts owns preset
 * flags and defaults: --set, --no-lock, --model), with only the agents named; `overridesOf` is what
 * run/start records of --model.
 */
export async function dev(
  { flags }: Parsed,
  io: Output,
  open: (flags: Parsed['flags'], agents?: string[]) => Promise<Cordage>,
  overridesOf: (agent: AgentRuntime, flags: Parsed['flags']) => RunOverrides | undefined = () => undefined,
): Promise<number> {
  const debounceMs = debounceOf(flags)
  const task = flags.task as string | undefined
  if (task !== undefined && !task.trim()) throw new CordageError('invalid_input', '--task is empty')
  const json = !!flags.json
  const agents = flags.agent ? [String(flags.agent)] : undefined
  let runId: string | undefined
  let running: Promise<unknown> | undefined
  /** Set while the app is being replaced: no run starts on the old one. */
  let replacing = false
  let edits: Promise<unknown> = Promise.resolve()

  const startRun = () => {
    if (task === undefined || running || replacing) return
    const handle = current.agent.start(task, { overrides: overridesOf(current.agent, flags) })
    runId = handle.runId
    running = handle.done
      .then(
        (state) => io.err(`run ${state.runId} ${state.status}${state.failureCode ? ` (${state.failureCode})` : ''}`),
        (error) => io.err(`run failed: ${(error as Error)?.message ?? error}`),
      )
      .finally(() => {
        running = undefined
      })
  }

  const attach = async (app: Cordage): Promise<Attached> => {
    let reloader: DevReloader | undefined
    try {
      reloader = await DevReloader.start(app, { debounceMs })
      const preset: PresetWatcher = await PresetWatcher.start(app, {
        lock: !flags['no-lock'],
        debounceMs,
        // One at a time; a result of a watcher that was replaced meanwhile is stale (the new app read the file after it).
        onReload: (result) => {
          edits = edits
            .then(() => (current.preset === preset ? onPreset(result) : undefined))
            .catch((error) => io.err(`preset reload failed: ${(error as Error)?.message ?? error}`))
        },
      })
      const agent = app.agent((flags.agent as string | undefined) ?? app.agentNames()[0])
      for (const type of RunEventTypes) {
        app.root.on(type, (event: RunEvent) => {
          if (event.runId === runId) io.out(json ? JSON.stringify(event) : formatEvent(event, io.color))
        })
      }
      app.root.on('plugin/reloaded', (event: PluginEvent) => {
        printReload(event, io, json)
        if (event.ok && event.agent === agent.name) startRun()
      })
      return { app, reloader, preset, agent }
    } catch (error) {
      reloader?.stop()
      await app.stop()
      throw error
    }
  }

  const detach = async ({ app, reloader, preset }: Attached) => {
    reloader.stop()
    preset.stop()
    await reloader.settled()
    await app.stop()
  }

  const onPreset = async (result: PresetReload) => {
    const shown = current.app.preset.shown
    if (result.ok) {
      printPreset(result, shown, io, json)
      // A version swap may run the plugin from another folder: watch the folders the agents use now.
      if (result.swapped.some((s) => s.changed.includes('version'))) {
        current.reloader.stop()
        await current.reloader.settled()
        current.reloader = await DevReloader.start(current.app, { debounceMs })
      }
      startRun()
      return
    }
    if (!result.replan) return printPreset(result, shown, io, json)
    // A new plan is a new app: built and started beside the old one, which serves until it is ready.
    if (running) {
      return printPreset(
        {
          ...result,
          message: `${result.message}; run ${runId} is in flight, so nothing changed: restart cordage dev, or save the preset again once the run has ended`,
        },
        shown,
        io,
        json,
      )
    }
    replacing = true
    try {
      let next: Attached
      try {
        next = await attach(await open(flags, agents))
      } catch (error) {
        const code = CordageError.is(error) ? error.code : 'preset_invalid'
        return printPreset({ ...result, code, message: (error as Error)?.message ?? String(error) }, shown, io, json)
      }
      const old = current
      current = next
      await detach(old)
      printPreset({ ok: true, swapped: [], replan: result.replan, durationMs: result.durationMs }, shown, io, json)
      printWatching(current.reloader, io)
    } finally {
      replacing = false
    }
    startRun()
  }

  let current = await attach(await open(flags, agents))
  printWatching(current.reloader, io)
  io.err(`following edits of ${current.preset.files.map((f) => relative(process.cwd(), f) || f).join(', ')}`)
  startRun()

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  current.reloader.stop()
  current.preset.stop()
  if (runId && running) await current.agent.cancel(runId, { by: 'cli', reason: 'cordage dev stopped' }).catch(() => {})
  await current.preset.settled()
  await edits
  await current.reloader.settled()
  await current.app.stop()
  io.err('stopped')
  return ExitCodes.ok
}

/**
 * A reload of the preset: what was swapped (stdout), or why nothing changed (stderr); with `json`, as a
 * `preset/reloaded` line on stdout.
 */
export function printPreset(result: PresetReload, shown: string, io: Output, json = false): void {
  if (json) io.out(JSON.stringify({ type: 'preset/reloaded', ...result }))
  else if (result.ok && result.replan) io.out(`preset ${shown} reloaded: ${result.replan.join('; ')}: agents planned again and restarted`)
  else if (result.ok)
    for (const s of result.swapped)
      io.out(`preset ${shown}: reloaded ${s.name} in ${s.agent} (${s.changed.join(', ')}): ${s.from} → ${s.to}`)
  else
    io.err(
      `preset ${shown} edit not applied${result.code ? ` [${result.code}]` : ''}: ${result.message}\n  the agents keep running on the preset they were running`,
    )
}

/**
 * The `--debounce MS` flag (default 50).
 * @throws CordageError `invalid_input` when it is not a whole number ≥ 0
 */
export function debounceOf(flags: Parsed['flags']): number {
  const debounceMs = flags.debounce === undefined ? 50 : Number(flags.debounce)
  if (!Number.isInteger(debounceMs) || debounceMs < 0)
    throw new CordageError('invalid_input', `--debounce must be a whole number of milliseconds ≥ 0, got ${JSON.stringify(flags.debounce)}`)
  return debounceMs
}

/** The folders watched, on stderr: `watching N plugin folder(s) of PRESET (Ctrl-C to stop):`, then one line per folder with its users. */
export function printWatching(reloader: DevReloader, io: Output): void {
  const folders = [...reloader.folders.values()]
  io.err(`watching ${folders.length} plugin folder(s) of ${reloader.app.preset.shown} (Ctrl-C to stop):`)
  for (const folder of folders)
    io.err(`  ${relative(process.cwd(), folder.dir) || '.'}  ${folder.users.map((u) => `${u.agent}:${u.name}`).join(', ')}`)
}

/** One reload: a line on stdout when it worked, the error and what keeps serving on stderr when not; with `json`, the event as JSON on stdout. */
export function printReload(event: PluginEvent, io: Output, json = false): void {
  if (json) io.out(JSON.stringify({ type: 'plugin/reloaded', ...event }))
  else if (event.ok)
    io.out(
      `reloaded ${event.name} in ${event.agent}: ${event.from?.version} → ${event.to?.version}  ${short(event.from?.hash)} → ${short(event.to?.hash)}  ${event.durationMs}ms`,
    )
  else
    io.err(
      `reload of ${event.name} failed in ${event.agent} [${event.code}]: ${event.message}${event.failClosed ? '' : `\n  ${event.name}@${event.version} (${short(event.from?.hash)}) keeps serving`}`,
    )
}

function short(hash: string | undefined): string {
  return hash ? hash.slice(0, 15) : 'unknown'
}
