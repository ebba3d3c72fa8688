/**
 * @module eval/replay-check
 * A case that would need a real side effect is refused before its run starts (docs/eval.md, "Replays"),
 * not discovered halfway through it: checked once the case's app is loaded (the tools and their
 * contracts are known), against the layer's plan (core/eval/replay.ts).
 * - Each tool the case declares a sandbox is a tool with side effects that some agent has, and the
 *   config of the plugin that registers it names no place outside the case's folder: no absolute path
 *   or `..` that leaves it, no URL. (A check of what the config says, not a proof: a plugin's default
 *   or its code may still reach out; declaring a sandbox is the case's word.)
 * - Each call with side effects the case's model will make (its script) has a recorded result or a
 *   sandbox; a model that is not scripted may call any tool, so each tool with side effects needs one.
 */
import { isAbsolute, relative, resolve } from 'node:path'
import { CordageError } from '../contracts/errors.ts'
import type { Tool } from '../contracts/services/tools.ts'
import type { Cordage, PluginRef } from '../host/index.ts'
import { digestArgs } from '../kit/hash.ts'
import type { EvalCase } from './case.ts'
import { hasSideEffects } from './replay.ts'

export interface CheckInput {
  app: Cordage
  /** The case's agent. */
  agent: string
  /** The case's scratch folder: everything a sandbox touches stays in it. */
  scratch: string
  /** The copy of the preset's folder in it (relative paths in configs are resolved against it). */
  presetDir: string
}

/** @throws CordageError `invalid_input` (a sandbox or recorded call naming no such tool) or `replay_refused` */
export function refuseRealEffects(c: EvalCase, input: CheckInput): void {
  const { app, agent } = input
  const toolsOf = new Map(app.agentNames().map((name) => [name, app.agent(name).ctx.tools.list()]))
  const all = [...toolsOf.values()].flat()
  const named = (name: string) => all.filter((t) => t.name === name)
  for (const name of c.sandbox) {
    const found = named(name)
    if (!found.length)
      throw new CordageError(
        'invalid_input',
        `${c.shown}: sandbox names ${name}, a tool no agent of the preset has (agent "${agent}" has ${toolsOf
          .get(agent)!
          .map((t) => t.name)
          .join(', ')})`,
      )
    if (!found.some(hasSideEffects))
      throw new CordageError(
        'invalid_input',
        `${c.shown}: sandbox names ${name}, which changes nothing (sideEffect none): reads run as they are; only tools with side effects are declared a sandbox`,
      )
  }
  for (const [i, call] of c.recorded.entries())
    if (!named(call.tool).length)
      throw new CordageError('invalid_input', `${c.shown}: recorded[${i}] is a call of ${call.tool}, a tool no agent of the preset has`)
  for (const [name, tools] of toolsOf)
    for (const tool of tools) if (c.sandbox.includes(tool.name) && hasSideEffects(tool)) checkSandbox(c, tool, name, input)

  const tools = new Map(toolsOf.get(agent)!.map((t) => [t.name, t]))
  const covered = (t: Tool) => c.sandbox.includes(t.name) || !hasSideEffects(t)
  const script = scriptOf(app, agent)
  if (!script) {
    const open = [...tools.values()].filter((t) => !covered(t))
    if (open.length)
      throw new CordageError(
        'replay_refused',
        `${c.shown}: the model of agent "${agent}" is not scripted, so it may call any of its tools, and ${open.map((t) => `${t.name} (${t.sideEffect})`).join(', ')} would reach real side effects: an evaluation never does. Declare each a sandbox (\`sandbox: [${open.map((t) => t.name).join(', ')}]\`) if its effects stay in the case's copy of the preset's folder, or script the model and give the results of its calls under \`recorded:\``,
      )
    return
  }
  // Each recorded result answers one action: two calls of the script with the same arguments need two.
  const results = new Map<string, number>()
  for (const r of c.recorded) if (r.result) results.set(keyOf(r.tool, r.args), (results.get(keyOf(r.tool, r.args)) ?? 0) + 1)
  const uncovered: string[] = []
  for (const [step, call] of script.entries()) {
    const tool = tools.get(call.tool)
    // A tool the agent lacks, arguments its schema refuses, or a dry run: the call never reaches the tool.
    if (!tool || covered(tool) || !tool.input.safeParse(call.args).success) continue
    if (tool.preview && (call.args as { dry_run?: unknown } | undefined)?.dry_run === true) continue
    const key = keyOf(tool.name, call.args)
    const left = results.get(key) ?? 0
    if (left > 0) {
      results.set(key, left - 1)
      continue
    }
    const others = c.recorded.filter((r) => r.tool === tool.name && r.result).map((r) => JSON.stringify(r.args))
    uncovered.push(
      `${tool.name}(${JSON.stringify(call.args)}) (call ${step + 1} of the script)${others.length ? `, and the recorded results of ${tool.name} are for ${others.join(', ')} (each answers one call)` : ''}`,
    )
  }
  if (uncovered.length)
    throw new CordageError(
      'replay_refused',
      `${c.shown}: the model's script calls ${uncovered.join(', ')}, which would reach a real side effect: an evaluation never does. Give the recorded result of each call (the same tool and arguments) under \`recorded:\`, or, if the tool's effects stay in the case's copy of the preset's folder, declare it under \`sandbox:\``,
    )
}

