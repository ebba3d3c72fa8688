/**
 * @module host/preset
 * Reading a preset file: YAML → checked structure. Every problem is reported at once, each with the
 * file, line, key path, what was expected and what was found. The file is only ever read.
 */
import { existsSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import { semver } from './semver.ts'
import { z } from 'zod'
import type { Budgets } from '../kernel/budget.ts'
import { TimedServices, type TimedService } from '../kernel/loop-host.ts'
import { CordageError } from '../contracts/errors.ts'
import { expected } from './expected.ts'
import { placeOf, readLayers } from './layers.ts'
import { LogLevels, type LogLevel } from './logging.ts'

/** `refuse` (default): the command fails; `accept`: go on with the current plugin; `pin`: go on with the recorded one. */
export type DriftPolicy = 'refuse' | 'accept' | 'pin'

/** One plugin an agent uses: by name from the catalogue, or by path to a plugin folder. */
export interface PluginRef {
  plugin?: string
  /** Absolute path of the plugin folder (resolved against the preset's folder). */
  path?: string
  /** Semver range; `*` when the preset gives none. */
  version: string
  config: Record<string, unknown>
  /** What a resumed run does when this plugin differs from the version (or content) it started with. */
  onDrift?: DriftPolicy
  /** Where in the preset this entry is, for messages: `agents.support.plugins[2]`. */
  at: string
}

export interface AgentSpec {
  name: string
  description?: string
  /** The task `cordage run` uses when no --task is given. */
  task?: string
  budgets: Partial<Budgets>
  contextTokens?: number
  /** Run the independent calls of one step side by side (default true). */
  parallelTools?: boolean
  /** Retries of a transient model failure. */
  retry?: { attempts: number; backoffMs: number }
  /** Lease and cancellation timings. */
  durability?: { leaseTtlMs?: number; cancelWatchMs?: number; cancelGraceMs?: number; effectWaitMs?: number }
  /** How long the loop waits for each service's answer (milliseconds), by service. */
  serviceTimeouts?: Partial<Record<TimedService, number>>
  /** A tool result whose JSON is larger than this many bytes is stored as an artifact (default 256 KiB). */
  artifactAboveBytes?: number
  /** What the audit view keeps: `keepRedacted`, the raw result of a call the guardrail redacted (default false). */
  audit?: { keepRedacted?: boolean }
  /** Agents of the preset this one may start as children (subagents); none unless listed. */
  spawns: string[]
  /** Agents of the preset this one may hand a run to; none unless listed. */
  handoffs: string[]
  model: PluginRef
  plugins: PluginRef[]
  at: string
}

export interface Preset {
  /** Absolute path of the preset file. */
  file: string
  /** The path as shown in messages: relative to the working directory. */
  shown: string
  /**
   * `file:line:col` of a key path such as `agents.support.plugins[4].config.rules[0]`, for messages;
   * the deepest part of the path that exists in the file.
   */
  locate(keyPath: string): string
  /** Its folder: relative paths in the preset and in plugin config resolve against it. */
  dir: string
  agents: Record<string, AgentSpec>
  /** Environment variables whose values every run of every agent scrubs from what it records. */
  secrets: string[]
  /** Which plugin log lines are shown (host/logging.ts); `--log-level` and $CORDAGE_LOG_LEVEL win over it. */
  logLevel?: LogLevel
  /** The files merged, base first (the named file last), as shown in messages. */
  layers: string[]
  /** The `--set KEY=VALUE` overrides applied after the files, in order. */
  sets: string[]
}

/** `name`, `name@range`, or the object form. */
const Ref = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value
    const at = value.lastIndexOf('@')
    return at > 0 ? { plugin: value.slice(0, at), version: value.slice(at + 1) } : { plugin: value }
  },
  z
    .object({
      plugin: z
        .string()
        .regex(/^[a-z][a-z0-9-]*$/, 'a plugin name (lower-case letters, digits, "-")')
        .optional(),
      path: z.string().min(1).optional(),
      version: z
        .string()
        .refine((r) => semver.validRange(r) !== null, 'a semver range such as ^1.0.0')
        .default('*'),
      config: z.record(z.string(), z.unknown()).default({}),
      onDrift: z.enum(['refuse', 'accept', 'pin']).optional(),
    })
    .strict()
    .refine((r) => (r.plugin === undefined) !== (r.path === undefined), 'exactly one of "plugin" (a name) or "path" (a folder)'),
)

/** Node runs a timer of more than 2^31-1 ms (about 24.8 days) at once: a longer time limit would fire at once. */
const MaxTimerMs = 2_147_483_647
const TimerMessage = 'at most 2147483647 ms (about 24.8 days), the longest a timer can wait'

/** Bounds over every turn of a thread (docs/concepts/threads.md). */
const ThreadBudgetsShape = z
  .object({ maxTurns: z.number().int().min(1), maxTokens: z.number().int().min(1), maxCostUsd: z.number().positive() })
  .partial()
  .strict()

