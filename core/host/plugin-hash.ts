/**
 * @module host/plugin-hash
 * The content hash of a plugin folder: what a lock file pins next to the version, what `run/start`
 * records, and what a resumed run compares. One function, so the three always agree.
 *
 * The files that make up a plugin are every file under its folder, at any depth, except: names that
 * start with `.`, `node_modules/`, `fixtures/`, `test/` and `tests/` folders, test files
 * (`*.test.*`, `*.spec.*`) and Markdown (`*.md`: README and CHANGELOG do not change what runs). So
 * the manifest, the code and any data the code reads (a `package.json`, a JSON table) are in it.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const skippedDirs = new Set(['node_modules', 'fixtures', 'test', 'tests'])

/** Relative paths (with `/`) of the files that make up the plugin in `dir`, sorted. */
export function pluginFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue
      if (entry.isDirectory()) {
        if (!skippedDirs.has(entry.name)) walk(join(folder, entry.name), `${prefix}${entry.name}/`)
      } else if (entry.isFile() && !/\.(test|spec)\.[cm]?[jt]sx?$/.test(entry.name) && !entry.name.endsWith('.md')) {
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
    const content = createHash('sha256').update(readFileSync(join(dir, file))).digest('hex')
    whole.update(`${file}\0${content}\n`)
  }
  return 'sha256:' + whole.digest('hex').slice(0, 32)
}
