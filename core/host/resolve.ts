/**
 * @module host/resolve
 * From an agent in a preset to a plan: which version of each plugin, its checked config, who provides
 * each service, and an order to plug them in. Everything is decided before any plugin code runs, so a
 * bad preset leaves nothing half-loaded.
 */
import { semver } from './semver.ts'
import type { Schema } from 'cordis'
import { HostProvided, KernelOptional, KernelRequires } from '../contracts/versions.ts'
import { CordageError, type Code } from '../contracts/errors.ts'
import type { CatalogEntry, PluginCatalog } from './catalog.ts'
import { namesIn, type AgentSpec, type PluginRef, type Preset } from './preset.ts'
import { meterProblems } from './metered.ts'
import { ArtifactsPlugin, artifactsMissing, withAgentKeys } from './artifact-keys.ts'

export interface PlannedPlugin {
  ref: PluginRef
  /** `presets/x.yml agents.support.plugins[2]`, for messages. */
  where: string
  entry: CatalogEntry
  /** Config after schema validation, defaults filled in. */
  config: unknown
}

export interface AgentPlan {
  spec: AgentSpec
  preset: Preset
  /** In plugging order: providers before the plugins that require them. */
  plugins: PlannedPlugin[]
  /** Service → the plugin that provides it. */
  providers: Record<string, PlannedPlugin>
}

/** What the loop uses each kernel service for, for "missing service" messages. */
const KernelNeeds: Record<string, string> = {
  model: 'to decide each step',
  context: 'to assemble what the model sees',
  tools: 'to list and run tools',
  policy: 'to decide every action',
  verifier: 'to judge final answers',
  store: 'to record the run',
}

interface Problem {
  code: Code
  message: string
}

/**
 * Resolve one agent of a preset against the catalogue. Throws one CordageError listing every problem.
 * From a lazily scanned catalogue (host/catalog.ts), the folders of the plugins the agent names are
 * read first; when the agent does not plan, every folder is, and it is planned again, so that what the
 * error lists (the plugins installed, the providers of a service) is all of them.
 */
export async function planAgent(preset: Preset, spec: AgentSpec, catalog: PluginCatalog): Promise<AgentPlan> {
  await catalog.read(namesIn(spec))
  try {
    return await plan(preset, spec, catalog)
  } catch (error) {
    if (catalog.whole) throw error
    await catalog.read()
    return plan(preset, spec, catalog)
  }
}

async function plan(preset: Preset, spec: AgentSpec, catalog: PluginCatalog): Promise<AgentPlan> {
  const problems: Problem[] = []
  const planned: PlannedPlugin[] = []
  const refs = [spec.model, ...spec.plugins]
  const seen = new Map<string, string>()

  for (const ref of refs) {
    let entry: CatalogEntry
    try {
      entry = ref.path !== undefined ? await fromPath(catalog, ref) : catalog.find(ref.plugin!, ref.version)
    } catch (error) {
      if (!CordageError.is(error)) throw error
      problems.push({ code: error.code, message: `${where(preset, ref)}: ${error.message}` })
      continue
    }
    const name = entry.manifest.name
    if (seen.has(name)) {
      problems.push({
        code: 'plugin_conflict',
        message: `${where(preset, ref)}: plugin "${name}" is already used by this agent at ${seen.get(name)}`,
      })
      continue
    }
    seen.set(name, ref.at)
    const config = checkConfig(preset, name === ArtifactsPlugin ? withAgentKeys(preset, spec, ref, problems) : ref, entry, problems)
    if (config !== undefined) planned.push({ ref, where: where(preset, ref), entry, config })
  }
  const missing = artifactsMissing(preset, spec, seen.has(ArtifactsPlugin) || spec.plugins.some((r) => r.plugin === ArtifactsPlugin))
  if (missing) problems.push(missing)
  if (problems.length) throw combined(problems, `agent "${spec.name}" in ${preset.shown}`)

  const providers: Record<string, PlannedPlugin> = {}
  for (const p of planned) {
    for (const service of Object.keys(p.entry.manifest.provides ?? {})) {
      const other = providers[service]
      if (other) {
        problems.push({
          code: 'plugin_conflict',
          message: `${where(preset, p.ref)}: "${p.entry.manifest.name}" and "${other.entry.manifest.name}" (${other.ref.at}) both provide "${service}"; an agent has one provider per service`,
        })
      } else {
        providers[service] = p
      }
    }
  }
  const modelProvider = planned[0]
  if (modelProvider && !modelProvider.entry.manifest.provides?.model) {
    problems.push({
      code: 'plugin_requirement_missing',
      message: `${where(preset, spec.model)}: "${modelProvider.entry.manifest.name}" is named as the model but does not provide "model"`,
    })
  }

  for (const p of planned) checkRequires(p, p.entry.manifest.requires ?? {}, providers, problems, true, catalog)
  for (const p of planned) checkRequires(p, p.entry.manifest.optional ?? {}, providers, problems, false, catalog)
  const kernel = {
    ref: { at: spec.at } as PluginRef,
    where: `${preset.locate(spec.at)} ${spec.at}`,
    entry: { manifest: { name: 'kernel' } } as CatalogEntry,
    config: undefined,
  }
  checkRequires(kernel, KernelRequires, providers, problems, true, catalog)
  checkRequires(kernel, KernelOptional, providers, problems, false, catalog)
  problems.push(...meterProblems(preset, spec, providers))
  if (problems.length) throw combined(problems, `agent "${spec.name}" in ${preset.shown}`)

  return { spec, preset, plugins: order(planned, providers), providers }
}