const BudgetsShape = z
  .object({
    maxSteps: z.number().int().min(1),
    deadlineMs: z.number().int().min(1).max(MaxTimerMs, TimerMessage),
    maxTokens: z.number().int().min(1),
    maxCostUsd: z.number().positive(),
    maxRepairs: z.number().int().min(0),
    thread: ThreadBudgetsShape,
  })
  .partial()
  .strict()

const AgentShape = z
  .object({
    description: z.string().optional(),
    task: z.string().min(1).optional(),
    budgets: BudgetsShape.default({}),
    contextTokens: z.number().int().min(1).optional(),
    parallelTools: z.boolean().optional(),
    retry: z
      .object({ attempts: z.number().int().min(1), backoffMs: z.number().int().min(0) })
      .strict()
      .optional(),
    durability: z
      .object({
        leaseTtlMs: z.number().int().min(50).max(MaxTimerMs, TimerMessage),
        cancelWatchMs: z.number().int().min(10).max(MaxTimerMs, TimerMessage),
        cancelGraceMs: z.number().int().min(0).max(MaxTimerMs, TimerMessage),
        effectWaitMs: z.number().int().min(0).max(MaxTimerMs, TimerMessage),
      })
      .partial()
      .strict()
      .optional(),
    artifactAboveBytes: z
      .number()
      .int()
      .min(1024, 'at least 1024 bytes (an artifact for every small result would make the model read on for nothing)')
      .max(1024 * 1024 * 1024, 'at most 1 GiB')
      .optional(),
    audit: z.object({ keepRedacted: z.boolean() }).partial().strict().optional(),
    spawns: z.array(z.string().min(1)).default([]),
    handoffs: z.array(z.string().min(1)).default([]),
    serviceTimeouts: z
      .object(
        Object.fromEntries(TimedServices.map((s) => [s, z.number().int().min(1).max(MaxTimerMs, TimerMessage)])) as Record<
          TimedService,
          z.ZodNumber
        >,
      )
      .partial()
      .strict()
      .optional(),
    model: Ref,
    plugins: z.array(Ref).default([]),
  })
  .strict()

const PresetShape = z
  .object({
    cordage: z.literal(1).default(1),
    secrets: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable')).default([]),
    logLevel: z.enum(LogLevels, { error: `a log level: one of ${LogLevels.join(', ')}` }).optional(),
    agents: z
      .record(z.string().regex(/^[a-z][a-z0-9-]*$/, 'an agent name (lower-case letters, digits, "-")'), AgentShape)
      .refine((agents) => Object.keys(agents).length > 0, 'at least one agent'),
  })
  .strict()

/** Keys each object accepts, for "unknown key" messages. */
const allowedKeys: Record<string, string[]> = {
  preset: ['cordage', 'extends', 'secrets', 'logLevel', 'agents'],
  agent: Object.keys(AgentShape.shape),
  ref: ['plugin', 'path', 'version', 'config', 'onDrift'],
  budgets: Object.keys(BudgetsShape.shape),
  retry: ['attempts', 'backoffMs'],
  durability: ['leaseTtlMs', 'cancelWatchMs', 'cancelGraceMs', 'effectWaitMs'],
  serviceTimeouts: [...TimedServices],
  thread: ['maxTurns', 'maxTokens', 'maxCostUsd'],
  audit: ['keepRedacted'],
}

/**
 * Read and check a preset file, with its chain of bases (`extends`) and `--set` overrides (host/layers.ts).
 * @throws CordageError `preset_not_found`, or `preset_invalid` with every problem listed (also in `data`),
 *   each placed in the layer that set the key (`base.yml:4:7`, or `--set KEY=VALUE`)
 */
export function loadPreset(file: string, options: { sets?: readonly string[] } = {}): Preset {
  const path = resolve(file)
  if (!existsSync(path)) throw new CordageError('preset_not_found', `preset file ${file} does not exist`)
  const shown = relative(process.cwd(), path) || path
  const layers = readLayers(path, options.sets)
  const raw = layers.raw
  const place = (p: (string | number)[]) => {
    const { origin, exact } = layers.origin(p)
    return origin && (exact || origin.layer.kind === 'set') ? placeOf(origin) : shown
  }
  const result = PresetShape.safeParse(raw)
  if (!result.success) {
    const problems = shapeProblems(result.error.issues, raw, place)
    throw new CordageError('preset_invalid', `preset ${shown} has ${problems.length} problem(s):\n  ${problems.join('\n  ')}`, {
      data: problems,
    })
  }
  const dir = dirname(path)
  // No prototype: a name from the command line (`--agent constructor`) finds nothing it should not.
  const agents: Record<string, AgentSpec> = Object.create(null)
  for (const [name, agent] of Object.entries(result.data.agents)) agents[name] = agentSpec(name, agent, dir)
  const locate = (keyPath: string) => {
    const { origin } = layers.origin(parseKeyPath(keyPath))
    return origin ? placeOf(origin) : shown
  }
  // Whom an agent may start or hand a run to: other agents of this preset, by name.
  const reach = reachProblems(agents, locate)
  if (reach.length)
    throw new CordageError('preset_invalid', `preset ${shown} has ${reach.length} problem(s):\n  ${reach.join('\n  ')}`, { data: reach })
  return {
    file: path,
    shown,
    dir,
    agents,
    secrets: result.data.secrets,
    logLevel: result.data.logLevel,
    locate,
    layers: layers.files.map((l) => l.shown),
    sets: layers.sets.map((l) => l.text),
  }
}

