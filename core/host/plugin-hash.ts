/**
 * @module host/plugin-hash
 * The content hash of a plugin: what a lock file pins next to the version, what `run/start` and
 * `run/handoff` record, and what a resumed run compares. One function, so they always agree.
 *
 * It covers what runs (docs/reference/manifest.md#what-the-hash-covers):
 * - the files of the plugin folder, at any depth, except the plugin's `test/` folder (its tests, the
 *   helpers they share and the fixture plugins they load), names that start with `.`, `node_modules/`,
 *   `fixtures/`, `test/` and `tests/` folders at any depth, test files (`*.test.*`, `*.spec.*`) and
 *   Markdown (`*.md`: README and CHANGELOG do not change what runs). So the manifest, the code and any
 *   data the code reads (a `package.json`, a JSON table) are in it, and editing a test never makes a
 *   resumed run report drift;
 * - every local file its bundle includes from outside that folder, or from a folder skipped above
 *   (a helper in `../shared/`, a file under `tests/`), as esbuild's metafile lists them (host/plugin-code.ts);
 *   an import esbuild cannot resolve (a dynamic import behind a branch that never runs) is left out, not fatal;
 * - the exact version of each npm package it imports, resolved from the importing file; a workspace
 *   package (linked, not inside a node_modules) also with the hash of its files.
 * A folder without an entry module hashes its files alone (marked so). A plugin with an entry that
 * esbuild cannot bundle (a syntax error) fails closed: its hash never matches (see {@link pluginHash}).
 * `cordage dev` ignores the same folder files when it watches.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import {
  BundleError,
  bundleCode,
  bundleCodeAsync,
  entryOf,
  isHostPackage,
  packageName,
  resolveImport,
  type PluginCode,
} from './plugin-code.ts'
import { recalledCode, rememberCode } from './plugin-code-cache.ts'

const skippedDirs = new Set(['node_modules', 'fixtures', 'test', 'tests'])
const testFile = /\.(test|spec)\.[cm]?[jt]sx?$/

const skippedDir = (name: string) => name.startsWith('.') || skippedDirs.has(name)
const skippedFile = (name: string) => name.startsWith('.') || testFile.test(name) || name.endsWith('.md')

/**
 * Whether the file at `path` (relative to the plugin folder, `/` between names) is one that makes up
 * the plugin, so that a change to it changes {@link pluginHash}.
 * @example shipsInPlugin('rules.ts') // true
 * @example shipsInPlugin('test/test-desk.ts') // false
 */
export function shipsInPlugin(path: string): boolean {
  const names = path.split('/').filter(Boolean)
  const file = names.pop()
  return file !== undefined && !names.some(skippedDir) && !skippedFile(file)
}

/**
 * Whether files in the folder at `path` (relative to the plugin folder, `/` between names) can make up
 * the plugin: what `cordage dev` watches below a plugin folder.
 * @example walksPluginFolder('lib/util') // true
 * @example walksPluginFolder('node_modules/zod') // false
 */
export function walksPluginFolder(path: string): boolean {
  return !path.split('/').filter(Boolean).some(skippedDir)
}

/**
 * Relative paths (with `/`) of the files that make up the plugin in `dir`, sorted. A symbolic link is
 * followed: to a file, it counts as that file (its content is what runs); to a folder, that folder is
 * walked once (a link back up the tree is not walked again); a link to nothing is left out.
 */
export function pluginFiles(dir: string): string[] {
  const out: string[] = []
  const walked = new Set<string>()
  const walk = (folder: string, prefix: string) => {
    const real = realpathSync(folder)
    if (walked.has(real)) return
    walked.add(real)
    const entries = readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      const path = join(folder, entry.name)
      const kind = entry.isSymbolicLink() ? linkKind(path) : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : undefined
      if (kind === 'dir') {
        if (!skippedDir(entry.name)) walk(path, `${prefix}${entry.name}/`)
      } else if (kind === 'file' && !skippedFile(entry.name)) {
        out.push(`${prefix}${entry.name}`)
      }
    }
  }
  walk(dir, '')
  return out.sort()
}

/** What a symbolic link points at: a file, a folder, or nothing that is either (undefined). */
function linkKind(path: string): 'file' | 'dir' | undefined {
  try {
    const stat = statSync(path)
    return stat.isDirectory() ? 'dir' : stat.isFile() ? 'file' : undefined
  } catch {
    return undefined
  }
}

