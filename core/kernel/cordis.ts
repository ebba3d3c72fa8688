/**
 * @module cordis
 * The kernel's only contact with cordis internals, kept in one place and pinned to cordis 3.18.
 *
 * Why not just `ctx.emit` and `ctx.policy`: on cordis 3.18 every access to a context property that is
 * not an own property builds an `Error` for a possible "not injected" warning, and services and
 * listeners are wrapped in tracing proxies. Measured on Node 20: `ctx.emit` ~25 us per call even with no
 * listener, `ctx.<service>` ~15-19 us per access. The loop emits about ten events and touches six
 * services per step, which alone would cost several times Pi's whole per-step overhead. So the loop
 * reads services straight from the reflect store once per step (~0.1 us) and dispatches an event only
 * when a hook for it exists. test/cordis-fast-path.test.ts checks both against the public API.
 */
import { Context, symbols } from 'cordis'
import type { ModelDeltaEvent, RunEvent } from '../contracts/events.ts'
import { deepFreeze } from '../kit/freeze.ts'
import { AgentKey } from '../contracts/manifest.ts'
export { AgentKey }

/** The kernel's service names. Each agent gets its own provider of each (isolated contexts). */
export const ServiceNames = Object.freeze([
  'model',
  'context',
  'tools',
  'policy',
  'verifier',
  'compactor',
  'progress',
  'guardrail',
  'store',
  'workspace',
  'agents',
  'embeddings',
  'meter',
  'waits',
] as const)
export type ServiceName = (typeof ServiceNames)[number]

/** A context whose kernel services are private to one agent. */
export function createAgentContext(root: Context, agent: string): Context {
  let ctx = root
  for (const name of ServiceNames) ctx = ctx.isolate(name)
  return ctx.extend({ [AgentKey]: agent })
}

export interface ServiceEntry<T = unknown> {
  value: T
  /** name@version of the plugin that set the service, or `unknown` when it was set outside a Cordage plugin. */
  provider: string
  /** The provider's manifest lists this service under `provides`. The loop uses no service that is not declared. */
  declared: boolean
}

/** The service as set by its provider (untraced), with who provided it; undefined when not provided. */
export function readService<T>(ctx: Context, name: string): ServiceEntry<T> | undefined {
  const item = (ctx as any)[symbols.store][(ctx as any)[symbols.isolate][name]] as { value: T; source: Context } | undefined
  if (!item || item.value === undefined || item.value === null) return undefined
  const owner = ownerOf(item.source)
  return { value: item.value, provider: owner.label, declared: owner.provides !== undefined && Object.hasOwn(owner.provides, name) }
}

interface Owner {
  label: string
  provides?: Record<string, string>
}

const owners = new WeakMap<object, Owner>()

/** Walk up from the context that set a service to the Cordage plugin that owns it. */
function ownerOf(source: Context): Owner {
  const cached = owners.get(source)
  if (cached) return cached
  let ctx: any = source
  let found: Owner = { label: 'unknown' }
  for (let hops = 0; ctx && hops < 16; hops++) {
    const manifest = ctx.runtime?.plugin?.manifest
    if (manifest?.name) {
      found = { label: `${manifest.name}@${manifest.version}`, provides: manifest.provides ?? {} }
      break
    }
    ctx = ctx.runtime?.parent
  }
  owners.set(source, found)
  return found
}

/** Name and version of the plugin that owns a context (for tools registered from it), or undefined. */
export function pluginOf(ctx: Context): string | undefined {
  const found = ownerOf(ctx).label
  return found === 'unknown' ? undefined : found
}

/**
 * The `this` for `ctx.emit(thisArg, ...)` that delivers an event only to listeners under the agent's
 * context and to listeners outside any agent (cordis filters hooks through `thisArg[Context.filter]`).
 */
export function agentFilter(agent: string): object {
  return { [Context.filter]: (ctx: any) => ctx[AgentKey] === undefined || ctx[AgentKey] === agent }
}

/** A listener of the agent's, and the plugin that registered it (name@version, or `unknown`). */
export interface Handler {
  callback: (...args: any[]) => any
  provider: string
}

export interface Dispatch {
  (event: RunEvent): void
  /** The agent's listeners of `type` (its own and those outside any agent), in the order they were added: a phase's handlers. */
  handlers(type: string): Handler[]
  /** True when some listener waits for one of these events: the loop then flushes early, so it sees them as they happen. */
  watched(types: readonly string[]): boolean
  /** Deliver a preview (`model/delta`) the same way: same agent filter, a throwing listener is only reported. */
  preview(type: 'model/delta', payload: ModelDeltaEvent): void
}

/**
 * Deliver run events of one agent to cordis listeners: listeners registered under another agent's
 * context are skipped, listeners outside any agent (the host, the CLI) receive every agent's events.
 * A listener that throws is reported through `internal/error` and does not disturb the run; events are
 * frozen before the first listener sees them.
 */
export function createDispatch(ctx: Context, agent: string): Dispatch {
  const lifecycle = (ctx.root as any).lifecycle
  const raw = lifecycle[symbols.original] ?? lifecycle
  type Hook = { ctx: any; callback: (...args: any[]) => any; global?: boolean }
  const hooksOf = raw._hooks as Record<string, Hook[]>
  /** The agent's own listeners, those outside any agent, and global ones. */
  const heard = (hook: Hook) => hook.global || hook.ctx[AgentKey] === undefined || hook.ctx[AgentKey] === agent
  const deliver = (type: string, payload: unknown) => {
    for (const hook of hooksOf[type].slice()) {
      if (!heard(hook)) continue
      try {
        hook.callback(payload)
      } catch (error) {
        ctx.emit(ctx, 'internal/error', error)
      }
    }
  }
  const dispatch = ((event: RunEvent) => {
    if (!hooksOf[event.type]?.length) return
    // The store may keep this very object: a listener must not be able to change the record.
    deepFreeze(event)
    deliver(event.type, event)
  }) as Dispatch
  dispatch.watched = (types) => types.some((type) => hooksOf[type]?.length)
  dispatch.handlers = (type) => {
    const hooks = hooksOf[type]
    if (!hooks?.length) return NoHandlers
    return hooks.filter(heard).map((hook) => ({ callback: hook.callback, provider: ownerOf(hook.ctx).label }))
  }
  dispatch.preview = (type, payload) => {
    if (hooksOf[type]?.length) deliver(type, Object.freeze(payload))
  }
  return dispatch
}

const NoHandlers: Handler[] = Object.freeze([]) as unknown as Handler[]

export { Context }
