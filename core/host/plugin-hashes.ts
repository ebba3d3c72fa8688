/**
 * @module host/plugin-hashes
 * The content hashes (host/plugin-hash.ts) of the plugins one app loads, computed once per folder.
 * Bundling for a hash starts esbuild, which costs more than the hash itself: an app starts every
 * plugin's hash at once, in esbuild's own process, while it goes on importing and starting plugins,
 * and waits for them only when it builds an agent's runtime.
 */
import type { CatalogEntry } from './catalog.ts'
import { pluginHash, pluginHashAsync } from './plugin-hash.ts'

type Hashed = Pick<CatalogEntry, 'dir' | 'entry' | 'hash'>

export class PluginHashes {
  private done = new Map<string, string>()
  private pending = new Map<string, Promise<string>>()

  /** The hash of `entry`, started now when it was not (a hot-reload build carries its own). */
  start(entry: Hashed): Promise<string> {
    if (entry.hash !== undefined) return Promise.resolve(entry.hash)
    const known = this.done.get(entry.dir)
    if (known !== undefined) return Promise.resolve(known)
    let pending = this.pending.get(entry.dir)
    if (!pending) {
      pending = pluginHashAsync(entry.dir, entry.entry).then((hash) => {
        if (this.pending.get(entry.dir) === pending) this.set(entry.dir, hash)
        return hash
      })
      // Awaited by whoever needs it (plugAgent); one nobody awaits must not be an unhandled rejection.
      pending.catch(() => {})
      this.pending.set(entry.dir, pending)
    }
    return pending
  }

  /** The hash of `entry` now: computed here (synchronously) when it is not known yet. */
  get(entry: Hashed): string {
    if (entry.hash !== undefined) return entry.hash
    let hash = this.done.get(entry.dir)
    if (hash === undefined) this.set(entry.dir, (hash = pluginHash(entry.dir, entry.entry)))
    return hash
  }

  /** Record the hash of the code a folder runs now (a hot reload swapped in new files). */
  set(dir: string, hash: string): void {
    this.pending.delete(dir)
    this.done.set(dir, hash)
  }
}
