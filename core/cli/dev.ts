/**
 * @module cli/dev
 * `cordage dev`: load a preset, watch the folders of the plugins its agents use, and hot-reload a
 * plugin into every agent that uses it when its files change (core/host/dev.ts). Each reload is printed
 * (ok, or why the old version still serves). With `--task`, the agent runs the task at start and again
 * after each successful reload, so an edit shows up in the next run's events. Runs until Ctrl-C.
 * `cordage playground --watch` runs the same reloader in the playground process: {@link debounceOf},
 * {@link printWatching} and {@link printReload} are shared with it, so both commands print the same lines.
 */
import { relative } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import { RunEventTypes, type PluginEvent, type RunEvent } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import { DevReloader } from '../host/dev.ts'
import type { Parsed } from './args.ts'
import { ExitCodes } from './exit-codes.ts'
import { formatEvent } from './format.ts'
import type { Output } from './output.ts'

/**
 * The `dev` command. `open` loads the preset the way every other command does (main.ts owns preset
 * flags and defaults), with only the agents named.
 */
export async function dev(
  { flags }: Parsed,
  io: Output,
  open: (flags: Parsed['flags'], agents?: string[]) => Promise<Cordage>,
): Promise<number> {
  const debounceMs = debounceOf(flags)
  const task = flags.task as string | undefined
  if (task !== undefined && !task.trim()) throw new CordageError('invalid_input', '--task is empty')
  const json = !!flags.json
  const app = await open(flags, flags.agent ? [String(flags.agent)] : undefined)
  const reloader = await DevReloader.start(app, { debounceMs }).catch(async (error) => {
    await app.stop()
    throw error
  })

  const agent = app.agent((flags.agent as string | undefined) ?? app.agentNames()[0])
  let runId: string | undefined
  let running: Promise<unknown> | undefined
  const startRun = () => {
    if (task === undefined || running) return
    const handle = agent.start(task)
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
  for (const type of RunEventTypes) {
    app.root.on(type, (event: RunEvent) => {
      if (event.runId === runId) io.out(json ? JSON.stringify(event) : formatEvent(event, io.color))
    })
  }
  app.root.on('plugin/reloaded', (event: PluginEvent) => {
    printReload(event, io, json)
    if (event.ok && event.agent === agent.name) startRun()
  })

  printWatching(reloader, io)
  startRun()

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  reloader.stop()
  if (runId && running) await agent.cancel(runId, { by: 'cli', reason: 'cordage dev stopped' }).catch(() => {})
  await reloader.settled()
  await app.stop()
  io.err('stopped')
  return ExitCodes.ok
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
