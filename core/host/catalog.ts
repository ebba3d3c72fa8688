/**
 * @module host/catalog
 * The plugins the host can load: every folder under the built-in plugins/ directory, the npm packages
 * the project depends on that declare a plugin (a `"cordage"` field in their package.json, see
 * docs/reference/manifest.md), plus folders named by path in a preset. Only manifests are read here; plugin code
 * is imported when an agent actually uses the plugin.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { semver } from './semver.ts'
import { CordageError } from '../contracts/errors.ts'
import type { CordagePlugin, Manifest } from '../contracts/manifest.ts'
import { importPluginModule } from './bounded-import.ts'
import { checkManifest } from './manifest-check.ts'
import { shareHostPackages } from './shared-modules.ts'
import { closest } from '../kit/closest.ts'

export interface CatalogEntry {
  manifest: Manifest
  /** The plugin folder. */
  dir: string
  /** Module that default-exports the plugin (index.ts or index.js). */
  entry: string
  /**
   * How a preset names it: `builtin` by name from the catalogue (a folder of plugins/, or an npm package:
   * then `package` is set), `path` by its folder.
   */
  origin: 'builtin' | 'path'
  /** For a plugin found in the project's node_modules: the dependency it was installed as, and its package.json name. */
  package?: { dependency: string; name: string }
  /** The plugin, already evaluated (a hot-reload build, see host/reload-build.ts): used instead of importing `entry`. */
  module?: CordagePlugin
  /** With `module`: the content hash (host/plugin-hash.ts) of the bytes that build compiled, what a swap to it records. */
  hash?: string
}

const manifestFiles = ['manifest.ts', 'manifest.js', 'manifest.mjs']
const entryFiles = ['index.ts', 'index.js', 'index.mjs']

/** The repository's own plugins/ folder. */
export const BuiltinPluginsDir = resolve(import.meta.dirname, '../../plugins')

/** A package that declares a plugin but could not be added, kept to explain why its plugin is missing. */
export interface BrokenPackage {
  /** The dependency name (the folder under node_modules). */
  dependency: string
  dir: string
  error: CordageError
  /** Set when the manifest was read but the plugin clashes with one already installed. */
  plugin?: string
  version?: string
}

export interface ScanOptions {
  /**
   * A folder of the project whose npm dependencies are searched for plugins: the nearest package.json
   * at or above it is the project's. Default: the working directory. `false`: built-in plugins only.
   */
  project?: string | false
  /**
   * Read a folder's manifest only when a plugin it may hold is asked for ({@link PluginCatalog.read}),
   * for a command that loads one preset and ends: importing and checking the thirty built-in manifests
   * cost a `cordage run` 0.08 of its 0.75 CPU-s (measured, 2026-12-07). A folder may hold the plugin it
   * is named after, or one whose name it starts with and `-` (policy-rules-v1 holds policy-rules 1.x);
   * test/catalog-lazy.test.ts checks every built-in folder is so named.
   */
  lazy?: boolean
}

/** Whether the folder `folder` may hold the plugin `name` (see {@link ScanOptions.lazy}). */
const mayHold = (folder: string, name: string) => folder === name || folder.startsWith(`${name}-`)

export class PluginCatalog {
  private byName = new Map<string, CatalogEntry[]>()
  private byDir = new Map<string, CatalogEntry>()
  private broken: BrokenPackage[] = []
  private missing: string[] = []
  /** Plugin folders under the scanned folder whose manifest is not read yet, by folder name (a lazy scan). */
  private unread = new Map<string, string>()
  /**
   * Where each name is listed (messages, {@link entries}): as a whole scan adds them, the scanned
   * folders in name order, then packages, then folders named by path, however late a lazy scan read them.
   */
  private rank = new Map<string, number>()
  private folders: string[] = []
  private later = 0

