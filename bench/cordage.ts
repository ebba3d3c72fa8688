/**
 * Cordage under the bench: a real agent context with the built-in store, context, tools, policy and
 * verifier plugins, a bench-only scripted model and a no-op tool (in the many-tools variant, among
 * others the model never calls, bench/many-tools.ts). Every kernel invariant is on in this
 * path: each call gets a recorded policy decision and a ticket, every event is appended to the store
 * with its seq and dispatched, budgets are checked at every boundary.
 *
 * The model is written here rather than taken from plugins/model-scripted because that plugin copies
 * every request for tests to inspect; the peers' scripted models do no such thing.
 */
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { Context, type ForkScope } from 'cordis'
import { z } from 'zod'
import type { CordagePlugin, ModelRequest, ModelResponse, ModelService } from 'cordage'
import type { AgentRuntime } from '../core/kernel/agent.ts'
import { fillers } from './many-tools.ts'
import { gc, type Subject } from './measure.ts'

/**
 * The kernel and plugins as a user runs them: the compiled package (dist/, built here first), like the
 * peers, which run from their published JavaScript. `--source` takes the TypeScript sources through tsx
 * instead (slower: tsx keeps function names by wrapping every function it creates).
 */
export const compiled = !process.argv.includes('--source')

async function load() {
  const root = resolve(import.meta.dirname, '..')
  if (compiled) execFileSync(process.execPath, ['--import', 'tsx', resolve(root, 'build/dist.ts')], { stdio: 'ignore' })
  const at = (path: string) => (compiled ? `../dist/${path}.js` : `../${path}.ts`)
  const module = async (path: string) => await import(at(path))
  const plugin = async (name: string) => (await module(`plugins/${name}/index`)).default as CordagePlugin
  return {
    api: (await module('core/index')) as typeof import('cordage'),
    AgentRuntime: (await module('core/kernel/agent')).AgentRuntime as typeof import('../core/kernel/agent.ts').AgentRuntime,
    KernelWriter: (await module('core/kernel/store-writer')).KernelWriter as typeof import('../core/kernel/store-writer.ts').KernelWriter,
    storeMemory: await plugin('store-memory'),
    contextBasic: await plugin('context-basic'),
    toolsRegistry: await plugin('tools-registry'),
    policyRules: await plugin('policy-rules'),
    verifierBasic: await plugin('verifier-basic'),
  }
}
const kernel = await load()
const { createAgentContext, defineTool, definePlugin } = kernel.api

/** Calls the no-op tool until step `steps`, then answers. The step index comes from the kernel. */
class ScriptModel implements ModelService {
  steps = 1
  async respond(request: ModelRequest): Promise<ModelResponse> {
    const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 }
    if (request.stepIndex < this.steps) return { decision: { kind: 'tool_calls', calls: [{ name: 'noop', args: {} }] }, usage }
    return { decision: { kind: 'final', text: 'done' }, usage }
  }
}

const modelPlugin = definePlugin({ name: 'bench-model', version: '1.0.0', provides: { model: '1.0.0' } }, (ctx, model: ScriptModel) => {
  ctx.set('model', model)
})

/** Calls of the no-op tool body, so a run whose calls were all refused cannot pass for a good one. */
let toolRuns = 0

const noop = defineTool({
  name: 'noop',
  description: 'does nothing',
  input: z.object({}),
  sideEffect: 'none',
  run: () => {
    toolRuns++
    return { output: null, observation: 'ok' }
  },
})

/** The no-op tool and `count - 1` others (bench/many-tools.ts), defined once per count and registered by every harness. */
const toolSets = new Map<number, ReturnType<typeof defineTool>[]>()
function toolSet(count: number) {
  let set = toolSets.get(count)
  if (!set) {
    const others = fillers(count).map((filler) =>
      defineTool({
        name: filler.name,
        description: filler.description,
        input: z.object({ query: z.string(), limit: z.number() }),
        sideEffect: 'none',
        run: () => {
          throw new Error(filler.refusal)
        },
      }),
    )
    toolSets.set(count, (set = [noop, ...others]))
  }
  return set
}

const noopPlugin = definePlugin(
  { name: 'bench-noop', version: '1.0.0', requires: { tools: '^1.0.0' } },
  (ctx, config: { tools: number }) => {
    for (const tool of toolSet(config.tools)) ctx.tools.register(tool)
  },
)

