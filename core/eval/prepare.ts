/**
 * @module eval/prepare
 * One case under one variant, as a preset in a scratch folder of its own:
 * - the preset's folder is copied there, so the files it reads (a script, a workspace template) are
 *   found and the files its tools write (an outbox, a ledger) land in the copy, never in the project;
 * - `case.yml` extends the copy with the case's overlay, task and scripted model (the preset layer
 *   rules, docs/reference/presets.md#layers);
 * - `variant.yml` extends that with what the engine changes: every agent's store becomes SQLite in the
 *   scratch folder, and the variant's and the faults' plugins are put in.
 * Nothing outside the scratch folder is written.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { Schema } from 'cordis'
import { semver } from '../host/semver.ts'
import { stringify } from 'yaml'
import { CordageError } from '../contracts/errors.ts'
import { loadPreset, planAgent, type AgentSpec, type PluginCatalog, type PluginRef, type Preset } from '../host/index.ts'
import type { EvalCase, Fault } from './case.ts'
import { caseDir } from './load.ts'
import { prune } from './prune.ts'
import { Mechanisms } from './variants.ts'
import type { Variant } from './result.ts'

/** The plugins the engine puts in (core/eval/plugins). */
const EvalPlugin = (name: string) => resolve(import.meta.dirname, 'plugins', name)
/** Services an agent cannot run without, and the stand-in used when one is switched off. */
const NullFor: Record<string, (() => Entry) | undefined> = {
  verifier: () => ({ path: EvalPlugin('eval-verifier'), config: { verdict: 'pass' } }),
  policy: () => ({ path: EvalPlugin('eval-policy'), config: { mode: 'allow-all' } }),
  tools: () => ({ plugin: 'tools-registry' }),
}
const Required = ['model', 'context', 'tools', 'policy', 'verifier', 'store']
const CopyLimit = { files: 2000, bytes: 50 * 1024 * 1024 }

type Entry = { plugin?: string; path?: string; version?: string; config?: unknown; remove?: true }

export interface Prepared {
  /** The preset to load: variant.yml in the scratch folder. */
  presetFile: string
  /** The copy of the preset's folder (plugins' base folder: record files are resolved against it). */
  presetDir: string
  agent: string
  task: string
  /** Record files by name, absolute. */
  records: Record<string, { file: string; key?: string }>
  /** What the variant could not change for this case (it has no such plugin): the run equals full there. */
  notes: string[]
  /** A `plugin` variant: the version put in, its config, and the config keys left out. */
  plugin?: { name: string; version: string; config: unknown; dropped: string[] }
}

/**
 * Write the case's preset for `variant` under `scratch`.
 * @throws CordageError `invalid_input` (no preset, a fault or variant that does not fit the agent) or the preset's own errors
 */
export async function prepare(
  c: EvalCase,
  variant: Variant,
  options: { preset?: string; catalog: PluginCatalog; scratch: string },
): Promise<Prepared> {
  const base = options.preset ? resolve(options.preset) : c.preset ? resolve(caseDir(c), c.preset) : undefined
  if (!base) throw new CordageError('invalid_input', `${c.shown}: no preset to run; give "preset:" in the case or --preset`)
  if (!existsSync(base)) throw new CordageError('preset_not_found', `${c.shown}: preset ${base} does not exist`)
  const presetDir = join(options.scratch, 'preset')
  copyFolder(dirname(base), presetDir)
  const copied = join(presetDir, basename(base))

  const original = loadPreset(copied)
  const agent = c.agent ?? onlyAgent(original, c)
  const spec = original.agents[agent]
  if (!spec)
    throw new CordageError(
      'agent_not_found',
      `${c.shown}: preset ${base} has no agent "${agent}"; agents: ${Object.keys(original.agents).join(', ')}`,
    )
  const task = c.task ?? spec.task
  if (!task) throw new CordageError('invalid_input', `${c.shown}: agent "${agent}" has no task in the preset; give "task:" in the case`)

  const caseFile = join(presetDir, '.eval-case.yml')
  writeFileSync(
    caseFile,
    stringify({ cordage: 1, extends: `./${basename(base)}`, agents: { [agent]: caseLayer(c, spec, dirname(base), presetDir) } }),
  )
  const preset = loadPreset(caseFile)
  const notes: string[] = []
  const swapped: Pick<Prepared, 'plugin'> = {}
  const changes = await variantLayers(c, variant, preset, agent, options.catalog, notes, options.scratch, swapped)
  let previous = '.eval-case.yml'
  changes.forEach((agents, i) => {
    const name = `.eval-variant-${i}.yml`
    writeFileSync(join(presetDir, name), stringify({ cordage: 1, extends: `./${previous}`, agents }))
    previous = name
  })
  const presetFile = join(presetDir, previous)
  // Checked against the case as written (before the variant): an ablation that removes the plugin writing a
  // record leaves the record empty, which is what it shows.
  const records = recordFiles(c, presetDir, preset, options.scratch, notes)
  return { presetFile, presetDir, agent, task, records, notes, plugin: swapped.plugin }
}

