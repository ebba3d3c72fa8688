/**
 * @module host/plugin-hash
 * The content hash of a plugin folder: what a lock file pins next to the version, what `run/start`
 * records, and what a resumed run compares. One function, so the three always agree.
 *
 * The files that make up a plugin are the files that ship in it: every file under its folder, at any
 * depth, except the plugin's `test/` folder (its tests, the helpers they share and the fixture plugins
 * they load), and also names that start with `.`, `node_modules/`, `fixtures/`, `test/` and `tests/`
 * folders at any depth, test files (`*.test.*`, `*.spec.*`) and Markdown (`*.md`: README and CHANGELOG
 * do not change what runs). So the manifest, the code and any data the code reads (a `package.json`, a
 * JSON table) are in it, and editing a test never makes a resumed run report drift
 * (docs/reference/manifest.md#what-the-hash-covers). `cordage dev` ignores the same files when it watches.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

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

/** Relative paths (with `/`) of the files that make up the plugin in `dir`, sorted. */
export function pluginFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!skippedDir(entry.name)) walk(join(folder, entry.name), `${prefix}${entry.name}/`)
      } else if (entry.isFile() && !skippedFile(entry.name)) {
        out.push(`${prefix}${entry.name}`)
      }
    }
  }
  walk(dir, '')
  return out.sort()
}

/**
 * `sha256:` and 32 hex digits over each file's path and the SHA-256 of its bytes, in path order: a
 * renamed, added, removed or edited file changes it; the folder's location and file times do not.
 * @example pluginHash('plugins/policy-rules') // 'sha256:3f1c…'
 */
export function pluginHash(dir: string): string {
  const whole = createHash('sha256')
  for (const file of pluginFiles(dir)) {
    const content = createHash('sha256')
      .update(readFileSync(join(dir, file)))
      .digest('hex')
    whole.update(`${file}\0${content}\n`)
  }
  return 'sha256:' + whole.digest('hex').slice(0, 32)
}