/**
 * The host validates config and fills defaults from each manifest's schema before plugging; plugging
 * directly, the bench does the same so every plugin gets the complete config it expects.
 */
function configured(plugin: CordagePlugin, partial: unknown = {}): [CordagePlugin, unknown] {
  return [plugin, plugin.manifest.config ? plugin.manifest.config(partial) : partial]
}

export interface Harness {
  agent: AgentRuntime
  model: ScriptModel
  forks: ForkScope[]
}

/**
 * A fresh root, agent context and plugins: an agent as the host would build it, with an empty store and
 * `tools` registered tools (the no-op tool and `tools - 1` that are never called).
 */
export async function buildHarness(tools = 1): Promise<Harness> {
  const ctx = createAgentContext(new Context(), 'bench')
  const model = new ScriptModel()
  const plugins: [CordagePlugin, unknown][] = [
    configured(kernel.storeMemory),
    configured(kernel.contextBasic),
    configured(kernel.toolsRegistry),
    configured(kernel.policyRules, { rules: [{ id: 'all', verdict: 'allow', match: {} }], default: 'deny' }),
    configured(kernel.verifierBasic, { pattern: 'x', minCount: 0, mustBeObserved: false, repairable: false }),
    [modelPlugin, model],
    [noopPlugin, { tools }],
  ]
  const forks = plugins.map(([plugin, config]) => ctx.plugin(plugin, config))
  // Every plugin here starts synchronously; one turn of the event loop lets cordis finish applying them.
  await new Promise((resolve) => setImmediate(resolve))
  for (const fork of forks)
    if (fork.error || !fork.isActive) throw new Error(`cordage: a bench plugin did not start: ${fork.error ?? 'inactive'}`)
  return {
    agent: new kernel.AgentRuntime(ctx, { writer: kernel.KernelWriter, name: 'bench', budgets: { maxSteps: 1_000_000 } }),
    model,
    forks,
  }
}

export async function runOnce(h: Harness, steps: number): Promise<void> {
  h.model.steps = steps
  const before = toolRuns
  const state = await h.agent.run('task', { budgets: { maxSteps: steps + 1 } })
  if (state.status !== 'COMPLETED' || state.steps !== steps || toolRuns - before !== steps - 1) {
    throw new Error(
      `cordage: run ended ${state.status} after ${state.steps} of ${steps} steps, ${toolRuns - before} tool calls (${state.failureCode ?? ''} ${state.reason ?? ''})`,
    )
  }
}

/**
 * The memory store keeps every run for the life of the process. Left alone, thousands of timed runs
 * would grow the heap by hundreds of MB and the bench would end up measuring the collector; the peers
 * keep nothing between runs. So the harness is rebuilt (untimed) every `recycleEvery` runs. What the
 * store keeps is measured separately, by {@link retainedPerRun}.
 */
export async function cordageSubject(recycleEvery = 200, tools = 1): Promise<Subject> {
  let h = await buildHarness(tools)
  let runs = 0
  return {
    name: 'Cordage',
    run: (steps) => runOnce(h, steps),
    async between() {
      if (++runs % recycleEvery !== 0) return
      for (const fork of h.forks) fork.dispose()
      h = await buildHarness(tools)
    },
  }
}

/**
 * Heap kept per finished run: `runs` runs of `steps` steps on a fresh harness, each run reachable only
 * as the store keeps it (its events and summary). Full collections before and after; the difference
 * divided by the number of runs. Some runs go first so that code and caches exist and are not
 * counted as kept by the store.
 */
export async function retainedPerRun(steps: number, runs: number): Promise<{ bytesPerRun: number; stored: number }> {
  const h = await buildHarness()
  const first = 20
  for (let i = 0; i < first; i++) await runOnce(h, steps)
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < runs; i++) await runOnce(h, steps)
  gc()
  const after = process.memoryUsage().heapUsed
  const stored = (await h.agent.store().list({ limit: Infinity })).length
  if (stored !== runs + first) throw new Error(`cordage: the store holds ${stored} runs, expected ${runs + first}`)
  return { bytesPerRun: (after - before) / runs, stored }
}
