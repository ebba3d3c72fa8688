/**
 * @module host/preset-reload
 * `cordage dev` follows edits of its preset: the preset file, its bases (`extends`) and its lock are
 * watched; on a change the preset is read and checked again with the same `--set` overrides (by default
 * those the app was loaded with, `--model`'s included) and lock rule as at start, and what changed is
 * applied all or nothing (host/preset-diff.ts):
 * - a plugin whose config or version changed is swapped at the next step boundary ({@link Cordage.swap});
 *   the whole new plan of each agent is checked before the first swap, and if a swap still fails to
 *   start, the swaps already made are undone: never half of an edit. Should an undo fail too, the agents
 *   run part of the edit: that is reported (`partial`), and every later edit asks for a new plan, as
 *   what runs no longer is the preset last read;
 * - anything else (a plugin added or removed, another model, agent settings, a swap that changes the
 *   secrets the runs scrub) needs the agent planned
 *   again: nothing is applied, and the result says why, for the caller to rebuild the app or refuse;
 * - an edit that does not read, does not check, or no longer matches the lock is reported and changes
 *   nothing: the agents go on with the preset they run.
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { semver } from './semver.ts'
import { CordageError, type Code } from '../contracts/errors.ts'
import type { Cordage } from './app.ts'
import type { CatalogEntry, PluginCatalog } from './catalog.ts'
import { applyLock, lockFileOf, readLock } from './lock.ts'
import { presetChanges, secretsChanged, type PluginChange, type PresetView } from './preset-diff.ts'
import { loadPreset, type Preset } from './preset.ts'
import { planAgent, type PlannedPlugin } from './resolve.ts'
import type { SwapTarget } from './swap-spec.ts'
import { watchTree, type TreeWatch } from './watch-tree.ts'

export interface PresetReloadOptions {
  /** The `--set` overrides applied again to each edit; by default those the app was loaded with (`app.preset.sets`). */
  sets?: readonly string[]
  /** Whether the preset's lock is in force (it is unless `--no-lock`). Default true. */
  lock?: boolean
  /** Quiet time after the last change before the preset is read again (default 50 ms). */
  debounceMs?: number
  /** Watch the files (default true). Off, edits are applied only through {@link PresetWatcher.reload}. */
  watch?: boolean
  /** Each reload that found a change, applied or not. */
  onReload?: (result: PresetReload) => void
}

/** One reload of the preset. */
export interface PresetReload {
  /** The edit was applied (or asked for nothing). */
  ok: boolean
  /** The plugins swapped: `name@version` before and after. */
  swapped: { agent: string; name: string; changed: PluginChange['changed']; from: string; to: string }[]
  /** Why the edit needs the agents planned again; set only when that is why nothing was applied. */
  replan?: string[]
  /**
   * A swap failed and undoing the swaps made before it failed too: the agents run part of this edit.
   * Every later edit asks for a new plan ({@link PresetReload.replan}) until the app is rebuilt.
   */
  partial?: true
  code?: Code
  message?: string
  durationMs: number
}

interface Read extends PresetView {
  preset: Preset
}

export class PresetWatcher {
  private watchers = new Map<string, TreeWatch>()
  private names = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  private running: Promise<PresetReload | undefined> = Promise.resolve(undefined)
  private stopped = false
  /** Set when an edit was left applied in part: what runs is no longer `current`, so no diff from it holds. */
  private partial: string | undefined

  private constructor(
    readonly app: Cordage,
    private current: Read,
    private readonly options: PresetReloadOptions,
  ) {}

  /**
   * Follow the preset `app` was loaded from.
   * @throws what reading it throws (it was just read, so rarely); `watch_failed` when its folder cannot be watched
   */
  static async start(app: Cordage, options: PresetReloadOptions = {}): Promise<PresetWatcher> {
    // Each edit is read with the overrides the app was loaded with unless told otherwise: an edit must not drop them.
    const own = { ...options, sets: options.sets ?? app.preset.sets }
    const current = await read(app.preset.file, own, app.catalog)
    const watcher = new PresetWatcher(app, current, own)
    if (options.watch ?? true) watcher.follow(current.preset)
    return watcher
  }

  /** The files followed: the preset, its bases and its lock (which need not exist yet). */
  get files(): string[] {
    return [...this.names]
  }

