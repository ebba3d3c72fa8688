/**
 * @module kit/swap-state
 * State a plugin hands to its next version when it is swapped (a hot reload in `cordage dev`, or
 * `Cordage.swap` to another version of the same plugin). A plugin is disposed and applied from scratch
 * on a swap, so anything it keeps in memory is lost unless it says what to keep. The host does the
 * hand-over (core/host/app.ts swap) while the kernel's step gate holds every run of the agent at a step
 * boundary: it asks the old version for a snapshot, copies it (plain data only), and gives it to the
 * new version while that version starts. `cordage` exports the plugin's side ({@link swapState}), so
 * it sits below the kernel rather than in the host; this file is not part of `cordage/kit`.
 *
 * @example
 * export default definePlugin(manifest, (ctx) => {
 *   const seen = new Map<string, number>()
 *   swapState<{ seen: [string, number][] }>(ctx, {
 *     snapshot: () => ({ seen: [...seen] }),
 *     restore: (state) => { for (const [k, v] of state.seen ?? []) seen.set(k, v) },
 *   })
 * })
 */
import type { Context } from 'cordis'
import { AgentKey } from '../contracts/manifest.ts'

export interface SwapState<S = unknown> {
  /**
   * What the next version should get. Called once, at a step boundary of every run of the agent, just
   * before this version is disposed by a swap.
   *
   * Contract: synchronous, no side effects; returns plain data (it is copied with `structuredClone`,
   * so functions, class instances with behaviour and open handles do not survive). A throw, or a value
   * that cannot be copied, cancels the swap: the old version keeps serving, and the error is reported.
   */
  snapshot(): S
  /**
   * Take over the previous version's snapshot. Called at most once, synchronously from inside
   * {@link swapState}, while the new version's apply runs; not called when the previous version had no
   * snapshot (a fresh start). The state may come from an older (or newer) version of the plugin:
   * check its shape, or put a version number in it.
   *
   * Contract: a throw fails the new version's start; the old version is plugged back and gets the same
   * snapshot through its own `restore`.
   */
  restore?(state: S): void
}

/** The snapshot hook of each running plugin, by its cordis fork. */
const hooks = new WeakMap<object, SwapState>()
/** State waiting for the next version of a plugin of an agent, while that version starts. */
const incoming = new Map<string, { state: unknown }>()

/**
 * Register this plugin's snapshot hook and, when it replaces a version that left state, restore it.
 * Call it from `apply`, with the `ctx` apply received.
 */
export function swapState<S>(ctx: Context, hook: SwapState<S>): void {
  const scope = (ctx as unknown as { scope?: { runtime?: { plugin?: { manifest?: { name?: string } } } } }).scope
  if (!scope) return
  hooks.set(scope, hook as SwapState)
  const key = keyOf((ctx as unknown as Record<symbol, string | undefined>)[AgentKey], scope.runtime?.plugin?.manifest?.name)
  const waiting = key ? incoming.get(key) : undefined
  if (waiting && hook.restore) {
    incoming.delete(key!)
    hook.restore(waiting.state as S)
  }
}

/**
 * The former name of {@link swapState}, kept so plugins written against it still load: "handover" read
 * too much like a run's handoff to another agent.
 * @deprecated use swapState
 */
export const handover = swapState
/** @deprecated use SwapState */
export type Handover<S = unknown> = SwapState<S>

/**
 * Host side: ask the plugin running in `fork` for its state, copied. `undefined` when it registered no
 * hook. Throws what snapshot threw, or a DataCloneError for state that is not plain data.
 */
export function takeSnapshot(fork: object): { state: unknown } | undefined {
  const hook = hooks.get(fork)
  if (!hook) return undefined
  return { state: structuredClone(hook.snapshot()) }
}

/** Host side: offer `state` to the version of `plugin` that starts in `agent` while `start` runs. */
export async function offerState<T>(
  agent: string,
  plugin: string,
  snapshot: { state: unknown } | undefined,
  start: () => Promise<T>,
): Promise<T> {
  const key = keyOf(agent, plugin)!
  if (snapshot) incoming.set(key, { state: structuredClone(snapshot.state) })
  try {
    return await start()
  } finally {
    incoming.delete(key)
  }
}

function keyOf(agent: string | undefined, plugin: string | undefined): string | undefined {
  return agent !== undefined && plugin ? `${agent}\u0000${plugin}` : undefined
}