/**
 * The case's record files, each inside the scratch folder and named by some plugin's config in the
 * preset as the case runs it: a record path with a typo would read as "no effect" and pass.
 */
function recordFiles(c: EvalCase, presetDir: string, preset: Preset, scratch: string, notes: string[]): Prepared['records'] {
  const named = new Set<string>()
  const collect = (value: unknown): void => {
    if (typeof value === 'string') named.add(resolve(presetDir, value))
    else if (Array.isArray(value)) value.forEach(collect)
    else if (value && typeof value === 'object') Object.values(value).forEach(collect)
  }
  for (const spec of Object.values(preset.agents)) for (const ref of [spec.model, ...spec.plugins]) collect(ref.config)
  const out: Prepared['records'] = {}
  for (const [name, r] of Object.entries(c.records)) {
    const file = resolve(presetDir, r.file)
    if (!file.startsWith(scratch + sep))
      throw new CordageError(
        'invalid_input',
        `${c.shown}: records.${name}.file ${r.file} is outside the case's folder; name the file as the preset's plugin config does (relative to the preset)`,
      )
    if (!named.has(file)) {
      const paths = [...named].filter((p) => p.startsWith(presetDir + sep) && /\.[a-z]+$/i.test(p)).map((p) => relative(presetDir, p))
      throw new CordageError(
        'invalid_input',
        `${c.shown}: records.${name}.file ${r.file} is not a file any plugin of the preset writes (no plugin config names it); use the path the tool's config gives${paths.length ? ` (the configs name ${paths.join(', ')})` : ''}, or set it with an overlay`,
      )
    }
    // Records from earlier runs in the preset's folder came along with the copy: this run's are counted alone.
    if (existsSync(file)) {
      const before = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim()).length
      rmSync(file)
      if (before) notes.push(`records.${name}: ${r.file} already held ${before} record(s) from earlier runs; the case's copy starts empty`)
    }
    out[name] = { file, key: r.key }
  }
  return out
}

function onlyAgent(preset: Preset, c: EvalCase): string {
  const names = Object.keys(preset.agents)
  if (names.length === 1) return names[0]
  throw new CordageError('invalid_input', `${c.shown}: preset ${preset.shown} has agents ${names.join(', ')}; say which with "agent:"`)
}

/** The case's own layer: its overlay (plugin paths made absolute), and its scripted model with model faults in. */
function caseLayer(c: EvalCase, spec: AgentSpec, from: string, copy: string): Record<string, unknown> {
  const layer: Record<string, unknown> = { ...(c.overlay ?? {}) }
  if (Array.isArray(layer.plugins)) {
    // An overlay's `path:` is relative to the case file; a folder inside the preset's folder is the
    // copy's (the preset's own entry names the copy, and the overlay must match it to configure it).
    const inCopy = (path: string) => {
      const full = isAbsolute(path) ? path : resolve(caseDir(c), path)
      return full === from || full.startsWith(from + sep) ? join(copy, relative(from, full)) : full
    }
    layer.plugins = layer.plugins.map((p) =>
      p && typeof p === 'object' && typeof (p as Entry).path === 'string' ? { ...p, path: inCopy((p as Entry).path!) } : p,
    )
  }
  if (c.task) layer.task = c.task
  const modelFaults = c.faults.filter((f): f is Extract<Fault, { model: string }> => 'model' in f)
  const presetScript =
    spec.model.plugin === 'model-scripted' && Array.isArray(spec.model.config.script) ? spec.model.config.script : undefined
  if (c.model || (modelFaults.length && presetScript?.length)) {
    // Without a script of its own, a case with model faults breaks the preset's scripted model.
    const model = c.model ?? { script: presetScript as Record<string, unknown>[] }
    const script = expand(model.script)
    for (const f of modelFaults) {
      if (f.call > script.length)
        throw new CordageError('invalid_input', `${c.shown}: a model fault at call ${f.call}, but the script has ${script.length} call(s)`)
      script[f.call - 1] = { ...script[f.call - 1], failFirst: { code: `model_${f.model}`, times: f.times } }
    }
    // The overlay may configure the same model plugin (measureInput, delayMs): its keys are kept.
    const given = layer.model as { plugin?: string; config?: Record<string, unknown> } | undefined
    const config: Record<string, unknown> = { ...(given?.plugin === 'model-scripted' ? given.config : {}), script }
    if (c.model?.usage) config.usage = c.model.usage
    if (c.model?.onExhausted) config.onExhausted = c.model.onExhausted
    layer.model =
      spec.model.plugin === 'model-scripted' ? { plugin: 'model-scripted', config } : { plugin: 'model-scripted', version: '*', config }
  } else if (modelFaults.length) {
    throw new CordageError(
      'invalid_input',
      `${c.shown}: model faults need a scripted model: give "model: script:" in the case (the preset's model is ${spec.model.plugin ?? spec.model.path}, which cannot be made to fail)`,
    )
  }
  return layer
}

