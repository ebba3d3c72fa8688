/**
 * @module host/plugin-code-cache
 * What esbuild found a plugin's bundle includes (host/plugin-code.ts), kept on disk so that the next
 * `cordage` command hashes the plugin without starting esbuild. Measured on the 2-core machine
 * (2026-12-07): loading esbuild and bundling a preset's plugins cost a `cordage run` about 0.1 CPU-s
 * of its 0.85.
 *
 * Why reusing it cannot hide a change (docs/reference/hashes.md#the-bundle-cache):
 * - the hash is still computed from the bytes of every file, read again each time (host/plugin-hash.ts);
 *   only the list of files outside the folder and of package imports is reused;
 * - that list is reused only while every file it came from has the same SHA-256 as when it was made,
 *   so an edited import (a new helper, another package) is seen; package versions are resolved again
 *   each time;
 * - only a bundle whose every local import names its file exactly (`./rules.ts`, not `./rules` or an
 *   alias) is kept: a file created later cannot then change what an import resolves to. Any other
 *   plugin is bundled each time, as before;
 * - a record that is unreadable, of another format, for another folder or esbuild version is ignored.
 * `CORDAGE_CACHE_DIR` moves the cache (default `$XDG_CACHE_HOME/cordage`, else `~/.cache/cordage`);
 * `CORDAGE_CACHE_DIR=off` turns it off.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import type { PluginCode } from './plugin-code.ts'

/** Bumped whenever what a record holds, or how host/plugin-code.ts reads a bundle, changes. */
const Format = 1

interface Record {
  format: number
  dir: string
  entry: string
  esbuild: string
  /** Each file the bundle included, with the SHA-256 of its bytes then. */
  inputs: [file: string, sha: string][]
  imports: PluginCode['imports']
}

/** The folder records go in, or undefined when the cache is off. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const set = env.CORDAGE_CACHE_DIR
  if (set === 'off') return undefined
  if (set) return join(set, 'plugin-code')
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache')
  return join(base, 'cordage', 'plugin-code')
}

let esbuildVersion: string | undefined
function esbuild(): string {
  esbuildVersion ??= String(JSON.parse(readFileSync(createRequire(import.meta.url).resolve('esbuild/package.json'), 'utf8')).version)
  return esbuildVersion
}

const sha256 = (bytes: string | Uint8Array) => createHash('sha256').update(bytes).digest('hex')

function recordFile(folder: string, dir: string, entry: string): string {
  return join(folder, `${sha256(`${Format}\0${dir}\0${entry}`).slice(0, 32)}.json`)
}

/**
 * The code recorded for the plugin in `dir` bundled from `entry`, when every file it lists still has
 * the bytes it had; undefined otherwise (then bundle, and {@link rememberCode}).
 */
export function recalledCode(dir: string, entry: string): PluginCode | undefined {
  const folder = cacheDir()
  if (!folder) return undefined
  let record: unknown
  try {
    record = JSON.parse(readFileSync(recordFile(folder, dir, entry), 'utf8'))
  } catch {
    return undefined
  }
  if (!isRecord(record) || record.format !== Format || record.dir !== dir || record.entry !== entry || record.esbuild !== esbuild())
    return undefined
  for (const [file, sha] of record.inputs) {
    try {
      if (sha256(readFileSync(file)) !== sha) return undefined
    } catch {
      return undefined
    }
  }
  return { inputs: record.inputs.map(([file]) => file), imports: record.imports }
}

/** Keep `code` for {@link recalledCode}, when it may be (see the module's notes); never fails the caller. */
export function rememberCode(dir: string, entry: string, code: PluginCode): void {
  const folder = cacheDir()
  if (!folder || !code.exact) return
  try {
    const record: Record = {
      format: Format,
      dir,
      entry,
      esbuild: esbuild(),
      inputs: code.inputs.map((file) => [file, sha256(readFileSync(file))]),
      imports: code.imports,
    }
    mkdirSync(folder, { recursive: true })
    const file = recordFile(folder, dir, entry)
    // Written whole, then renamed over: a command reading it at the same time sees the old or the new.
    const temp = `${file}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify(record))
    renameSync(temp, file)
  } catch {
    // A cache that cannot be written (read-only home, full disk) only costs the next command a bundle.
  }
}

/** A record as {@link rememberCode} writes it: absolute paths, and imports only from the files it lists. */
function isRecord(value: unknown): value is Record {
  if (typeof value !== 'object' || value === null) return false
  const r = value as Partial<Record>
  if (typeof r.format !== 'number' || typeof r.dir !== 'string' || typeof r.entry !== 'string' || typeof r.esbuild !== 'string')
    return false
  if (!Array.isArray(r.inputs) || !Array.isArray(r.imports)) return false
  const files = new Set<string>()
  for (const input of r.inputs as unknown[]) {
    if (
      !Array.isArray(input) ||
      input.length !== 2 ||
      typeof input[0] !== 'string' ||
      typeof input[1] !== 'string' ||
      !isAbsolute(input[0])
    )
      return false
    files.add(input[0])
  }
  return (r.imports as unknown[]).every((i) => {
    const { importer, path } = (i ?? {}) as { importer?: unknown; path?: unknown }
    return typeof importer === 'string' && typeof path === 'string' && files.has(importer)
  })
}