  /** Read the preset again and apply what changed. Reloads run one at a time; never throws (the result says). */
  reload(): Promise<PresetReload | undefined> {
    const next = this.running.then(() => this.apply())
    this.running = next.catch(() => undefined)
    return next
  }

  /** Wait until no reload is pending or running. */
  async settled(): Promise<void> {
    while (this.timer) await new Promise((r) => setTimeout(r, this.options.debounceMs ?? 50))
    await this.running
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
    for (const w of this.watchers.values()) w.close()
    this.watchers.clear()
  }

  /**
   * The folders of the files are watched, not the files (host/watch-tree.ts): an editor that saves by
   * writing a new file and renaming it over the old one would leave a watch on the file with nothing
   * to report. A folder that can no longer be watched is reported as a failed reload (`watch_failed`).
   * @throws CordageError `watch_failed` when a folder cannot be watched
   */
  private follow(preset: Preset): void {
    const files = [...preset.layers.map((shown) => resolve(shown)), ...(this.options.lock === false ? [] : [lockFileOf(preset.file)])]
    this.names = new Set(files)
    for (const dir of new Set(files.map(dirname))) {
      if (this.watchers.has(dir)) continue
      const tree = watchTree(dir, {
        recursive: false,
        file: (name) => this.names.has(resolve(dir, name)),
        onChange: () => this.changed(),
        onError: (error) => {
          this.watchers.delete(dir)
          this.lost(error)
        },
      })
      this.watchers.set(dir, tree)
    }
    for (const [dir, tree] of this.watchers)
      if (!files.some((f) => dirname(f) === dir)) {
        tree.close()
        this.watchers.delete(dir)
      }
  }

  /** Edits of the preset are no longer followed (a folder of its files went away): said as a reload that failed. */
  private lost(error: CordageError): void {
    if (this.stopped) return
    this.options.onReload?.({
      ok: false,
      swapped: [],
      code: error.code,
      message: `${error.message}: edits of ${this.current.preset.shown} are no longer followed; restart to follow them again`,
      durationMs: 0,
    })
  }

