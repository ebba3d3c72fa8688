/**
 * @module host/catalog
 * The plugins the host can load: every folder under the built-in plugins/ directory, plus folders
 * named by path in a preset. Only manifests are read here; plugin code is imported when an agent
 * actually uses the plugin.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import semver from 'semver'
import { CordageError } from '../errors.ts'
import type { CordagePlugin, Manifest } from '../manifest.ts'
import { checkManifest } from './manifest-check.ts'
import { shareHostPackages } from './shared-modules.ts'
import { closest } from './closest.ts'

export interface CatalogEntry {
  manifest: Manifest
  /** The plugin folder. */
  dir: string
  /** Module that default-exports the plugin (index.ts or index.js). */
  entry: string
  origin: 'builtin' | 'path'
  /** The plugin, already evaluated (a hot-reload build, see host/reload-build.ts): used instead of importing `entry`. */
  module?: CordagePlugin
}

const manifestFiles = ['manifest.ts', 'manifest.js', 'manifest.mjs']
const entryFiles = ['index.ts', 'index.js', 'index.mjs']

/** The repository's own plugins/ folder. */
export const BuiltinPluginsDir = resolve(import.meta.dirname, '../../plugins')

export class PluginCatalog {
  private byName = new Map<string, CatalogEntry[]>()
  private byDir = new Map<string, CatalogEntry>()

  /** Read every plugin folder under `dir`. */
  static async scan(dir = BuiltinPluginsDir): Promise<PluginCatalog> {
    const catalog = new PluginCatalog()
    for (const name of readdirSync(dir).sort()) {
      const folder = join(dir, name)
      if (!statSync(folder).isDirectory() || !manifestFiles.some((f) => existsSync(join(folder, f)))) continue
      catalog.add(await loadFolder(folder, 'builtin'))
    }
    return catalog
  }

  /** Load (once) a plugin folder given by path, and add it. */
  async addFolder(dir: string): Promise<CatalogEntry> {
    const known = this.byDir.get(dir)
    if (known) return known
    shareHostPackages()
    const entry = await loadFolder(dir, 'path')
    this.add(entry)
    return entry
  }

  add(entry: CatalogEntry): void {
    const list = this.byName.get(entry.manifest.name) ?? []
    if (list.some((e) => e.manifest.version === entry.manifest.version && e.dir !== entry.dir)) {
      const other = list.find((e) => e.manifest.version === entry.manifest.version)!
      throw new CordageError('plugin_conflict', `${entry.manifest.name}@${entry.manifest.version} is installed twice: ${other.dir} and ${entry.dir}`)
    }
    list.push(entry)
    list.sort((a, b) => semver.rcompare(a.manifest.version, b.manifest.version))
    this.byName.set(entry.manifest.name, list)
    this.byDir.set(entry.dir, entry)
  }

  /** The highest installed version of `name` within `range`, or a `plugin_not_found` / `plugin_version_unsatisfiable` error. */
  find(name: string, range: string): CatalogEntry {
    const list = this.byName.get(name)
    if (!list) {
      const hint = closest(name, [...this.byName.keys()])
      throw new CordageError('plugin_not_found', `no plugin named "${name}" is installed${hint ? ` (did you mean "${hint}"?)` : ''}; installed: ${[...this.byName.keys()].join(', ')}`)
    }
    const match = list.find((e) => semver.satisfies(e.manifest.version, range))
    if (!match) {
      throw new CordageError('plugin_version_unsatisfiable', `no installed version of "${name}" satisfies ${range} (installed: ${list.map((e) => e.manifest.version).join(', ')})`)
    }
    return match
  }

  /** Installed plugins that provide `service`. */
  providersOf(service: string): CatalogEntry[] {
    return [...this.byName.values()].flat().filter((e) => e.manifest.provides?.[service])
  }

  entries(): CatalogEntry[] {
    return [...this.byName.values()].flat()
  }
}

async function loadFolder(dir: string, origin: CatalogEntry['origin']): Promise<CatalogEntry> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new CordageError('plugin_not_found', `plugin folder ${dir} does not exist`)
  }
  const manifestFile = manifestFiles.map((f) => join(dir, f)).find((f) => existsSync(f))
  const entry = entryFiles.map((f) => join(dir, f)).find((f) => existsSync(f))
  if (!manifestFile) throw new CordageError('manifest_invalid', `plugin folder ${dir} has no manifest (expected one of ${manifestFiles.join(', ')})`)
  if (!entry) throw new CordageError('manifest_invalid', `plugin folder ${dir} has no entry module (expected one of ${entryFiles.join(', ')})`)
  if (![manifestFile, entry].every((f) => f.endsWith('.mjs'))) {
    // .ts and .js files are ES modules only inside a package marked so; otherwise Node (and tsx) load
    // them as CommonJS, and the first `import` fails with an error that does not point here.
    const pkg = nearestPackageJson(dir)
    const type = pkg ? (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: string }).type : undefined
    if (type !== 'module') {
      throw new CordageError('manifest_invalid', `plugin folder ${dir} is not an ES module package: ${pkg ? `${pkg} does not say "type": "module"` : 'no package.json above it says "type": "module"'}; add a package.json with {"type": "module"} to the plugin folder`)
    }
  }
  let module: { default?: unknown }
  try {
    module = await import(pathToFileURL(manifestFile).href)
  } catch (error) {
    throw new CordageError('manifest_invalid', `cannot load ${manifestFile}: ${(error as Error).message}`, { cause: error })
  }
  return { manifest: checkManifest(module.default, manifestFile), dir, entry, origin }
}

function nearestPackageJson(dir: string): string | undefined {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const candidate = join(current, 'package.json')
    if (existsSync(candidate)) return candidate
    if (dirname(current) === current) return undefined
  }
}
