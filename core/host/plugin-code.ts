/**
 * @module host/plugin-code
 * What code a plugin runs, as its bundle sees it: the local files esbuild includes when it bundles the
 * plugin from its entry module (a helper in `../shared/`, a data file it imports), and the npm packages
 * it imports, each resolved from the importing file as Node would (name and exact version of the
 * `package.json` that resolves). host/plugin-hash.ts turns this into the plugin's content hash.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { createRequire, isBuiltin } from 'node:module'
import { dirname, join, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { BuildOptions, Message, Metafile, PluginBuild } from 'esbuild'
import { SharedPackages } from './shared-modules.ts'

/** The code of a plugin as its bundle has it. */
export interface PluginCode {
  /** Absolute paths of the local files the bundle includes, sorted. */
  inputs: string[]
  /** Each bare import left outside the bundle, with the file that imports it. */
  imports: { importer: string; path: string }[]
  /**
   * Every local import names the file it resolves to (`./rules.ts`, not `./rules`), and none was left
   * unresolved: no file created later can change what the bundle includes (host/plugin-code-cache.ts).
   */
  exact?: boolean
}

/**
 * esbuild, loaded when a plugin is bundled: a command whose plugins' code is in the cache
 * (host/plugin-code-cache.ts) never loads it (0.07 CPU-s of a command's start, measured).
 */
const esbuild = () => createRequire(import.meta.url)('esbuild') as typeof import('esbuild')

/** A package a plugin imports, as it resolves from the importing file. */
export type ResolvedPackage =
  | { name: string; found: false }
  /** `dir` is the package's real folder; `linked` when that is not inside a node_modules (a workspace package). */
  | { name: string; found: true; version: string; dir: string; linked: boolean }

/**
 * The packages that are the host itself (`cordage`, `cordage/kit`, ...): a plugin runs on the host it is
 * loaded by, whose version every run records on its own; hashing them into each plugin would make every
 * change to the host a drift of every plugin.
 */
const hostPackages = new Set(['cordage'])

/** The entry module of the plugin folder `dir`, as the catalogue finds it; undefined when there is none. */
export function entryOf(dir: string): string | undefined {
  for (const name of ['index.ts', 'index.js', 'index.mjs']) if (existsSync(join(dir, name))) return join(dir, name)
  try {
    const field = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))?.cordage?.plugin
    if (typeof field === 'string' && existsSync(resolve(dir, field))) return resolve(dir, field)
  } catch {
    // No package.json, or not JSON: no entry named there.
  }
  return undefined
}

/**
 * Bundle the plugin from `entry` (in memory, every bare import kept outside) and list what it includes.
 * A local import that does not resolve is kept outside (see {@link unresolvedExternal}); esbuild's
 * plugins run only in its asynchronous API, so then this builds again in a child Node process with that
 * plugin and waits for it. Without such an import the plugin changes nothing: both builds agree.
 * @throws {BundleError} when it cannot be bundled (a syntax error): the caller fails closed
 */
export function bundleCode(dir: string, entry: string): PluginCode {
  try {
    return codeOf(dir, esbuild().buildSync(hashBuild(dir, entry)).metafile)
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors ?? []
    if (!errors.length || !errors.every((e) => e.text.startsWith('Could not resolve ')))
      throw new BundleError(errors.length ? errors.map((e) => e.text) : [String((error as Error).message)], { cause: error })
  }
  const esbuildUrl = pathToFileURL(createRequire(import.meta.url).resolve('esbuild')).href
  const script = `const { build } = await import(${JSON.stringify(esbuildUrl)})
const setup = ${unresolvedExternalSource}
const options = JSON.parse(process.argv[1])
try {
  const { metafile } = await build({ ...options, plugins: [{ name: 'unresolved-external', setup }] })
  process.stdout.write(JSON.stringify({ metafile }))
} catch (error) {
  process.stdout.write(JSON.stringify({ errors: (error.errors ?? []).map((e) => e.text), message: String(error.message) }))
}`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(hashBuild(dir, entry))], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  const result = JSON.parse(out) as { metafile?: Metafile; errors?: string[]; message?: string }
  if (!result.metafile) throw new BundleError(result.errors?.length ? result.errors : [result.message ?? 'esbuild failed'])
  return codeOf(dir, result.metafile)
}

