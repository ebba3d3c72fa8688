/**
 * Paths the model gives, checked against the workspace. A path is relative to the workspace root; it
 * must stay inside it by its letters (no `..` out, not absolute) and by what it points at (the real path
 * of the file, or of its nearest existing folder, after symbolic links). `.cordage/` at the root is the
 * harness's own (the edit journal) and is off limits to the model.
 */
import { lstat, realpath } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { CordageError } from 'cordage'

/** The folder at the workspace root that belongs to the harness, not to the project. */
export const ReservedDir = '.cordage'

export interface InsidePath {
  /** As the model should see it: relative to the root, with `/`. */
  shown: string
  /** Absolute path, inside the real root, without following a final symbolic link. */
  path: string
  /** Absolute path with every symbolic link resolved: what reading or writing actually touches. */
  real: string
  exists: boolean
}

/** `given` (relative to `root`), checked; CordageError `tool_failed` saying why when it is not inside. */
export async function resolveInside(root: string, given: string): Promise<InsidePath> {
  if (given.includes('\0')) refuse(given, 'contains a NUL character')
  if (isAbsolute(given)) refuse(given, 'is absolute; give a path relative to the workspace root')
  const rootReal = await realpath(root)
  const path = resolve(rootReal, given)
  const rel = relative(rootReal, path)
  if (leaves(rel)) refuse(given, 'is outside the workspace')
  if (reserved(rel)) refuse(given, `is in ${ReservedDir}/, which belongs to the harness`)
  const existing = await nearestExisting(path)
  let real: string
  try {
    real = await realpath(existing)
  } catch {
    refuse(given, 'is a symbolic link to nothing')
  }
  const realRel = relative(rootReal, real)
  if (leaves(realRel)) refuse(given, 'leads outside the workspace through a symbolic link')
  if (reserved(realRel)) refuse(given, `leads into ${ReservedDir}/ through a symbolic link`)
  // When the path does not exist yet, what gets created is the rest of it under its nearest real folder.
  const exists = existing === path
  return { shown: rel.split(sep).join('/') || '.', path, real: exists ? real : resolve(real, relative(existing, path)), exists }
}

/** The workspace root with its symbolic links resolved: walks and paths shown to the model start here. */
export async function realRoot(dir: Promise<string>): Promise<string> {
  return realpath(await dir)
}

function leaves(rel: string): boolean {
  return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)
}

function reserved(rel: string): boolean {
  return rel.split(sep)[0] === ReservedDir
}

/** The path itself when it exists (a link counts, even a dangling one), else its nearest existing folder. */
async function nearestExisting(path: string): Promise<string> {
  for (let current = path; ; current = dirname(current)) {
    try {
      await lstat(current)
      return current
    } catch {
      if (dirname(current) === current) return current
    }
  }
}

function refuse(given: string, why: string): never {
  throw new CordageError('tool_failed', `path ${JSON.stringify(given)} ${why}`)
}
