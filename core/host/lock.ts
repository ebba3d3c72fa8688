/**
 * @module host/lock
 * A preset's lock file: for each agent, the exact version and the content hash (host/plugin-hash.ts:
 * the plugin's files, the local files its bundle includes, the versions of the packages it imports)
 * of every plugin it resolved to when `cordage lock` ran. While the lock is there, loading the preset
 * resolves exactly those versions and refuses, listing every difference, when one is not installed or
 * its files changed. The lock is written only by `cordage lock`; the preset itself is never written.
 *
 * The lock of `presets/desk.yml` is `presets/desk.lock.json`:
 *
 * ```json
 * { "cordage": 1, "preset": "desk.yml",
 *   "agents": { "support": { "policy-rules": { "version": "1.0.0", "hash": "sha256:…" } } } }
 * ```
 */
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { semver } from './semver.ts'
import { CordageError } from '../contracts/errors.ts'
import { shellQuote } from '../kit/shell.ts'
import type { CatalogEntry, PluginCatalog } from './catalog.ts'
import { pluginHash, unhashableReason } from './plugin-hash.ts'
import { namesIn, type AgentSpec, type PluginRef, type Preset } from './preset.ts'
import type { AgentPlan } from './resolve.ts'

/** The content hash of an installed plugin (host/plugin-hash.ts): its folder, its bundle's files and the packages it imports. */
export type PluginHasher = (entry: Pick<CatalogEntry, 'dir' | 'entry'>) => string
const hashEntry: PluginHasher = (entry) => pluginHash(entry.dir, entry.entry)

export interface LockedPlugin {
  version: string
  hash: string
  /** For a plugin named by `path`: its folder, relative to the lock file. */
  path?: string
}

export interface LockFile {
  cordage: 1
  /** The preset file it locks, relative to the lock file. */
  preset: string
  /** Agent → plugin name → what was locked. */
  agents: Record<string, Record<string, LockedPlugin>>
}

/** `desk.yml` → `desk.lock.json`, beside it. */
export function lockFileOf(presetFile: string): string {
  return join(dirname(presetFile), `${basename(presetFile).replace(/\.ya?ml$/i, '')}.lock.json`)
}

/** The lock beside a preset, or undefined when there is none. */
export function readLock(presetFile: string): { file: string; lock: LockFile } | undefined {
  const file = lockFileOf(presetFile)
  if (!existsSync(file)) return undefined
  const shown = relative(process.cwd(), file) || file
  const again = 'write it again with cordage lock, or pass --no-lock'
  if (!statSync(file).isFile()) throw new CordageError('preset_invalid', `lock file ${shown} is not a file; move it away and ${again}`)
  let lock: LockFile
  try {
    lock = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new CordageError('preset_invalid', `lock file ${shown} is not valid JSON (${(error as Error).message}); ${again}`, {
      cause: error,
    })
  }
  const problems = lockProblems(lock)
  if (problems.length) {
    throw new CordageError(
      'preset_invalid',
      `lock file ${shown} is not a Cordage lock (expected {"cordage": 1, "agents": {agent: {plugin: {version, hash}}}}):\n  ${problems.slice(0, 10).join('\n  ')}${problems.length > 10 ? `\n  ... and ${problems.length - 10} more` : ''}\n${again}`,
      { data: problems },
    )
  }
  return { file, lock }
}