async function fromPath(catalog: PluginCatalog, ref: PluginRef): Promise<CatalogEntry> {
  const entry = await catalog.addFolder(ref.path!)
  if (!semver.satisfies(entry.manifest.version, ref.version)) {
    throw new CordageError(
      'plugin_version_unsatisfiable',
      `the plugin at ${ref.path} is ${entry.manifest.name}@${entry.manifest.version}, which does not satisfy ${ref.version}`,
    )
  }
  return entry
}

function checkConfig(preset: Preset, ref: PluginRef, entry: CatalogEntry, problems: Problem[]): unknown {
  const schema = entry.manifest.config as Schema | undefined
  const label = `${entry.manifest.name}@${entry.manifest.version}`
  if (!schema) {
    if (Object.keys(ref.config).length) {
      problems.push({
        code: 'plugin_config_invalid',
        message: `${where(preset, ref, '.config')}: plugin ${label} takes no config, found keys ${Object.keys(ref.config).join(', ')}`,
      })
      return undefined
    }
    return {}
  }
  const unknown = unknownKeys(schema, ref.config, '')
  if (unknown.length) {
    for (const u of unknown)
      problems.push({
        code: 'plugin_config_invalid',
        message: `${where(preset, ref, `.config${u.path}.${u.key}`)}: plugin ${label} has no config key "${u.key}"; allowed: ${u.allowed.join(', ')}`,
      })
    return undefined
  }
  try {
    // On a copy: schemastery fills defaults into the object it is given, and the caller keeps its own.
    return schema(structuredClone(ref.config))
  } catch (error) {
    const message = (error as Error).message.replace(/^\$/, '')
    const [path, ...rest] = message.split(' ')
    const inside = path.startsWith('.') || path.startsWith('[')
    problems.push({
      code: 'plugin_config_invalid',
      message: `${where(preset, ref, `.config${inside ? path : ''}`)}: plugin ${label}: ${inside ? rest.join(' ') : message}`,
    })
    return undefined
  }
}

/** Keys in `value` that an object schema does not declare (schemastery keeps them silently). */
function unknownKeys(schema: Schema, value: unknown, path: string): { path: string; key: string; allowed: string[] }[] {
  if (value === null || typeof value !== 'object') return []
  const s = schema as unknown as { type: string; dict?: Record<string, Schema>; inner?: Schema; list?: Schema[] }
  // A union is strict only if its object alternatives are: a value that is an object is checked against
  // the closest of them (the one it leaves fewest keys unknown in), so `{ inn: [...] }` in a union of
  // string | number | { in, ... } is reported instead of passing as an object with no tests.
  if (s.type === 'union' && s.list) {
    const candidates = s.list.filter((alt) => kindFits(alt, value))
    if (!candidates.length) return []
    const found = candidates.map((alt) => unknownKeys(alt, value, path))
    return found.reduce((best, next) => (next.length < best.length ? next : best))
  }
  if (s.type === 'intersect' && s.list) {
    // A key is unknown only if no part of the intersection declares it.
    const declared = new Set(s.list.flatMap((part) => Object.keys((part as unknown as { dict?: object }).dict ?? {})))
    return s.list
      .flatMap((part) => unknownKeys(part, value, path))
      .filter((u) => !declared.has(u.key))
      .map((u) => ({ ...u, allowed: [...declared] }))
  }
  if ((s.type === 'transform' || s.type === 'default') && s.inner) return unknownKeys(s.inner, value, path)
  if (s.type === 'object' && s.dict && !Array.isArray(value)) {
    const out: { path: string; key: string; allowed: string[] }[] = []
    for (const [key, v] of Object.entries(value)) {
      // Own keys only: `toString` or `constructor` in a config is unknown, not Object.prototype's.
      const child = Object.hasOwn(s.dict, key) ? s.dict[key] : undefined
      if (!child) out.push({ path, key, allowed: Object.keys(s.dict) })
      else out.push(...unknownKeys(child, v, `${path}.${key}`))
    }
    return out
  }
  if (s.type === 'array' && s.inner && Array.isArray(value)) {
    return value.flatMap((v, i) => unknownKeys(s.inner!, v, `${path}[${i}]`))
  }
  if (s.type === 'dict' && s.inner && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([k, v]) => unknownKeys(s.inner!, v, `${path}.${k}`))
  }
  return []
}

