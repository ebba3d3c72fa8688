/**
 * @module cli/out-path
 * A file a command was asked to write (`cordage artifact --out`, `cordage eval --out` / `--report`),
 * checked before the command does any work: an empty path, a folder, a path under a file, or a place
 * it may not write is a usage error naming the flag (exit 2), never a stack trace at the end, after a
 * whole eval suite has run. Folders the path needs that do not exist yet are made when it is written.
 */
import { accessSync, constants, mkdirSync, statSync, writeFileSync, type Stats } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { CordageError } from '../contracts/errors.ts'

/**
 * The absolute path to write `flag`'s file to.
 * @throws CordageError `invalid_input`, the message starting with the flag
 */
export function checkOutPath(flag: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw refuse(flag, 'an empty path; give the file to write')
  if (/[\\/]$/.test(value)) throw refuse(`${flag} ${value}`, `ends with a "/", which names a folder; give a file name in it`)
  const full = resolve(value)
  const own = statOf(full, flag, value)
  if (own?.isDirectory())
    throw refuse(`${flag} ${value}`, `${value} is a folder; give a file name in it (for example ${join(value, 'out')})`)
  if (own && !own.isFile()) throw refuse(`${flag} ${value}`, 'is not a regular file (a device, a socket or a pipe); give a file')
  // The nearest folder on the way that exists is where the missing ones are made: it must be a folder, and writable.
  let dir = dirname(full)
  for (;;) {
    const stat = statOf(dir, flag, value)
    if (stat) {
      if (!stat.isDirectory()) throw refuse(`${flag} ${value}`, `${dir} is a file, not a folder; give a path whose folders are folders`)
      break
    }
    if (dirname(dir) === dir) break
    dir = dirname(dir)
  }
  const target = own ? full : dir
  try {
    accessSync(target, constants.W_OK)
  } catch {
    throw refuse(`${flag} ${value}`, `${target} cannot be written by this user; give a path where it can`)
  }
  return full
}

/** Write a file checked by {@link checkOutPath}, making the folders it needs. */
export function writeOut(file: string, data: string | Uint8Array): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, data)
}

/** What is at `path`, or undefined when nothing is (a file on the way is found when the walk gets to it). */
function statOf(path: string, flag: string, value: string): Stats | undefined {
  try {
    return statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw refuse(`${flag} ${value}`, `${path} cannot be looked at (${code ?? (error as Error).message})`)
  }
}

function refuse(what: string, why: string): CordageError {
  return new CordageError('invalid_input', `${what}: ${why}`)
}
