/**
 * @module host/pinned-runtimes
 * Runtimes an app builds for one run each, with plugins pinned to the run's recorded versions
 * (`onDrift: pin`, host/app.ts forRun). Each lives in its own cordis scope and is released (plugins
 * unplugged, scope disposed, its service slots dropped) as soon as nothing runs on it, so an
 * application that lives for weeks does not keep one per pinned run.
 */
import { type Context, type ForkScope, symbols } from 'cordis'
import type { AgentRuntime } from '../kernel/agent.ts'
import { ServiceNames } from '../kernel/cordis.ts'
import { type LoadedPlugin, unplug } from './plug.ts'
import type { AgentPlan } from './resolve.ts'

/** An agent as an app loaded it: its runtime, context, plan and plugins. */
export interface LoadedAgent {
  runtime: AgentRuntime
  ctx: Context
  plan: AgentPlan
  plugins: LoadedPlugin[]
  /** A runtime pinned for one run lives in its own cordis scope: disposing it removes the runtime's listeners from the root. */
  scope?: ForkScope<Context>
}

export class PinnedRuntimes {
  private live = new Set<LoadedAgent>()

  constructor(private readonly root: Context) {}

  /** How many are loaded now. */
  get size(): number {
    return this.live.size
  }

  /** A scope for a runtime about to be built for one run. */
  scope(agent: string): ForkScope<Context> {
    return this.root.plugin({ name: `pinned:${agent}`, apply: () => {} })
  }

  add(agent: LoadedAgent): void {
    this.live.add(agent)
  }

  /** Release `agent` once nothing runs on it (its runtime's onIdle). */
  release(agent: LoadedAgent): void {
    // Deferred: whoever awaited the run's outcome reads it (and its runtime) before the plugins go.
    setImmediate(() => {
      if (!this.live.has(agent) || agent.runtime.running().length) return
      this.live.delete(agent)
      this.unplug(agent)
    })
  }

  /** Release every one, after its runs pause or end (the app stops). */
  async stop(): Promise<void> {
    for (const agent of [...this.live]) {
      this.live.delete(agent)
      await agent.runtime.idle()
      this.unplug(agent)
    }
  }

  /** Unplug a runtime built in its own scope (one pinned for a run, or an agent's store-only runtime) and drop its service slots. */
  unplug(agent: LoadedAgent): void {
    for (const p of [...agent.plugins].reverse()) unplug(agent.ctx, agent.plan.spec.name, p, 'stop')
    agent.scope?.dispose()
    // cordis keeps a slot ({ value: undefined, source }) at the root for each isolated service name
    // after its provider left, and the source holds the runtime: the slots of this runtime's own names go.
    const root = this.root as any
    const isolate = (agent.ctx as any)[symbols.isolate]
    for (const name of ServiceNames) if (isolate[name] !== root[symbols.isolate][name]) delete root[symbols.store][isolate[name]]
  }
}
