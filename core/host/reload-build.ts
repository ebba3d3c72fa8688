/**
 * @module host/reload-build
 * Building a plugin folder into a fresh module for a hot reload, in a way that lets old versions be
 * collected. ESM modules cannot be unloaded (each `import()` of a new URL keeps its module for the life
 * of the process), so the folder is bundled by esbuild to CommonJS in memory and evaluated with `vm`
 * as a function of `require`; when nothing references a version's plugin object any more, its code and
 * closures go with it. See /work/shared/design/cordis-notes.md (measured options).
 *
 * Every bare import stays outside the bundle and is handed in by {@link hostRequire}: the packages whose
 * identity matters (`cordage`, `cordis`, `zod`, `schemastery`) are the host's own loaded instances, so
 * `instanceof Service` and schemas keep working; other packages are required from the plugin folder
 * (loaded once, shared by every version).
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { compileFunction } from 'node:vm'
import { build, type Loader, type Metafile, type Plugin as EsbuildPlugin } from 'esbuild'
import { CordageError } from '../contracts/errors.ts'
import type { CordagePlugin } from '../contracts/manifest.ts'
import type { CatalogEntry } from './catalog.ts'
import { checkManifest } from './manifest-check.ts'
import { codeOf } from './plugin-code.ts'
import { hashOfCode } from './plugin-hash.ts'

/** A plugin folder built into a module that is not (yet) plugged anywhere. */
export interface PluginBuild {
  /** A catalogue entry for it: `module` is the evaluated plugin, `manifest` the one it exports (checked). */
  entry: CatalogEntry & { module: CordagePlugin }
  /** `sha256:` and 16 hex digits of the bundle: the same sources always give the same hash. */
  hash: string
  /**
   * The plugin's content hash (host/plugin-hash.ts) of the very bytes this build compiled, also set as
   * `entry.hash`: what a swap to this build records, even when a file changes after the build.
   */
  contentHash: string
  /** Milliseconds spent bundling and evaluating. */
  buildMs: number
}

/** Packages a plugin must share with the host (a second copy breaks identity checks). */
const Shared: Record<string, () => Promise<object>> = {
  cordage: () => import('cordage'),
  'cordage/host': () => import('cordage/host'),
  'cordage/wire': () => import('cordage/wire'),
  cordis: () => import('cordis'),
  zod: () => import('zod'),
  schemastery: () => import('schemastery'),
}
const sharedLoaded = new Map<string, object>()

/**
 * Bundle the plugin in `entry.dir` (from its entry module) and evaluate it. Only the bundle's hash is
 * computed when `evaluate` is false (to learn the hash of the sources a running version came from).
 * @throws CordageError `plugin_start_failed` (build or evaluation failed), `manifest_invalid` (the
 * module does not export a plugin, or its manifest does not pass the checks)
 */
export async function buildPlugin(entry: Pick<CatalogEntry, 'dir' | 'entry' | 'origin'>): Promise<PluginBuild> {
  const started = performance.now()
  const { code, externals, sources, metafile } = await bundle(entry.dir, entry.entry)
  // Files the bundle did not read (data the code reads at run time, the manifest's package.json) are read now, at build time.
  const contentHash = hashOfCode(entry.dir, codeOf(entry.dir, metafile), (file) => sources.get(file) ?? readFileSync(file))
  const hash = 'sha256:' + createHash('sha256').update(code).digest('hex').slice(0, 16)
  const plugin = await evaluate(code, externals, entry.dir, entry.entry, hash)
  if (
    !plugin ||
    typeof plugin !== 'object' ||
    typeof (plugin as CordagePlugin).apply !== 'function' ||
    !(plugin as CordagePlugin).manifest
  ) {
    throw new CordageError('manifest_invalid', `${entry.entry} must default-export definePlugin(manifest, apply)`)
  }
  const manifest = checkManifest((plugin as CordagePlugin).manifest, entry.entry)
  return {
    entry: { manifest, dir: entry.dir, entry: entry.entry, origin: entry.origin, module: plugin as CordagePlugin, hash: contentHash },
    hash,
    contentHash,
    buildMs: performance.now() - started,
  }
}

/** The hash the bundle of `dir` has now, without evaluating it; undefined when it does not build. */
export async function hashPlugin(dir: string, entryFile: string): Promise<string | undefined> {
  try {
    const { code } = await bundle(dir, entryFile)
    return 'sha256:' + createHash('sha256').update(code).digest('hex').slice(0, 16)
  } catch {
    return undefined
  }
}

