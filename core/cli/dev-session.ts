/**
 * @module cli/dev-session
 * The live part of `cordage dev`: the app, the reloader of its plugin folders (host/dev.ts), the
 * follower of its preset (host/preset-reload.ts), and the `--task` runs. An edit of the preset that
 * needs the agents planned again replaces the app: the new one is loaded and started beside the old
 * one, which serves until then and is stopped after; with a run in flight the edit is refused instead
 * (a run is never moved to another plan half way).
 */
import { relative } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import { RunEventTypes, type PluginEvent, type RunEvent, type RunOverrides } from '../contracts/events.ts'
import type { Cordage } from '../host/app.ts'
import { DevReloader } from '../host/dev.ts'
import { PresetWatcher, type PresetReload } from '../host/preset-reload.ts'
import type { AgentRuntime } from '../kernel/agent.ts'
import type { Parsed } from './args.ts'
import { printPreset, printReload, printWatching } from './dev-output.ts'
import { formatEvent } from './format.ts'
import type { Output } from './output.ts'
import { reportError } from './errors.ts'

export interface DevSessionOptions {
  flags: Parsed['flags']
  io: Output
  /** Load the preset as every command does (main.ts: --preset, --set, --no-lock, --model), with only these agents. */
  open: (flags: Parsed['flags'], agents?: string[]) => Promise<Cordage>
  /** What run/start records of --model. */
  overridesOf: (agent: AgentRuntime, flags: Parsed['flags']) => RunOverrides | undefined
  task: string | undefined
  debounceMs: number
}

/** One loaded app and what follows it: its plugin folders, its preset files, the agent dev runs. */
interface Attached {
  app: Cordage
  reloader: DevReloader
  preset: PresetWatcher
  agent: AgentRuntime
}

export class DevSession {
  private runId: string | undefined
  private running: Promise<unknown> | undefined
  /** Set while the app is being replaced: no run starts on the old one. */
  private replacing = false
  /** Preset reloads are handled one at a time, in order. */
  private edits: Promise<unknown> = Promise.resolve()
  private current!: Attached

  private constructor(private readonly o: DevSessionOptions) {}

  /** Load the preset, watch it and its plugins, and start the `--task` run. */
  static async start(options: DevSessionOptions): Promise<DevSession> {
    const session = new DevSession(options)
    session.current = await session.attach(await options.open(options.flags, session.agents))
    printWatching(session.current.reloader, options.io)
    options.io.err(`following edits of ${session.current.preset.files.map((f) => relative(process.cwd(), f) || f).join(', ')}`)
    session.startRun()
    return session
  }

  /** Stop watching, cancel a `--task` run still going, and stop the app. */
  async stop(): Promise<void> {
    const { app, reloader, preset, agent } = this.current
    reloader.stop()
    preset.stop()
    if (this.runId && this.running) await agent.cancel(this.runId, { by: 'cli', reason: 'cordage dev stopped' }).catch(() => {})
    await preset.settled()
    await this.edits
    await reloader.settled()
    await app.stop()
  }

  private get agents(): string[] | undefined {
    return this.o.flags.agent ? [String(this.o.flags.agent)] : undefined
  }

  private startRun(): void {
    const { task, io, flags } = this.o
    if (task === undefined || this.running || this.replacing) return
    const { agent } = this.current
    const handle = agent.start(task, { overrides: this.o.overridesOf(agent, flags) })
    this.runId = handle.runId
    this.running = handle.done
      .then(
        (state) => io.err(`run ${state.runId} ${state.status}${state.failureCode ? ` (${state.failureCode})` : ''}`),
        (error) =>
          flags.json
            ? reportError(io, error, { command: 'dev', flags, json: true })
            : io.err(`run failed: ${(error as Error)?.message ?? error}`),
      )
      .finally(() => {
        this.running = undefined
      })
  }

  private async attach(app: Cordage): Promise<Attached> {
    const { flags, io, debounceMs } = this.o
    const json = !!flags.json
    let reloader: DevReloader | undefined
    try {
      reloader = await DevReloader.start(app, { debounceMs })
      const preset: PresetWatcher = await PresetWatcher.start(app, {
        // The overrides the app was loaded with (--set, and those --model became): each edit is read with them.
        sets: app.preset.sets,
        lock: !flags['no-lock'],
        debounceMs,
        // A result of a watcher that was replaced meanwhile is stale: the new app read the file after it.
        onReload: (result) => {
          this.edits = this.edits
            .then(() => (this.current.preset === preset ? this.onPreset(result) : undefined))
            .catch((error) =>
              json
                ? reportError(io, error, { command: 'dev', flags, json })
                : io.err(`preset reload failed: ${(error as Error)?.message ?? error}`),
            )
        },
      })
      const agent = app.agent((flags.agent as string | undefined) ?? app.agentNames()[0])
      for (const type of RunEventTypes) {
        app.root.on(type, (event: RunEvent) => {
          if (event.runId === this.runId) io.out(json ? JSON.stringify(event) : formatEvent(event, io.color))
        })
      }
      app.root.on('plugin/reloaded', (event: PluginEvent) => {
        printReload(event, io, json)
        if (event.ok && event.agent === agent.name) this.startRun()
      })
      return { app, reloader, preset, agent }
    } catch (error) {
      reloader?.stop()
      await app.stop()
      throw error
    }
  }

  private async onPreset(result: PresetReload): Promise<void> {
    const shown = this.current.app.preset.shown
    const print = (r: PresetReload) => printPreset(r, shown, this.o.io, !!this.o.flags.json)
    if (result.ok) {
      print(result)
      // A version swap may run the plugin from another folder: watch the folders the agents use now.
      if (result.swapped.some((s) => s.changed.includes('version'))) {
        this.current.reloader.stop()
        await this.current.reloader.settled()
        this.current.reloader = await DevReloader.start(this.current.app, { debounceMs: this.o.debounceMs })
      }
      this.startRun()
    } else if (!result.replan) {
      print(result)
    } else if (this.running) {
      print({
        ...result,
        message: `${result.message}; run ${this.runId} is in flight, so nothing changed: restart cordage dev, or save the preset again once the run has ended`,
      })
    } else {
      await this.replan(result, print)
    }
  }

  /** Load the edited preset into a new app; the old one serves until the new one has started. */
  private async replan(result: PresetReload, print: (r: PresetReload) => void): Promise<void> {
    this.replacing = true
    try {
      let next: Attached
      try {
        next = await this.attach(await this.o.open(this.o.flags, this.agents))
      } catch (error) {
        const code = CordageError.is(error) ? error.code : 'preset_invalid'
        return print({ ...result, code, message: (error as Error)?.message ?? String(error) })
      }
      const old = this.current
      this.current = next
      old.reloader.stop()
      old.preset.stop()
      await old.reloader.settled()
      await old.app.stop()
      print({ ok: true, swapped: [], replan: result.replan, durationMs: result.durationMs })
      printWatching(next.reloader, this.o.io)
    } finally {
      this.replacing = false
    }
    this.startRun()
  }
}