  private changed(): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.reload().then((result) => result && this.options.onReload?.(result))
    }, this.options.debounceMs ?? 50)
  }

  private async apply(): Promise<PresetReload | undefined> {
    const since = Date.now()
    const done = (result: Omit<PresetReload, 'durationMs'>): PresetReload => ({ ...result, durationMs: Date.now() - since })
    let next: Read
    const text = snapshot(this.current.preset.file)
    try {
      next = await read(this.current.preset.file, this.options, this.app.catalog)
    } catch (error) {
      // Caught half written (an editor that truncates the file, then writes it): the file changes again,
      // and that change is the edit. Only a failure of a file that stays as it was is reported.
      await new Promise((r) => setTimeout(r, this.options.debounceMs ?? 50))
      if (this.timer || snapshot(this.current.preset.file) !== text) {
        this.changed()
        return undefined
      }
      return done({ ok: false, swapped: [], ...failure(error) })
    }
    if (!this.stopped && (this.options.watch ?? true)) {
      try {
        this.follow(next.preset)
      } catch (error) {
        // A base the edit added sits in a folder that cannot be watched: say so, and apply the edit all the same.
        if (CordageError.is(error)) this.lost(error)
        else throw error
      }
    }
    const live = Object.fromEntries(
      this.app.agentNames().map((a) => [a, this.app.entriesOf(a).map((e) => ({ name: e.name, dir: e.entry.dir }))]),
    )
    const { swaps, replan } = presetChanges(this.current, next, live)
    const planAgain = () =>
      done({ ok: false, swapped: [], replan, message: `${next.preset.shown}: ${replan.join('; ')}: the agents must be planned again` })
    if (this.partial) replan.unshift(`an earlier edit was applied only in part (${this.partial})`)
    if (replan.length) return planAgain()
    if (!swaps.length) {
      this.current = next
      return undefined
    }
    // The whole new plan of each agent is checked before anything is swapped.
    try {
      for (const agent of new Set(swaps.map((s) => s.agent))) {
        const plan = await planAgent(next.preset, next.specs[agent], this.app.catalog)
        const secrets = await this.secretsChange(agent, plan.plugins)
        if (secrets) replan.push(secrets)
      }
    } catch (error) {
      return done({ ok: false, swapped: [], ...failure(error) })
    }
    if (replan.length) return planAgain()
    const swapped: PresetReload['swapped'] = []
    const undo: { change: PluginChange; entry: CatalogEntry | undefined }[] = []
    for (const change of swaps) {
      const entry = this.app.entriesOf(change.agent).find((e) => e.name === change.name)?.entry
      try {
        const { from, to } = await this.app.swap(change.agent, change.name, target(change.after, change.changed, entry))
        swapped.push({ agent: change.agent, name: change.name, changed: change.changed, from, to })
        undo.push({ change, entry })
      } catch (error) {
        const { said, left } = await this.undo(undo)
        const failed = failure(error)
        const message = `${change.name} in agent "${change.agent}" did not start with the edited preset: ${failed.message}${said}`
        if (!left) return done({ ok: false, swapped: [], code: failed.code, message })
        this.partial = `${left} kept the edited config`
        return done({
          ok: false,
          swapped: [],
          partial: true,
          code: failed.code,
          message: `${message}; the agents now run part of this edit: the next edit plans them again (or restart cordage dev)`,
        })
      }
    }
    this.current = next
    return done({ ok: true, swapped })
  }

  /**
   * Swap back what an edit swapped before one of its swaps failed. `said` tells what was undone and what
   * could not be; `left` names the plugins that could not (undefined when all were).
   */
  private async undo(done: { change: PluginChange; entry: CatalogEntry | undefined }[]): Promise<{ said: string; left?: string }> {
    const left: string[] = []
    const why: string[] = []
    for (const { change, entry } of done.reverse()) {
      try {
        await this.app.swap(change.agent, change.name, target(change.before, change.changed, entry))
      } catch (error) {
        left.push(`${change.name} in "${change.agent}"`)
        why.push(`${change.name} in "${change.agent}" (${(error as Error)?.message ?? error})`)
      }
    }
    if (!done.length) return { said: '; nothing was changed' }
    return left.length
      ? { said: `; the plugins swapped before it could not all be swapped back: ${why.join('; ')}`, left: left.join(', ') }
      : { said: '; the plugins swapped before it were swapped back: nothing was changed' }
  }

  /**
   * Why swapping `agent` to the plugins of its new plan would change the secrets its runs scrub
   * (host/preset-diff.ts), compared with its plan from the preset it runs now. A plan that can no longer
   * be made (its plugin gone from the catalogue, say) cannot be compared: that is a new plan too.
   */
  private async secretsChange(agent: string, after: PlannedPlugin[]): Promise<string | undefined> {
    let before: PlannedPlugin[]
    try {
      before = (await planAgent(this.current.preset, this.current.specs[agent], this.app.catalog)).plugins
    } catch (error) {
      return `agent "${agent}": the plan it runs could not be made again to compare its secrets (${(error as Error)?.message ?? error})`
    }
    return secretsChanged(agent, before, after)
  }
}

/**
 * The swap that puts `ref` in place. The code that runs (`entry`: after a hot reload, the rebuilt one,
 * not the installed one) is kept when it fits: always for a config change, and for a version change
 * when it is in the new range (swapping back, say); otherwise the version is looked up again (with the
 * folder, for a `path` entry).
 */
function target(
  ref: { version: string; config: Record<string, unknown>; path?: string },
  changed: PluginChange['changed'],
  entry?: CatalogEntry,
): SwapTarget {
  if (!changed.includes('version')) return { config: ref.config, entry }
  const keep = entry && semver.satisfies(entry.manifest.version, ref.version) ? { entry } : {}
  return { version: ref.version, config: ref.config, ...(ref.path !== undefined ? { path: ref.path } : {}), ...keep }
}

/** The preset as `cordage dev` would load it now: its layers, the same --set overrides, and the lock unless --no-lock. */
async function read(file: string, options: PresetReloadOptions, catalog: PluginCatalog): Promise<Read> {
  const preset = loadPreset(file, { sets: options.sets })
  const locked = options.lock === false ? undefined : readLock(preset.file)
  const specs = locked ? await applyLock(preset, locked, catalog) : preset.agents
  return { preset, specs }
}

function failure(error: unknown): { code: Code; message: string } {
  return {
    code: CordageError.is(error) ? error.code : 'preset_invalid',
    message: (error as Error)?.message ?? String(error),
  }
}

/** The text of a file now, or undefined when it cannot be read (being replaced). */
function snapshot(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}