/** {@link bundleCode} in esbuild's own process: several plugins bundle side by side while the host goes on. */
export async function bundleCodeAsync(dir: string, entry: string): Promise<PluginCode> {
  try {
    const plugins = [{ name: 'unresolved-external', setup: unresolvedExternal }]
    return codeOf(dir, (await esbuild().build({ ...hashBuild(dir, entry), plugins })).metafile)
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors
    throw new BundleError(errors?.length ? errors.map((e) => e.text) : [String((error as Error).message)], { cause: error })
  }
}

/** A plugin esbuild cannot bundle: `errors` are esbuild's messages (`Expected "}" but found end of file`). */
export class BundleError extends Error {
  constructor(
    readonly errors: string[],
    options?: ErrorOptions,
  ) {
    super(errors.join('; '), options)
    this.name = 'BundleError'
  }
}

/**
 * An esbuild plugin that keeps a local import that does not resolve (`await import('./optional.js')`
 * behind a branch that never runs) outside the bundle instead of failing it: Node runs such a plugin,
 * so its other files must still be hashed. As source text, so that the child process of
 * {@link bundleCode} runs the very same code; a second `resolve` (marked by its pluginData) is esbuild's own.
 */
const unresolvedExternalSource = `(b) => {
  const again = { again: true }
  b.onResolve({ filter: /^(\\.\\.?(\\/|$)|\\/)/ }, async (args) => {
    if (args.pluginData === again) return undefined
    const found = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, with: args.with, pluginData: again })
    return found.errors.length ? { path: args.path, external: true } : found
  })
}`
const unresolvedExternal: (build: PluginBuild) => void = new Function(`return ${unresolvedExternalSource}`)()

const hashBuild = (dir: string, entry: string) =>
  ({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true as const,
    format: 'esm' as const,
    platform: 'node' as const,
    target: 'node20',
    packages: 'external' as const,
    logLevel: 'silent' as const,
    absWorkingDir: dir,
  }) satisfies BuildOptions

/** The files and bare imports of a build's metafile (paths in it are relative to `dir`, the build's working directory). */
export function codeOf(dir: string, metafile: Metafile): PluginCode {
  const inputs: string[] = []
  const imports: PluginCode['imports'] = []
  let exact = true
  for (const [path, input] of Object.entries(metafile.inputs)) {
    // Only real files: esbuild also lists virtual modules (`<define:…>`, a plugin's namespace).
    const file = resolve(dir, path.replace(/^file:/, ''))
    if (!existsSync(file)) {
      exact = false
      continue
    }
    inputs.push(file)
    for (const imported of input.imports) {
      if (imported.external && isBare(imported.path)) imports.push({ importer: file, path: imported.path })
      else if (!imported.external) exact &&= namesItsFile(file, imported.original, resolve(dir, imported.path))
      // A local import left outside (it did not resolve): a file created later would be bundled.
      else if (!isBuiltin(imported.path)) exact = false
    }
  }
  return { inputs: inputs.sort(), imports, exact }
}

/** Whether the import `original` written in `importer` is the relative path of `resolved` itself. */
const namesItsFile = (importer: string, original: string | undefined, resolved: string) =>
  original !== undefined && /^\.\.?\//.test(original) && resolve(dirname(importer), original) === resolved

const isBare = (path: string) => !/^(\.|\/|[a-zA-Z]:[\\/])/.test(path) && !isBuiltin(path)

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/** Whether a package is the host itself (see {@link hostPackages}). */
export const isHostPackage = (name: string) => hostPackages.has(name)

/**
 * The package `name` imported by the file `importer`, as it resolves when the plugin runs: the host's
 * own copy for the packages the host shares with every plugin (host/shared-modules.ts), else from the
 * importing file's folder as Node resolves it.
 */
export function resolveImport(name: string, importer: string): ResolvedPackage {
  return resolvePackage(name, SharedPackages.includes(name) ? import.meta.dirname : dirname(importer))
}

/**
 * The package `name` as Node resolves it from a file in `from`: the nearest `node_modules/<name>` up
 * the folders, its `package.json` version and real folder.
 */
export function resolvePackage(name: string, from: string): ResolvedPackage {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'node_modules', name, 'package.json')
    if (existsSync(manifest)) {
      try {
        const version = JSON.parse(readFileSync(manifest, 'utf8'))?.version
        const real = realpathSync(dirname(manifest))
        return {
          name,
          found: true,
          version: typeof version === 'string' ? version : '(no version)',
          dir: real,
          linked: !real.split(sep).includes('node_modules'),
        }
      } catch {
        return { name, found: false }
      }
    }
    if (dirname(dir) === dir) return { name, found: false }
  }
}