/** What does not fit the lock's shape, each with its key path. */
function lockProblems(lock: unknown): string[] {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
  const found = (v: unknown) => (v === undefined ? 'nothing' : Array.isArray(v) ? 'a list' : (JSON.stringify(v)?.slice(0, 40) ?? String(v)))
  if (!isObject(lock)) return [`(top level): expected an object, found ${found(lock)}`]
  const problems: string[] = []
  if (lock.cordage !== 1) problems.push(`cordage: expected 1, found ${found(lock.cordage)}`)
  if (!isObject(lock.agents)) return [...problems, `agents: expected an object (agent → plugins), found ${found(lock.agents)}`]
  for (const [agent, plugins] of Object.entries(lock.agents)) {
    if (!isObject(plugins)) {
      problems.push(`agents.${agent}: expected an object (plugin → {version, hash}), found ${found(plugins)}`)
      continue
    }
    for (const [name, p] of Object.entries(plugins)) {
      const at = `agents.${agent}.${name}`
      if (!isObject(p)) {
        problems.push(`${at}: expected {version, hash}, found ${found(p)}`)
        continue
      }
      if (typeof p.version !== 'string' || semver.valid(p.version) === null)
        problems.push(`${at}.version: expected a version such as 1.0.0, found ${found(p.version)}`)
      if (typeof p.hash !== 'string') problems.push(`${at}.hash: expected a string such as sha256:..., found ${found(p.hash)}`)
      if (p.path !== undefined && typeof p.path !== 'string') problems.push(`${at}.path: expected a folder path, found ${found(p.path)}`)
    }
  }
  return problems
}

/** The lock of resolved plans: each planned plugin's exact version and content hash. */
export function lockOf(preset: Preset, plans: AgentPlan[], hash: PluginHasher = hashEntry): LockFile {
  const lockDir = dirname(lockFileOf(preset.file))
  const agents: LockFile['agents'] = {}
  const unhashable: string[] = []
  for (const plan of plans) {
    const plugins: Record<string, LockedPlugin> = {}
    for (const p of [...plan.plugins].sort((a, b) => a.entry.manifest.name.localeCompare(b.entry.manifest.name))) {
      const name = p.entry.manifest.name
      const pinned = hash(p.entry)
      const why = unhashableReason(pinned)
      if (why !== undefined) unhashable.push(`${plan.spec.name}: ${name}@${p.entry.manifest.version}: ${why}`)
      plugins[name] = {
        version: p.entry.manifest.version,
        hash: pinned,
        ...(p.ref.path !== undefined ? { path: relative(lockDir, p.entry.dir) || '.' } : {}),
      }
    }
    agents[plan.spec.name] = plugins
  }
  // A lock pins the code that runs; a plugin whose code cannot be hashed cannot be pinned (fail closed).
  if (unhashable.length)
    throw new CordageError('lock_mismatch', `cannot lock preset ${preset.shown}:\n  ${unhashable.join('\n  ')}`, { data: unhashable })
  return { cordage: 1, preset: basename(preset.file), agents }
}

/** Write a lock atomically (a reader never sees half a file). */
export function writeLock(presetFile: string, lock: LockFile): string {
  const file = lockFileOf(presetFile)
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, JSON.stringify(lock, null, 2) + '\n')
  renameSync(temp, file)
  return file
}

/**
 * Each agent of the preset with every plugin pinned to its locked version. Every difference between
 * the preset, the lock and what is installed is collected and thrown at once (`lock_mismatch`): a plugin
 * not in the lock or not in the preset, a locked version the preset's range no longer admits or that is
 * not installed, installed files whose hash is not the locked one, and a plugin whose code cannot be
 * hashed (esbuild cannot bundle it: it never matches).
 */
export async function applyLock(
  preset: Preset,
  locked: { file: string; lock: LockFile },
  catalog: PluginCatalog,
  hash: (entry: Pick<CatalogEntry, 'dir' | 'entry'>) => string | Promise<string> = hashEntry,
): Promise<Record<string, AgentSpec>> {
  // From a lazily scanned catalogue: the agents' plugins, and every folder when the lock does not hold
  // (its message lists the versions installed).
  await catalog.read(Object.values(preset.agents).flatMap(namesIn))
  try {
    return await pinAgents(preset, locked, catalog, hash)
  } catch (error) {
    if (catalog.whole) throw error
    await catalog.read()
    return pinAgents(preset, locked, catalog, hash)
  }
}