async function bundle(
  dir: string,
  entryFile: string,
): Promise<{ code: string; externals: Set<string>; sources: Map<string, string>; metafile: Metafile }> {
  const externals = new Set<string>()
  const sources = new Map<string, string>()
  let result
  try {
    result = await build({
      entryPoints: [entryFile],
      bundle: true,
      write: false,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      logLevel: 'silent',
      absWorkingDir: dir,
      sourcemap: false,
      metafile: true,
      plugins: [sourcesOf(sources)],
    })
  } catch (error) {
    const errors = (error as { errors?: { text: string; location?: { file: string; line: number; column: number } | null }[] }).errors
    const text = errors?.length
      ? errors
          .map((e) => `${e.location ? `${resolve(dir, e.location.file)}:${e.location.line}:${e.location.column}: ` : ''}${e.text}`)
          .join('; ')
      : (error as Error).message
    throw new CordageError('plugin_start_failed', `cannot build ${dir}: ${text}`, { cause: error })
  }
  for (const output of Object.values(result.metafile.outputs)) {
    for (const imported of output.imports) if (imported.external) externals.add(imported.path)
  }
  return { code: result.outputFiles[0].text, externals, sources, metafile: result.metafile }
}

const loaders: Record<string, Loader> = {
  ts: 'ts',
  mts: 'ts',
  cts: 'ts',
  tsx: 'tsx',
  jsx: 'jsx',
  js: 'js',
  mjs: 'js',
  cjs: 'js',
  json: 'json',
}

/**
 * Every local source file is read here, once, and its text kept in `sources`: the plugin's content hash
 * is computed from exactly the text that was compiled. CommonJS has no `import.meta`: in the plugin's
 * own files (not a package's) `import.meta.url`, `.filename` and `.dirname` are replaced with the values
 * they have for that file, so paths a plugin computes stay right.
 */
function sourcesOf(sources: Map<string, string>): EsbuildPlugin {
  return {
    name: 'cordage-sources',
    setup(b) {
      b.onLoad({ filter: /\.(m?ts|cts|m?js|cjs|tsx|jsx|json)$/ }, async (args) => {
        if (args.namespace !== 'file') return undefined
        const source = await readFile(args.path, 'utf8')
        sources.set(args.path, source)
        const loader = loaders[args.path.slice(args.path.lastIndexOf('.') + 1)]
        if (args.path.includes('/node_modules/') || !source.includes('import.meta')) return { contents: source, loader }
        const dirname = args.path.slice(0, args.path.lastIndexOf('/'))
        const contents = source
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.filename', JSON.stringify(args.path))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname))
        return { contents, loader }
      })
    },
  }
}

async function evaluate(code: string, externals: Set<string>, dir: string, entryFile: string, hash: string): Promise<unknown> {
  for (const name of externals) {
    if (Shared[name] && !sharedLoaded.has(name)) sharedLoaded.set(name, esModule(await Shared[name]()))
  }
  const require = hostRequire(dir)
  const module = { exports: {} as Record<string, unknown> }
  try {
    // compileFunction, not vm.Script: on Node 20 every Script keeps about 1 KB alive for the life of
    // the process (measured: linear heap growth over reloads); compiled functions are collected.
    // A named file makes stack traces point at the plugin; the hash tells the versions apart.
    const wrapper = compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: `${entryFile}#${hash}` })
    wrapper(module.exports, require, module, entryFile, dir)
  } catch (error) {
    throw new CordageError('plugin_start_failed', `cannot load ${entryFile} (rebuilt): ${(error as Error)?.message ?? error}`, {
      cause: error,
    })
  }
  return (module.exports as { default?: unknown }).default
}

/** The `require` a rebuilt plugin gets: the host's shared packages, else Node's require from the plugin folder. */
function hostRequire(dir: string): (id: string) => unknown {
  const fallback = createRequire(join(dir, 'index.js'))
  return (id: string) => sharedLoaded.get(id) ?? fallback(id)
}

/** A module namespace as esbuild's CommonJS interop expects it (`default` stays the default export). */
function esModule(namespace: object): object {
  return Object.freeze(Object.assign(Object.create(null), namespace, { __esModule: true }))
}