  /**
   * Every plugin folder under `dir` (read now, or as asked for when `lazy`), then the plugin packages
   * among the project's dependencies.
   */
  static async scan(dir = BuiltinPluginsDir, options: ScanOptions = {}): Promise<PluginCatalog> {
    const catalog = new PluginCatalog()
    for (const name of readdirSync(dir).sort()) {
      const folder = join(dir, name)
      if (!statSync(folder).isDirectory() || !manifestFiles.some((f) => existsSync(join(folder, f)))) continue
      catalog.unread.set(name, folder)
      catalog.folders.push(folder)
    }
    if (!options.lazy) await catalog.read()
    if (options.project !== false) await catalog.addProject(options.project ?? process.cwd())
    return catalog
  }

  /**
   * Read the manifests of the folders not read yet that may hold a plugin of `names`, or of every one.
   * A folder that turns out to hold a plugin it is not named after makes every folder be read: what
   * the catalogue answers is then the same as if it had read them all at the start.
   */
  async read(names?: Iterable<string>): Promise<void> {
    const wanted = names === undefined ? undefined : [...names]
    for (const [folder, dir] of [...this.unread]) {
      if (wanted && !wanted.some((name) => mayHold(folder, name))) continue
      if (!this.unread.delete(folder)) continue
      const entry = await loadFolder(dir, 'builtin')
      this.add(entry)
      if (wanted && !mayHold(folder, entry.manifest.name)) return this.read()
    }
  }

  /** The names installed, in the order a whole scan adds them. */
  private names(): string[] {
    return [...this.byName.keys()].sort((a, b) => this.rank.get(a)! - this.rank.get(b)!)
  }

  /** Whether every folder's manifest has been read. */
  get whole(): boolean {
    return this.unread.size === 0
  }

  /** A caller of a lazily scanned catalogue asked before reading what it asks about: a bug, said loudly. */
  private mustHaveRead(name?: string): void {
    for (const folder of this.unread.keys()) {
      if (name === undefined || mayHold(folder, name))
        throw new Error(
          `PluginCatalog: ${name === undefined ? 'every plugin folder' : `the folders that may hold "${name}"`} must be read first (await catalog.read()): this catalogue was scanned lazily`,
        )
    }
  }