/** Each way the parsed YAML does not fit the preset's shape, as "file:line key.path: what was expected". */
function shapeProblems(issues: z.core.$ZodIssue[], raw: unknown, place: (path: (string | number)[]) => string): string[] {
  return issues.map((issue) => {
    let path = issue.path as (string | number)[]
    let message: string
    if (issue.code === 'unrecognized_keys') {
      const kind = objectKind(path)
      path = [...path, issue.keys[0]]
      message = `unknown key${issue.keys.length > 1 ? `s ${issue.keys.map((k) => `"${k}"`).join(', ')}` : ` "${issue.keys[0]}"`}; allowed here: ${allowedKeys[kind].join(', ')}`
    } else {
      const found = dig(raw, path)
      message = `expected ${expected(issue)}, found ${describe(found)}`
    }
    return `${place(path)} ${keyPath(path)}: ${message}`
  })
}

/** An agent of the preset as the host plans it; plugin `path`s resolved against the preset's folder. */
function agentSpec(name: string, agent: z.infer<typeof PresetShape>['agents'][string], dir: string): AgentSpec {
  const base = `agents.${name}`
  // A `path` was made absolute against the file that named it (host/layers.ts); resolve keeps it so.
  const ref = (r: z.infer<typeof Ref>, where: string): PluginRef => ({
    plugin: r.plugin,
    path: r.path === undefined ? undefined : resolve(dir, r.path),
    version: r.version,
    config: r.config,
    onDrift: r.onDrift,
    at: where,
  })
  return {
    name,
    description: agent.description,
    task: agent.task,
    budgets: agent.budgets,
    contextTokens: agent.contextTokens,
    parallelTools: agent.parallelTools,
    retry: agent.retry,
    durability: agent.durability,
    serviceTimeouts: agent.serviceTimeouts,
    artifactAboveBytes: agent.artifactAboveBytes,
    audit: agent.audit,
    spawns: agent.spawns,
    handoffs: agent.handoffs,
    model: ref(agent.model, `${base}.model`),
    plugins: agent.plugins.map((p, i) => ref(p, `${base}.plugins[${i}]`)),
    at: base,
  }
}

/** Each `spawns` or `handoffs` entry that names no other agent of this preset. */
function reachProblems(agents: Record<string, AgentSpec>, locate: (keyPath: string) => string): string[] {
  const reach: string[] = []
  for (const spec of Object.values(agents)) {
    for (const key of ['spawns', 'handoffs'] as const) {
      spec[key].forEach((other, i) => {
        const problem =
          other === spec.name
            ? 'is the agent itself'
            : !Object.hasOwn(agents, other)
              ? `is not an agent of this preset (agents: ${Object.keys(agents).join(', ')})`
              : undefined
        if (problem) reach.push(`${locate(`${spec.at}.${key}[${i}]`)} ${spec.at}.${key}[${i}]: "${other}" ${problem}`)
      })
    }
  }
  return reach
}

/** `agents.support.plugins[2].version` */
export function keyPath(path: readonly (string | number | symbol)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') || '(top level)'
}

/** `a.b[2].c` → ['a', 'b', 2, 'c'] */
function parseKeyPath(keyPath: string): (string | number)[] {
  const out: (string | number)[] = []
  for (const part of keyPath.split('.')) {
    const match = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (!match) {
      out.push(part)
      continue
    }
    if (match[1]) out.push(match[1])
    for (const index of match[2].matchAll(/\[(\d+)\]/g)) out.push(Number(index[1]))
  }
  return out
}

function objectKind(path: (string | number)[]): keyof typeof allowedKeys {
  if (path.length === 0) return 'preset'
  if (path.length === 2 && path[0] === 'agents') return 'agent'
  if (path[path.length - 1] === 'budgets') return 'budgets'
  if (path[path.length - 1] === 'retry') return 'retry'
  if (path[path.length - 1] === 'durability') return 'durability'
  if (path[path.length - 1] === 'serviceTimeouts') return 'serviceTimeouts'
  if (path[path.length - 1] === 'thread' && path[path.length - 2] === 'budgets') return 'thread'
  if (path.length === 3 && path[0] === 'agents' && path[2] === 'audit') return 'audit'
  return 'ref'
}

function dig(value: unknown, path: (string | number)[]): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], value)
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value)
  return text.length > 60 ? text.slice(0, 57) + '...' : text
}

/** The plugins an agent names from the catalogue (not by path). */
export function namesIn(spec: AgentSpec): string[] {
  return [spec.model, ...spec.plugins].flatMap((ref) => (ref.plugin === undefined ? [] : [ref.plugin]))
}