/** model-scripted's `repeat`, spelled out, so a model fault can name one call. */
function expand(script: Record<string, unknown>[]): Record<string, unknown>[] {
  return script.flatMap((entry) => {
    const { repeat, ...rest } = entry
    return Array.from({ length: typeof repeat === 'number' && repeat > 0 ? repeat : 1 }, () => ({ ...rest }))
  })
}

/**
 * The engine's layers, each `agents: {...}`: stores into the scratch folder, faults, the variant. Two
 * layers only when a plugin changes version: one removes it, the next adds it back (one layer cannot
 * both remove an entry and add one of the same name).
 */
async function variantLayers(
  c: EvalCase,
  variant: Variant,
  preset: Preset,
  agent: string,
  catalog: PluginCatalog,
  notes: string[],
  scratch: string,
  swapped: Pick<Prepared, 'plugin'>,
): Promise<Record<string, { plugins?: Entry[]; budgets?: Record<string, unknown>; model?: Entry }>[]> {
  const first: Record<string, { plugins: Entry[]; budgets?: Record<string, unknown>; model?: Entry }> = {}
  const second: Record<string, { plugins: Entry[] }> = {}
  for (const [name, spec] of Object.entries(preset.agents)) {
    const plan = await planAgent(preset, spec, catalog)
    const storeRef = plan.providers.store?.ref
    const own = join(scratch, `runs-${name}.db`)
    first[name] = {
      plugins:
        storeRef?.plugin === 'store-sqlite'
          ? [{ plugin: 'store-sqlite', config: { path: own } }]
          : [...(storeRef ? [removal(storeRef)] : []), { plugin: 'store-sqlite', config: { path: own } }],
    }
    // Workspaces too: the plugin's default root is the working directory's .cordage, and `temporary`
    // keeps failed runs' copies in the OS temporary folder after the case is gone.
    const workspace = plan.providers.workspace
    if (workspace?.entry.manifest.name === 'workspace-local')
      first[name].plugins.push({ ...entryOf(workspace.ref), config: { temporary: false, root: join(scratch, `workspaces-${name}`) } })
  }
  const spec = preset.agents[agent]
  const plan = await planAgent(preset, spec, catalog)
  const mine = first[agent].plugins
  const replaced = new Set<string>()
  const replace = (service: string, by: Entry | undefined, why: string) => {
    if (replaced.has(service)) {
      notes.push(`${why}: the ${service} is already replaced by the case's fault; the fault's stands`)
      return
    }
    replaced.add(service)
    const provider = plan.providers[service]
    if (provider) mine.push(removal(provider.ref))
    else if (Required.includes(service)) throw new CordageError('invalid_input', `${c.shown}: ${why}: agent "${agent}" has no ${service}`)
    if (by) mine.push(by)
  }
  for (const f of c.faults) {
    if ('policy' in f) replace('policy', { path: EvalPlugin('eval-policy'), config: { mode: f.policy } }, `fault policy: ${f.policy}`)
    if ('verifier' in f)
      replace('verifier', { path: EvalPlugin('eval-verifier'), config: { verdict: f.verifier } }, `fault verifier: ${f.verifier}`)
  }
  const nameOf = (ref: PluginRef) => plan.plugins.find((p) => p.ref === ref)?.entry.manifest.name
  if (variant.kind === 'ablate') {
    const mechanism = Mechanisms[variant.mechanism!]
    const service = mechanism?.service ?? Object.keys(plan.providers).find((s) => nameOf(plan.providers[s].ref) === variant.mechanism)
    const named = spec.plugins.find((r) => nameOf(r) === variant.mechanism)
    if (mechanism && !plan.providers[mechanism.service])
      notes.push(`agent "${agent}" has no ${mechanism.service}: ${variant.id} changes nothing here`)
    else if (mechanism && mechanism.service === 'tools' && nameOf(plan.providers.tools.ref) !== 'tool-search')
      notes.push(`agent "${agent}" has no tool-search: ${variant.id} changes nothing here`)
    else if (!mechanism && !named) notes.push(`agent "${agent}" has no plugin ${variant.mechanism}: ${variant.id} changes nothing here`)
    else if (service && Required.includes(service) && !NullFor[service])
      throw new CordageError(
        'invalid_input',
        `${variant.id}: "${variant.mechanism}" is the agent's ${service}; an agent cannot run without one and there is no null ${service}`,
      )
    else if (service) replace(service, NullFor[service]?.(), variant.id)
    else mine.push(removal(named!))
  }
  if (variant.kind === 'vary') {
    if (variant.axis === 'tools') mine.push({ path: EvalPlugin('eval-filler-tools'), config: { count: variant.value } })
    else if (!variant.axis!.includes('.')) first[agent].budgets = { [variant.axis!]: variant.value }
    else {
      const [plugin, ...keys] = variant.axis!.split('.')
      const ref = spec.plugins.find((r) => nameOf(r) === plugin)
      if (!ref) throw new CordageError('invalid_input', `--vary ${variant.axis}: agent "${agent}" has no plugin ${plugin}`)
      const config = keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), scalar(String(variant.value)))
      mine.push({ ...entryOf(ref), config })
    }
  }
  if (variant.kind === 'plugin') {
    const ref = [spec.model, ...spec.plugins].find((r) => nameOf(r) === variant.plugin)
    if (!ref) throw new CordageError('invalid_input', `--plugin ${variant.id}: agent "${agent}" has no plugin ${variant.plugin}`)
    const entry = ref.path !== undefined ? await catalog.addFolder(ref.path) : catalog.find(variant.plugin!, variant.range!)
    if (!semver.satisfies(entry.manifest.version, variant.range!))
      throw new CordageError(
        'plugin_version_unsatisfiable',
        `--plugin ${variant.id}: ${entry.manifest.name} is the folder ${ref.path} at ${entry.manifest.version}, which is not ${variant.range}`,
      )
    const service = Object.keys(plan.providers).find((k) => plan.providers[k].ref === ref)
    const dropped: string[] = []
    if (service && replaced.has(service)) {
      notes.push(`${variant.id}: the ${service} is replaced by the case's fault; the fault's stands`)
    } else if (ref === spec.model) {
      // The model is one entry, merged by name: the version changes in place, its config as the preset gives it.
      first[agent].model = { plugin: entry.manifest.name, version: entry.manifest.version }
      swapped.plugin = { name: entry.manifest.name, version: entry.manifest.version, config: ref.config, dropped }
    } else {
      const config = variant.config ?? prune(entry.manifest.config as Schema | undefined, ref.config, '', dropped)
      if (dropped.length)
        notes.push(
          `${variant.id}: config keys ${dropped.join(', ')} left out (${entry.manifest.name}@${entry.manifest.version} does not know them)`,
        )
      mine.push(removal(ref))
      const added = ref.path !== undefined ? { path: ref.path } : { plugin: entry.manifest.name, version: entry.manifest.version }
      second[agent] = { plugins: [{ ...added, config }] }
      swapped.plugin = { name: entry.manifest.name, version: entry.manifest.version, config, dropped }
    }
  }
  return Object.keys(second).length ? [first, second] : [first]
}