  /**
   * Add the plugins of a project's npm dependencies: each package named in `dependencies`,
   * `devDependencies` or `optionalDependencies` of the nearest package.json at or above `folder`, installed
   * in that project's node_modules, whose own package.json has a `"cordage"` field. A package that has
   * the field but cannot be read is not added; `find` reports it when a preset asks for its plugin.
   */
  async addProject(folder: string): Promise<void> {
    const pkgFile = nearestPackageJson(folder)
    if (!pkgFile) return
    const project = dirname(pkgFile)
    let pkg: Record<string, unknown>
    try {
      pkg = JSON.parse(readFileSync(pkgFile, 'utf8'))
    } catch {
      return // not ours to judge: npm reports a broken package.json of the project
    }
    const names = new Set<string>()
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      const deps = pkg[field]
      if (deps && typeof deps === 'object') for (const name of Object.keys(deps)) names.add(name)
    }
    for (const dependency of [...names].sort()) {
      const dir = join(project, 'node_modules', ...dependency.split('/'))
      if (!existsSync(join(dir, 'package.json'))) {
        this.missing.push(dependency)
        continue
      }
      let entry: CatalogEntry | undefined
      try {
        entry = await loadPackage(realpathSync(dir), dependency)
      } catch (error) {
        if (!CordageError.is(error)) throw error
        this.broken.push({ dependency, dir, error })
        continue
      }
      if (!entry || this.byDir.has(entry.dir)) continue
      // Built-in plugins come first, as in a whole scan: a package of the same name and version is the one refused.
      await this.read()
      try {
        this.add(entry)
      } catch (error) {
        if (!CordageError.is(error)) throw error
        this.broken.push({ dependency, dir, error, plugin: entry.manifest.name, version: entry.manifest.version })
      }
    }
  }

  /** Packages that declare a plugin but could not be added (a bad manifest, a version installed twice). */
  brokenPackages(): readonly BrokenPackage[] {
    return this.broken
  }

  /** Load (once) a plugin folder given by path, and add it. */
  async addFolder(dir: string): Promise<CatalogEntry> {
    const known = this.byDir.get(dir)
    if (known) return known
    shareHostPackages()
    const entry = await loadFolder(dir, 'path')
    // A folder of the same plugin and version among the built-in ones conflicts with it, read or not yet.
    await this.read([entry.manifest.name])
    this.add(entry)
    return entry
  }

  add(entry: CatalogEntry): void {
    const list = this.byName.get(entry.manifest.name) ?? []
    if (list.some((e) => e.manifest.version === entry.manifest.version && e.dir !== entry.dir)) {
      const other = list.find((e) => e.manifest.version === entry.manifest.version)!
      throw new CordageError(
        'plugin_conflict',
        `${entry.manifest.name}@${entry.manifest.version} is installed twice: ${other.dir} and ${entry.dir}`,
      )
    }
    list.push(entry)
    list.sort((a, b) => semver.rcompare(a.manifest.version, b.manifest.version))
    if (!this.rank.has(entry.manifest.name)) {
      const scanned = this.folders.indexOf(entry.dir)
      this.rank.set(entry.manifest.name, scanned >= 0 ? scanned : this.folders.length + ++this.later)
    }
    this.byName.set(entry.manifest.name, list)
    this.byDir.set(entry.dir, entry)
  }

  /** The highest installed version of `name` within `range`, or a `plugin_not_found` / `plugin_version_unsatisfiable` error. */
  find(name: string, range: string): CatalogEntry {
    this.mustHaveRead(name)
    const list = this.byName.get(name)
    if (!list) {
      // A package installed under this name that declares a plugin but is broken: its own error says why.
      const own = this.broken.find((b) => b.plugin === undefined && unscoped(b.dependency) === name)
      if (own) throw new CordageError(own.error.code, `no plugin named "${name}" is installed: ${own.error.message}`, { cause: own.error })
      const names = this.names()
      const hint = closest(name, names)
      const missing = this.missing.filter((d) => unscoped(d) === name)
      throw new CordageError(
        'plugin_not_found',
        `no plugin named "${name}" is installed${hint ? ` (did you mean "${hint}"?)` : ''}; installed: ${names.join(', ')}${missing.length ? `; the project depends on ${missing.join(', ')}, which is not in node_modules (run npm install)` : ''}${this.brokenNote()}`,
      )
    }
    const match = list.find((e) => semver.satisfies(e.manifest.version, range))
    if (!match) {
      throw new CordageError(
        'plugin_version_unsatisfiable',
        `no installed version of "${name}" satisfies ${range} (installed: ${list.map(describe).join(', ')})${this.brokenNote(name)}`,
      )
    }
    const twice = this.broken.find((b) => b.plugin === name && b.version === match.manifest.version)
    if (twice) throw twice.error
    return match
  }

  /** `; packages that declare a plugin but cannot be used: ...`, for not-found messages. */
  private brokenNote(name?: string): string {
    const list = this.broken.filter((b) => name === undefined || b.plugin === undefined || b.plugin === name)
    if (!list.length) return ''
    return `; ${list.length === 1 ? 'a package declares' : 'packages declare'} a plugin but cannot be used: ${list.map((b) => `${b.dependency} (${b.error.message})`).join('; ')}`
  }

  /** Installed plugins that provide `service`. */
  providersOf(service: string): CatalogEntry[] {
    return this.entries().filter((e) => e.manifest.provides?.[service])
  }

  entries(): CatalogEntry[] {
    this.mustHaveRead()
    return this.names().flatMap((name) => this.byName.get(name)!)
  }
}

/** `returns-desk@1.0.0`, with the npm package it came from. */
function describe(e: CatalogEntry): string {
  return e.package ? `${e.manifest.version} (npm ${e.package.dependency})` : e.manifest.version
}

function unscoped(dependency: string): string {
  return dependency.startsWith('@') ? dependency.slice(dependency.indexOf('/') + 1) : dependency
}