/** A call by its tool and the hash of its arguments (arguments with no canonical form match nothing). */
function keyOf(tool: string, args: unknown): string {
  try {
    return `${tool} ${digestArgs(args)}`
  } catch {
    return `${tool} (no canonical form)`
  }
}

/** The sandbox's plugin config names no place outside the case's folder. */
function checkSandbox(c: EvalCase, tool: Tool, agent: string, input: CheckInput): void {
  const ref = ownerRef(input.app, agent, tool)
  const outside: string[] = []
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) outside.push(`${value} (a URL: a service outside the machine's copy)`)
      else if (isAbsolute(value) || /[\\/]/.test(value) || value.startsWith('.')) {
        const full = resolve(input.presetDir, value)
        const rel = relative(input.scratch, full)
        if (rel.startsWith('..') || isAbsolute(rel)) outside.push(value)
      }
    } else if (Array.isArray(value)) value.forEach(visit)
    else if (value && typeof value === 'object') Object.values(value).forEach(visit)
  }
  visit(ref?.config)
  if (outside.length)
    throw new CordageError(
      'replay_refused',
      `${c.shown}: sandbox: ${tool.name} of agent "${agent}" is registered by ${tool.owner ?? 'a plugin'}, whose config names ${outside.join(', ')}, outside the case's folder: its effects would leave the sandbox and be real. Name a place inside the preset's folder (a relative path, set in the case's overlay), or give the results of its calls under \`recorded:\` instead`,
    )
}

/** The preset entry of the plugin that registered `tool` for `agent`. */
function ownerRef(app: Cordage, agent: string, tool: Tool): PluginRef | undefined {
  const name = tool.owner?.slice(0, tool.owner.lastIndexOf('@'))
  const entry = app.entriesOf(agent).find((e) => e.name === name)?.entry
  const spec = app.preset.agents[agent]
  return [spec.model, ...spec.plugins].find((r) => (r.plugin !== undefined ? r.plugin === name : r.path === entry?.dir))
}

/** The calls of the agent's scripted model, or undefined when its model is not scripted (or reads its script from a file: model-scripted's `file`, used when `script` is empty). */
function scriptOf(app: Cordage, agent: string): { tool: string; args: unknown }[] | undefined {
  const model = app.preset.agents[agent].model
  const name = model.plugin ?? app.entriesOf(agent).find((e) => e.entry.dir === model.path)?.name
  const script = model.config.script
  if (name !== 'model-scripted' || !Array.isArray(script) || script.length === 0) return undefined
  return script.flatMap((entry: { tool?: unknown; args?: unknown; calls?: unknown; repeat?: unknown }) => {
    const calls: { tool: string; args: unknown }[] =
      typeof entry?.tool === 'string'
        ? [{ tool: entry.tool, args: entry.args ?? {} }]
        : Array.isArray(entry?.calls)
          ? entry.calls
              .filter((x) => typeof x?.tool === 'string')
              .map((x: { tool: string; args?: unknown }) => ({ tool: x.tool, args: x.args ?? {} }))
          : []
    const times = typeof entry?.repeat === 'number' && entry.repeat > 1 ? Math.min(entry.repeat, 10_000) : 1
    return Array.from({ length: times }, () => calls).flat()
  })
}