async function pinAgents(
  preset: Preset,
  locked: { file: string; lock: LockFile },
  catalog: PluginCatalog,
  hash: (entry: Pick<CatalogEntry, 'dir' | 'entry'>) => string | Promise<string>,
): Promise<Record<string, AgentSpec>> {
  const problems: string[] = []
  const out: Record<string, AgentSpec> = {}
  for (const spec of Object.values(preset.agents)) {
    const agentLock = Object.hasOwn(locked.lock.agents, spec.name) ? locked.lock.agents[spec.name] : undefined
    if (!agentLock) {
      problems.push(`agent "${spec.name}" is in the preset but not in the lock`)
      continue
    }
    const seen = new Set<string>()
    const pin = (ref: PluginRef) => pinRef(ref, { agent: spec.name, lock: agentLock, catalog, hash, seen, problems })
    const model = await pin(spec.model)
    const plugins: PluginRef[] = []
    for (const ref of spec.plugins) plugins.push(await pin(ref))
    for (const name of Object.keys(agentLock))
      if (!seen.has(name)) problems.push(`${spec.name}: plugin ${name} is in the lock but not in the preset`)
    out[spec.name] = { ...spec, model, plugins }
  }
  for (const name of Object.keys(locked.lock.agents))
    if (!Object.hasOwn(preset.agents, name)) problems.push(`agent "${name}" is in the lock but not in the preset`)
  if (problems.length) {
    const shown = relative(process.cwd(), locked.file) || locked.file
    throw new CordageError(
      'lock_mismatch',
      `preset ${preset.shown} does not match its lock ${shown}:\n  ${problems.join('\n  ')}\nrun cordage lock --preset ${shellQuote(preset.file)} to lock what is installed now, or pass --no-lock to ignore the lock`,
      { data: problems },
    )
  }
  return out
}

/** What pinning one plugin reference of an agent to its lock needs; problems are collected, not thrown. */
interface PinContext {
  agent: string
  lock: LockFile['agents'][string]
  catalog: PluginCatalog
  hash: (entry: Pick<CatalogEntry, 'dir' | 'entry'>) => string | Promise<string>
  /** Names of the agent's plugins seen so far, to find those the lock has and the preset does not. */
  seen: Set<string>
  problems: string[]
}

/** A plugin reference pinned to the version its agent's lock names, checked against what is installed. */
async function pinRef(ref: PluginRef, c: PinContext): Promise<PluginRef> {
  let name = ref.plugin
  let entry: CatalogEntry | undefined
  if (ref.path !== undefined) {
    try {
      entry = await c.catalog.addFolder(ref.path)
      name = entry.manifest.name
    } catch (error) {
      if (!CordageError.is(error)) throw error
      c.problems.push(`${c.agent}: ${ref.at}: ${error.message}`)
      return ref
    }
  }
  c.seen.add(name!)
  const want = Object.hasOwn(c.lock, name!) ? c.lock[name!] : undefined
  if (!want) {
    c.problems.push(`${c.agent}: plugin ${name} (${ref.at}) is in the preset but not in the lock`)
    return ref
  }
  if (!semver.satisfies(want.version, ref.version)) {
    c.problems.push(`${c.agent}: ${name}: the lock has ${want.version}, which the preset's range ${ref.version} (${ref.at}) does not admit`)
    return ref
  }
  if (entry) {
    if (entry.manifest.version !== want.version)
      c.problems.push(`${c.agent}: ${name}: locked at ${want.version}, but ${ref.path} holds ${entry.manifest.version}`)
  } else {
    try {
      entry = c.catalog.find(name!, want.version)
    } catch (error) {
      if (!CordageError.is(error)) throw error
      const installed = c.catalog
        .entries()
        .filter((e) => e.manifest.name === name)
        .map((e) => e.manifest.version)
      c.problems.push(
        `${c.agent}: ${name}: locked at ${want.version}, which is not installed (installed: ${installed.join(', ') || 'none'})`,
      )
      return ref
    }
  }
  const now = await c.hash(entry)
  const why = unhashableReason(now)
  if (why !== undefined) c.problems.push(`${c.agent}: ${name}@${want.version}: ${why}`)
  else if (now !== want.hash)
    c.problems.push(
      `${c.agent}: ${name}@${want.version}: its files differ from the lock (locked ${want.hash}, installed ${now} in ${relative(process.cwd(), entry.dir) || entry.dir})`,
    )
  return ref.path !== undefined ? ref : { ...ref, version: want.version }
}