/** Whether a union alternative is about values of this kind (an object schema for a plain object, and so on). */
function kindFits(schema: Schema, value: unknown): boolean {
  const type = (schema as unknown as { type: string }).type
  if (Array.isArray(value)) return type === 'array' || type === 'tuple' || type === 'transform' || type === 'any'
  if (value !== null && typeof value === 'object')
    return type === 'object' || type === 'dict' || type === 'intersect' || type === 'transform' || type === 'any'
  return false
}

function checkRequires(
  p: PlannedPlugin,
  requires: Record<string, string>,
  providers: Record<string, PlannedPlugin>,
  problems: Problem[],
  required: boolean,
  catalog: PluginCatalog,
) {
  const kernel = p.entry.manifest.name === 'kernel'
  const who = kernel ? `${p.where}: the kernel` : `plugin "${p.entry.manifest.name}@${p.entry.manifest.version}" (${p.where})`
  const field = kernel ? 'kernel requirement' : `manifest field ${required ? 'requires' : 'optional'}.`
  for (const [service, range] of Object.entries(requires)) {
    const provider = providers[service]
    if (!provider && HostProvided[service]) {
      if (!semver.satisfies(HostProvided[service], range)) {
        problems.push({
          code: 'plugin_requirement_incompatible',
          message: `${who} requires service "${service}" ${range} (${field}${field.endsWith('.') ? service : ''}), but the host provides "${service}" ${HostProvided[service]}`,
        })
      }
      continue
    }
    if (!provider) {
      if (!required) continue
      const candidates = [...new Set(catalog.providersOf(service).map((e) => e.manifest.name))]
      const hint = candidates.length ? `; add one of: ${candidates.join(', ')}` : ''
      problems.push(
        kernel
          ? {
              code: 'service_missing',
              message: `${p.where}: the agent has no plugin that provides "${service}", which the kernel needs (${KernelNeeds[service] ?? service})${hint}`,
            }
          : {
              code: 'plugin_requirement_missing',
              message: `${who} requires service "${service}" ${range} (${field}${service}), but no plugin of this agent provides it${hint}`,
            },
      )
      continue
    }
    const version = provider.entry.manifest.provides![service]
    if (!semver.satisfies(version, range)) {
      problems.push({
        code: 'plugin_requirement_incompatible',
        message: `${who} requires service "${service}" ${range} (${field}${field.endsWith('.') ? service : ''}), but ${provider.entry.manifest.name}@${provider.entry.manifest.version} (${provider.ref.at}) provides "${service}" ${version}${available(catalog, service, range)}`,
      })
    }
  }
}

/** What is installed that would fit: `; installed providers of "tools" ^2.0.0: x@2.1.0 (provides 2.0.0)`, or that none would. */
function available(catalog: PluginCatalog, service: string, range: string): string {
  const all = catalog.providersOf(service)
  const fits = all.filter((e) => semver.satisfies(e.manifest.provides![service], range))
  const show = (e: CatalogEntry) => `${e.manifest.name}@${e.manifest.version} (provides ${e.manifest.provides![service]})`
  if (fits.length) return `; installed plugins that provide "${service}" ${range}: ${fits.map(show).join(', ')}`
  return `; no installed plugin provides "${service}" ${range}${all.length ? ` (installed providers: ${all.map(show).join(', ')})` : ''}`
}

/** Providers first (Kahn's algorithm over requires/optional edges); a cycle is a conflict. */
function order(planned: PlannedPlugin[], providers: Record<string, PlannedPlugin>): PlannedPlugin[] {
  const deps = new Map<PlannedPlugin, Set<PlannedPlugin>>()
  for (const p of planned) {
    const set = new Set<PlannedPlugin>()
    for (const service of [...Object.keys(p.entry.manifest.requires ?? {}), ...Object.keys(p.entry.manifest.optional ?? {})]) {
      const provider = providers[service]
      if (provider && provider !== p) set.add(provider)
    }
    deps.set(p, set)
  }
  const out: PlannedPlugin[] = []
  const done = new Set<PlannedPlugin>()
  while (out.length < planned.length) {
    const ready = planned.find((p) => !done.has(p) && [...deps.get(p)!].every((d) => done.has(d)))
    if (!ready) {
      const stuck = planned.filter((p) => !done.has(p)).map((p) => p.entry.manifest.name)
      throw new CordageError(
        'plugin_conflict',
        `plugins ${stuck.join(', ')} require each other's services in a cycle; none can start first`,
      )
    }
    done.add(ready)
    out.push(ready)
  }
  return out
}

function where(preset: Preset, ref: PluginRef, suffix = ''): string {
  return `${preset.locate(ref.at + suffix)} ${ref.at}${suffix}`
}

function combined(problems: Problem[], subject: string): CordageError {
  if (problems.length === 1) return new CordageError(problems[0].code, problems[0].message, { data: problems })
  return new CordageError(
    problems[0].code,
    `${subject} has ${problems.length} problems:\n  ${problems.map((p) => `[${p.code}] ${p.message}`).join('\n  ')}`,
    { data: problems },
  )
}
