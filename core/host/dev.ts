/**
 * @module host/dev
 * Hot reload for `cordage dev` (and an embedding app such as the playground): watch the folders of
 * the plugins a preset's agents use, rebuild a folder when its files change, and swap the rebuilt
 * version into every agent that uses it at the next step boundary (through {@link Cordage.swap}: the
 * step in flight finishes on the old version, the rebuilt one is checked like a preset entry, a failed
 * start plugs the old version back, and a policy, guardrail or verifier never falls back to none).
 * Each attempt is a `plugin/reloaded` event per agent, ok or not; so is a folder that can no longer be
 * watched (`watch_failed`): hot reload never stops without saying so. Each folder is watched on its own
 * (host/watch-tree.ts), which follows files saved by renaming a new one over them.
 *
 * @example
 * const app = await Cordage.fromPreset('presets/default.yml')
 * const dev = await DevReloader.start(app)
 * app.root.on('plugin/reloaded', (e) => console.log(e.agent, e.name, e.ok ? e.to?.hash : e.message))
 * // … edit plugins/policy-rules/rules.ts …
 * dev.stop()
 */
import { agentFilter } from '../kernel/cordis.ts'
import { CordageError } from '../contracts/errors.ts'
import type { PluginEvent } from '../contracts/events.ts'
import type { Cordage } from './app.ts'
import type { CatalogEntry } from './catalog.ts'
import { buildPlugin, hashPlugin, type PluginBuild } from './reload-build.ts'
import { shipsInPlugin, walksPluginFolder } from './plugin-hash.ts'
import { watchTree, type TreeWatch } from './watch-tree.ts'

export interface DevOptions {
  /** Quiet time after the last file change before a folder is rebuilt (default 50 ms): an editor's save is several writes. */
  debounceMs?: number
  /** Watch the folders (default true). Off, reloads happen only through {@link DevReloader.reload}. */
  watch?: boolean
  /**
   * Called in {@link DevReloader.start} once the hash of folder `dir` is taken, before start goes on:
   * an edit saved here falls in the window between that hash and the end of start, which the watch
   * (set before the hash) must not miss (test/dev-reload.test.ts saves one here). Start waits for it.
   */
  hashed?: (dir: string) => void | Promise<void>
}

/** One plugin folder and the agents that run a plugin from it. */
export interface WatchedFolder {
  dir: string
  /** The entry module the folder is built from. */
  entry: Pick<CatalogEntry, 'dir' | 'entry' | 'origin'>
  users: { agent: string; name: string }[]
}

/** Files whose change means a rebuild; anything else (README.md, CHANGELOG.md, data the plugin reads) does not. */
const SourceFile = /\.(m?ts|m?js|cjs|cts|tsx|jsx|json)$/

export class DevReloader {
  readonly folders = new Map<string, WatchedFolder>()
  /** Bundle hash serving in each agent, by `agent\0dir`; unset while unknown (or after a fail-closed fallback). */
  private hashes = new Map<string, string | undefined>()
  private watchers: TreeWatch[] = []
  private timers = new Map<string, NodeJS.Timeout>()
  /** Time of the first change not yet picked up, per folder. */
  private since = new Map<string, number>()
  private running = new Map<string, Promise<PluginEvent[]>>()
  /** While {@link DevReloader.start} runs: the folders changed meanwhile, reloaded once it is done. */
  private starting: Set<string> | undefined
  private stopped = false

  private constructor(
    readonly app: Cordage,
    private readonly options: Required<DevOptions>,
  ) {}

  /**
   * Watch every plugin folder of the app's loaded agents, then take each folder's hash, so the first
   * reload can say what it replaced. The watches are set first: an edit saved while start runs is
   * seen, queued, and reloaded once start is done. Such a folder's hash may have been taken before or
   * after the edit, so it is unknown (hashOf is undefined) and the queued rebuild swaps whatever it
   * builds: comparing with a hash that may already hold the edit would drop it.
   * @throws CordageError `watch_failed` when a folder cannot be watched (nothing stays watched)
   */
  static async start(app: Cordage, options: DevOptions = {}): Promise<DevReloader> {
    const dev = new DevReloader(app, {
      debounceMs: options.debounceMs ?? 50,
      watch: options.watch ?? true,
      hashed: options.hashed ?? (() => {}),
    })
    for (const agent of app.agentNames()) {
      for (const { name, entry } of app.entriesOf(agent)) {
        const folder = dev.folders.get(entry.dir) ?? {
          dir: entry.dir,
          entry: { dir: entry.dir, entry: entry.entry, origin: entry.origin },
          users: [],
        }
        folder.users.push({ agent, name })
        dev.folders.set(entry.dir, folder)
      }
    }
    const seen = new Set<string>()
    dev.starting = seen
    try {
      if (dev.options.watch) for (const folder of dev.folders.values()) dev.watchFolder(folder)
      for (const folder of dev.folders.values()) {
        const hash = await hashPlugin(folder.dir, folder.entry.entry)
        for (const { agent } of folder.users) dev.hashes.set(key(agent, folder.dir), hash)
        await dev.options.hashed(folder.dir)
      }
    } catch (error) {
      // No watch is left behind by a start that fails (it would keep the process alive).
      dev.stop()
      throw error
    } finally {
      dev.starting = undefined
    }
    for (const dir of seen) {
      for (const { agent } of dev.folders.get(dir)!.users) dev.hashes.set(key(agent, dir), undefined)
      dev.changed(dir)
    }
    return dev
  }

