/**
 * @module playground/feed
 * The plugin events of this process (plugin/loaded, plugin/disposed, plugin/failed, and
 * plugin/reloaded where the host emits it), numbered in the order they arrived, and the playground's
 * own `plugin/swapped` record of each swap asked for through its API, with who asked (api.ts). Plugin
 * events are not stored anywhere, so the feed keeps the most recent ones in memory for the page to
 * catch up on.
 */
import type { Context } from 'cordis'
import { PluginEventTypes } from 'cordage'

/** The types the feed listens for. `plugin/reloaded` is the hot-reload event; listening for it costs nothing where it does not exist. */
export const FeedTypes: readonly string[] = [...new Set<string>([...PluginEventTypes, 'plugin/reloaded'])]

export interface FeedEntry {
  /** 1, 2, 3, ... in arrival order: the SSE id a page resumes after. */
  id: number
  time: number
  type: string
  data: Record<string, unknown>
}

export class PluginFeed {
  private entries: FeedEntry[] = []
  private next = 1
  private listeners = new Set<(entry: FeedEntry) => void>()

  constructor(private readonly keep = 500) {}

  /** Listen on a cordis root (before the preset loads, so the first plugin/loaded events are kept). */
  attach(root: Context): void {
    for (const type of FeedTypes) {
      // Not every type is declared in cordis' Events (plugin/reloaded may not exist in this version).
      ;(root.on as (name: string, listener: (event: unknown) => void) => () => void)(type, (event) => this.push(type, event))
    }
  }

  push(type: string, event: unknown): void {
    const entry: FeedEntry = { id: this.next++, time: Date.now(), type, data: { ...(event as Record<string, unknown>) } }
    this.entries.push(entry)
    if (this.entries.length > this.keep) this.entries.shift()
    for (const listener of this.listeners) listener(entry)
  }

  /** Entries after `id`, oldest first. */
  after(id: number): FeedEntry[] {
    return this.entries.filter((e) => e.id > id)
  }

  subscribe(listener: (entry: FeedEntry) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