function entryOf(ref: PluginRef): Entry {
  return ref.path !== undefined ? { path: ref.path } : { plugin: ref.plugin }
}

function removal(ref: PluginRef): Entry {
  return { ...entryOf(ref), remove: true }
}

/** A --vary value for plugin config: a number or boolean when it reads as one, else the text. */
function scalar(text: string): unknown {
  if (text === 'true' || text === 'false') return text === 'true'
  const n = Number(text)
  return text.trim() !== '' && Number.isFinite(n) ? n : text
}

/** Copy a preset's folder, without what is run state or installed (`.cordage`, `node_modules`, dot folders, databases). */
function copyFolder(from: string, to: string): void {
  let files = 0
  let bytes = 0
  const count = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (skipped(name)) continue
      const path = join(dir, name)
      const stat = lstatSync(path)
      // A link in the copy would lead a tool's writes (or a record) back out of the scratch folder.
      if (stat.isSymbolicLink())
        throw new CordageError(
          'invalid_input',
          `the preset's folder holds a symbolic link, ${path}; each case runs on a copy of the folder, and a link would let its tools write outside the copy: replace the link with the file or folder it points to`,
        )
      if (stat.isDirectory()) count(path)
      else {
        files++
        bytes += stat.size
      }
      if (files > CopyLimit.files || bytes > CopyLimit.bytes)
        throw new CordageError(
          'invalid_input',
          `the preset's folder ${from} holds more than ${CopyLimit.files} files or ${CopyLimit.bytes >> 20} MB; each case runs on a copy of it: keep the preset in a folder of its own`,
        )
    }
  }
  count(from)
  mkdirSync(to, { recursive: true })
  cpSync(from, to, { recursive: true, filter: (src) => src === from || !skipped(basename(src)) })
}

function skipped(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules' || /\.(db|db-wal|db-shm|sqlite)$/.test(name)
}