  /** The bundle hash serving in `agent` from `dir`, when known. */
  hashOf(agent: string, dir: string): string | undefined {
    return this.hashes.get(key(agent, dir))
  }

  /**
   * Rebuild `dir` now and swap it into every agent that uses it. Resolves with the `plugin/reloaded`
   * events (one per agent; none when the bundle did not change). Never throws for a failed reload: the
   * failure is in the events. Reloads of one folder run one at a time.
   */
  reload(dir: string, since = Date.now()): Promise<PluginEvent[]> {
    const previous = this.running.get(dir) ?? Promise.resolve([])
    const next = previous.then(() => this.rebuild(dir, since))
    this.running.set(dir, next)
    void next.finally(() => {
      if (this.running.get(dir) === next) this.running.delete(dir)
    })
    return next
  }

  /** Wait until no reload is pending or running. */
  async settled(): Promise<void> {
    while (this.timers.size || this.running.size) {
      await Promise.all([...this.running.values()])
      if (this.timers.size) await new Promise((r) => setTimeout(r, this.options.debounceMs))
    }
  }

  /** Stop watching. Reloads already running finish. */
  stop(): void {
    this.stopped = true
    for (const watcher of this.watchers) watcher.close()
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.watchers = []
    this.timers.clear()
  }

  /**
   * Each folder of the plugin is watched on its own (host/watch-tree.ts), so a file saved by renaming a
   * new one over it is followed save after save. What the plugin's hash leaves out (its test/ folder,
   * node_modules, dot files, tests) is not watched either.
   * @throws CordageError `watch_failed` when the folder cannot be watched at the start
   */
  private watchFolder(folder: WatchedFolder): void {
    const tree = watchTree(folder.dir, {
      folder: walksPluginFolder,
      file: (path) => SourceFile.test(path) && shipsInPlugin(path),
      onChange: () => this.changed(folder.dir),
      onError: (error, stopped) => this.unwatched(folder, error, stopped),
    })
    this.watchers.push(tree)
  }

  /**
   * A folder that can no longer be watched is said, as a failed reload of each plugin it serves: edits
   * would otherwise stop reaching the agents without a word. What serves is not changed.
   */
  private unwatched(folder: WatchedFolder, error: CordageError, stopped: boolean): void {
    if (this.stopped) return
    for (const { agent, name } of folder.users) {
      const version = this.app.pluginsOf(agent)[name]
      const event: PluginEvent = {
        agent,
        name,
        dir: folder.dir,
        version,
        ok: false,
        from: { version, hash: this.hashes.get(key(agent, folder.dir)) },
        code: error.code,
        message: stopped
          ? `${error.message}: hot reload of ${name} stopped; put the folder back and restart to follow it again`
          : `${error.message}: edits there no longer reload ${name} until restarted`,
      }
      this.app.root.emit(agentFilter(agent), 'plugin/reloaded', event)
    }
  }

  private changed(dir: string): void {
    if (this.stopped) return
    if (this.starting) {
      this.starting.add(dir)
      return
    }
    if (!this.since.has(dir)) this.since.set(dir, Date.now())
    clearTimeout(this.timers.get(dir))
    this.timers.set(
      dir,
      setTimeout(() => {
        this.timers.delete(dir)
        const since = this.since.get(dir)!
        this.since.delete(dir)
        void this.reload(dir, since)
      }, this.options.debounceMs),
    )
  }

  private async rebuild(dir: string, since: number): Promise<PluginEvent[]> {
    const folder = this.folders.get(dir)
    if (!folder) throw new CordageError('plugin_not_found', `no agent of ${this.app.preset.shown} runs a plugin from ${dir}`)
    let build: PluginBuild | undefined
    let failure: unknown
    try {
      build = await buildPlugin(folder.entry)
    } catch (error) {
      failure = error
    }
    if (build && folder.users.every(({ agent }) => this.hashes.get(key(agent, dir)) === build!.hash)) return []

    const events: PluginEvent[] = []
    for (const { agent, name } of folder.users) {
      const before = this.app.pluginsOf(agent)[name]
      const from = { version: before, hash: this.hashes.get(key(agent, dir)) }
      const to = build ? { version: build.entry.manifest.version, hash: build.hash } : undefined
      let error = failure
      if (build && !error) {
        try {
          await this.app.swap(agent, name, { entry: build.entry })
          this.hashes.set(key(agent, dir), build.hash)
        } catch (swapError) {
          error = swapError
        }
      }
      const failClosed = CordageError.is(error) && (error.data as { failClosed?: boolean } | undefined)?.failClosed === true
      if (failClosed) this.hashes.set(key(agent, dir), undefined)
      const event: PluginEvent = {
        agent,
        name,
        dir,
        version: this.app.pluginsOf(agent)[name],
        ok: !error,
        from,
        ...(to ? { to } : {}),
        ...(error
          ? { code: CordageError.is(error) ? error.code : 'plugin_start_failed', message: (error as Error)?.message ?? String(error) }
          : {}),
        ...(failClosed ? { failClosed } : {}),
        durationMs: Date.now() - since,
      }
      this.app.root.emit(agentFilter(agent), 'plugin/reloaded', event)
      events.push(event)
    }
    return events
  }
}

function key(agent: string, dir: string): string {
  return `${agent}\u0000${dir}`
}