/** What the `"cordage"` field of a plugin package's package.json holds. */
interface PackageField {
  plugin: string
  manifest?: string
}

/**
 * A package folder under node_modules: undefined when its package.json has no `"cordage"` field, else
 * its plugin (manifest read and checked), or a `manifest_invalid` error naming the package and the field.
 */
async function loadPackage(dir: string, dependency: string): Promise<CatalogEntry | undefined> {
  const pkgFile = join(dir, 'package.json')
  let text: string
  try {
    text = readFileSync(pkgFile, 'utf8')
  } catch {
    return undefined // unreadable package.json: npm's problem
  }
  let pkg: { name?: unknown; version?: unknown; type?: unknown; cordage?: unknown }
  try {
    pkg = JSON.parse(text)
  } catch (error) {
    // Not ours to judge, unless it looks like it means to declare a plugin: then say why it is not one.
    if (!text.includes('"cordage"')) return undefined
    throw new CordageError(
      'manifest_invalid',
      `package ${dependency} (${pkgFile}) seems to declare a Cordage plugin, but its package.json is not valid JSON (${(error as Error).message}); fix the file, or reinstall the package`,
      { cause: error },
    )
  }
  if (!pkg || typeof pkg !== 'object' || Array.isArray(pkg)) return undefined
  if (pkg.cordage === undefined) return undefined
  const bad = (what: string) =>
    new CordageError('manifest_invalid', `package ${dependency} (${pkgFile}) declares a Cordage plugin, but ${what}`)
  const { entry, manifestFile } = packageFiles(dir, pkg.cordage, bad)
  if (typeof pkg.version !== 'string') throw bad('its package.json has no "version"')
  shareHostPackages()
  let loaded: CatalogEntry
  try {
    loaded = await loadFolder(dir, 'builtin', { manifestFile, entry })
  } catch (error) {
    if (!CordageError.is(error)) throw error
    throw new CordageError(error.code, `package ${dependency} (${pkgFile}) declares a Cordage plugin, but ${error.message}`, {
      cause: error,
      data: error.data,
    })
  }
  if (loaded.manifest.version !== pkg.version) {
    throw bad(
      `its manifest says version ${loaded.manifest.version} and its package.json ${pkg.version}; they must be the same (a version must always mean the same code)`,
    )
  }
  return { ...loaded, package: { dependency, name: typeof pkg.name === 'string' ? pkg.name : dependency } }
}

/** The entry module and the manifest a package's `"cordage"` field names, checked to be files inside the package. */
function packageFiles(dir: string, cordage: unknown, bad: (what: string) => CordageError): { entry: string; manifestFile: string } {
  const field = cordage as Partial<PackageField> | null
  const example = '{"cordage": {"plugin": "./index.js", "manifest": "./manifest.js"}}'
  if (!field || typeof field !== 'object' || Array.isArray(field))
    throw bad(`its "cordage" field is ${JSON.stringify(cordage)}, expected an object such as ${example}`)
  const unknown = Object.keys(field).filter((k) => k !== 'plugin' && k !== 'manifest')
  if (unknown.length)
    throw bad(`its "cordage" field has unknown key(s) ${unknown.map((k) => `"${k}"`).join(', ')}; allowed: "plugin", "manifest"`)
  if (typeof field.plugin !== 'string' || !field.plugin)
    throw bad(
      `"cordage.plugin" is ${JSON.stringify(field.plugin) ?? 'missing'}, expected the module that default-exports the plugin, such as "./index.js"`,
    )
  if (field.manifest !== undefined && (typeof field.manifest !== 'string' || !field.manifest))
    throw bad(`"cordage.manifest" is ${JSON.stringify(field.manifest)}, expected a module path such as "./manifest.js"`)
  const inside = (key: string, path: string): string => {
    const file = resolve(dir, path)
    const rel = relative(dir, file)
    if (rel.startsWith('..') || isAbsolute(rel)) throw bad(`"cordage.${key}" (${path}) points outside the package`)
    if (!existsSync(file) || !statSync(file).isFile()) throw bad(`"cordage.${key}" names ${path}, which does not exist in the package`)
    return file
  }
  const entry = inside('plugin', field.plugin)
  let manifestFile: string
  if (field.manifest !== undefined) {
    manifestFile = inside('manifest', field.manifest)
  } else {
    const beside = manifestFiles.map((f) => join(dirname(entry), f)).find((f) => existsSync(f))
    if (!beside) throw bad(`it names no "cordage.manifest" and there is no ${manifestFiles.join(', ')} beside ${field.plugin}`)
    manifestFile = beside
  }
  return { entry, manifestFile }
}