/**
 * `sha256:` and 32 hex digits over each file's path (relative to the plugin folder, `../` for a file
 * outside it) and the SHA-256 of its bytes, in path order, then each imported package's name and
 * version: a renamed, added, removed or edited file, or another version of a package, changes it; the
 * folder's location and file times do not. `entry` is the module the plugin is loaded from (found in
 * the folder as the catalogue finds it when not given).
 *
 * A plugin that has an entry but that esbuild cannot bundle (a syntax error) fails closed: its hash is
 * `unhashable:` and a random nonce, new at each call, so it never equals a recorded or locked hash;
 * {@link unhashableReason} gives esbuild's error for it.
 * @example pluginHash('plugins/policy-rules') // 'sha256:3f1c…'
 */
export function pluginHash(dir: string, entry: string | undefined = entryOf(dir)): string {
  if (!entry) return hashOfCode(dir, undefined, (file) => readFileSync(file))
  let code = recalledCode(dir, entry)
  if (!code) {
    try {
      code = bundleCode(dir, entry)
    } catch (error) {
      return unhashable(entry, error)
    }
    rememberCode(dir, entry, code)
  }
  return hashOfCode(dir, code, (file) => readFileSync(file))
}

/** {@link pluginHash}, bundling in esbuild's own process: an app hashes its plugins side by side while it imports them. */
export async function pluginHashAsync(dir: string, entry: string | undefined = entryOf(dir)): Promise<string> {
  if (!entry) return hashOfCode(dir, undefined, (file) => readFileSync(file))
  let code = recalledCode(dir, entry)
  if (!code) {
    try {
      code = await bundleCodeAsync(dir, entry)
    } catch (error) {
      return unhashable(entry, error)
    }
    rememberCode(dir, entry, code)
  }
  return hashOfCode(dir, code, (file) => readFileSync(file))
}

/** The prefix of the hash of a plugin that cannot be bundled (see {@link pluginHash}). */
export const unhashablePrefix = 'unhashable:'

/** Why each unhashable hash handed out this process could not be computed. */
const reasons = new Map<string, string>()

function unhashable(entry: string, error: unknown): string {
  const hash = unhashablePrefix + randomBytes(8).toString('hex')
  const what = error instanceof BundleError ? error.errors.slice(0, 5).join('; ') : String((error as Error)?.message ?? error)
  reasons.set(
    hash,
    `esbuild cannot bundle it from ${entry} (${what}), so its content hash cannot cover the code it runs; fix that error (npx esbuild --bundle --packages=external ${entry} shows it) and try again`,
  )
  return hash
}

/**
 * Why `hash` is not a content hash, when it is one {@link pluginHash} handed out for a plugin it could not
 * bundle (undefined for a real hash): esbuild's error and how to fix it, for a message.
 */
export function unhashableReason(hash: string): string | undefined {
  if (!hash.startsWith(unhashablePrefix)) return undefined
  return reasons.get(hash) ?? 'esbuild could not bundle it, so its content hash cannot cover the code it runs'
}

/**
 * The hash of a plugin from what a build saw: `code` lists the bundle's files and imports (undefined:
 * the bundle is unknown), `read` gives a file's bytes (a hot-reload build hands in the bytes it
 * compiled, so the hash is of the code that runs even when a file changes after the build).
 */
export function hashOfCode(dir: string, code: PluginCode | undefined, read: (file: string) => string | Uint8Array): string {
  const sha = (bytes: string | Uint8Array) => createHash('sha256').update(bytes).digest('hex')
  const files = new Map<string, string>()
  for (const file of pluginFiles(dir)) files.set(file, sha(read(join(dir, file))))
  const whole = createHash('sha256')
  if (code) {
    // Every file the bundle includes, tests named or not: if the code imports it, it runs.
    for (const input of code.inputs) {
      const key = relative(dir, input).split(sep).join('/')
      if (!files.has(key)) files.set(key, sha(read(input)))
    }
  }
  for (const key of [...files.keys()].sort()) whole.update(`${key}\0${files.get(key)}\n`)
  if (!code) whole.update('bundle\0unavailable\n')
  else for (const line of packageLines(code)) whole.update(line)
  return 'sha256:' + whole.digest('hex').slice(0, 32)
}

/** One line per package the code imports (sorted, once each): `npm:name@version`, or that it did not resolve. */
function packageLines(code: PluginCode): string[] {
  const lines = new Set<string>()
  const seen = new Set<string>()
  for (const { importer, path } of code.imports) {
    const name = packageName(path)
    const from = dirname(importer)
    if (isHostPackage(name) || seen.has(`${name}\0${from}`)) continue
    seen.add(`${name}\0${from}`)
    const found = resolveImport(name, importer)
    if (!found.found) lines.add(`npm:${name}\0unresolved\n`)
    else if (!found.linked) lines.add(`npm:${name}@${found.version}\n`)
    // A workspace package changes without a new version: its files count too.
    else lines.add(`npm:${name}@${found.version}\0${hashOfCode(found.dir, { inputs: [], imports: [] }, (f) => readFileSync(f))}\n`)
  }
  return [...lines].sort()
}