async function loadFolder(
  dir: string,
  origin: CatalogEntry['origin'],
  files?: { manifestFile: string; entry: string },
): Promise<CatalogEntry> {
  if (!existsSync(dir)) throw new CordageError('plugin_not_found', `plugin folder ${dir} does not exist`)
  if (!statSync(dir).isDirectory())
    throw new CordageError(
      'plugin_not_found',
      `${dir} is a file, not a plugin folder: name the folder that holds its manifest.ts and index.ts`,
    )
  const manifestFile = files?.manifestFile ?? manifestFiles.map((f) => join(dir, f)).find((f) => existsSync(f))
  const entry = files?.entry ?? entryFiles.map((f) => join(dir, f)).find((f) => existsSync(f))
  if (!manifestFile)
    throw new CordageError('manifest_invalid', `plugin folder ${dir} has no manifest (expected one of ${manifestFiles.join(', ')})`)
  if (!entry)
    throw new CordageError('manifest_invalid', `plugin folder ${dir} has no entry module (expected one of ${entryFiles.join(', ')})`)
  if (![manifestFile, entry].every((f) => f.endsWith('.mjs'))) {
    // .ts and .js files are ES modules only inside a package marked so; otherwise Node (and tsx) load
    // them as CommonJS, and the first `import` fails with an error that does not point here.
    const pkg = nearestPackageJson(dir)
    const type = pkg ? readPackageJson(pkg, dir).type : undefined
    if (type !== 'module') {
      const says = type === undefined ? 'does not say "type": "module"' : `says "type": ${JSON.stringify(type)?.slice(0, 40)}, not "module"`
      throw new CordageError(
        'manifest_invalid',
        `plugin folder ${dir} is not an ES module package: ${pkg ? `${pkg} ${says}` : 'no package.json above it says "type": "module"'}; add a package.json with {"type": "module"} to the plugin folder`,
      )
    }
  }
  let module: { default?: unknown }
  try {
    module = await importPluginModule(manifestFile, dir, 'manifest')
  } catch (error) {
    if (CordageError.is(error)) throw error
    throw new CordageError('manifest_invalid', `cannot load ${manifestFile}: ${(error as Error)?.message ?? error}`, { cause: error })
  }
  return { manifest: checkManifest(module.default, manifestFile), dir, entry, origin }
}

/**
 * A plugin folder's package.json (or the nearest one above it), as an object.
 * @throws CordageError `manifest_invalid` naming the file when it cannot be read, is not JSON, or is not an object
 */
function readPackageJson(file: string, dir: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    const what =
      error instanceof SyntaxError ? `is not valid JSON (${error.message})` : `cannot be read (${(error as Error)?.message ?? error})`
    throw new CordageError(
      'manifest_invalid',
      `plugin folder ${dir}: its package.json ${file} ${what}; it must be a JSON object such as {"type": "module"}`,
      { cause: error },
    )
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CordageError(
      'manifest_invalid',
      `plugin folder ${dir}: its package.json ${file} holds ${Array.isArray(value) ? 'a list' : JSON.stringify(value)?.slice(0, 40)}, not an object; it must be a JSON object such as {"type": "module"}`,
    )
  }
  return value as Record<string, unknown>
}

function nearestPackageJson(dir: string): string | undefined {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const candidate = join(current, 'package.json')
    if (existsSync(candidate)) return candidate
    if (dirname(current) === current) return undefined
  }
}
