/**
 * @module paths
 * Paths a model gives a tool, held inside a root folder (the run's workspace) and, under a constrained
 * allow, inside its `pathPrefix` (issue 29). One helper for every tool that reads or writes files, so
 * the rule is written, and tested, once:
 *
 * - the path is relative to the root; absolute paths, NUL bytes and `..` that climbs out are refused;
 * - it is compared by path SEGMENTS, never as text (`src` does not cover `src-evil/` nor `srcfoo.txt`);
 * - it must hold twice: for the path as given (after `.` and `..` are folded) and for the file it
 *   actually leads to, the real path of its deepest existing component (every symbolic link followed)
 *   plus the part that does not exist yet, which is what a write then creates;
 * - reading and writing go through {@link readFileWithin} and {@link writeFileWithin}, which never
 *   follow a final link that appeared after the check and check the folder again once the file is open.
 *
 * Case and Unicode forms. The prefix is an allow list, so its comparison is EXACT: no case folding, no
 * NFC/NFD normalisation. A path that matches the prefix exactly lies in the folder the prefix names on
 * every file system, case-sensitive or not, normalising or not, because the real part comes from the
 * operating system and the rest is created under it. A spelling the file system would take for the
 * same folder (`SRC/x` on a case-insensitive disk, the decomposed `é`) is refused: a false refusal,
 * never a false allow. The reserved names (the harness's own `.cordage/`) are a deny list, so there it
 * is the other way round: they are compared case-folded and NFC-normalised, so `.CORDAGE/` is refused
 * too on a disk where it is the same folder.
 */
import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { lstat, mkdir, open, realpath, rename, unlink, type FileHandle } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { CordageError } from '../contracts/errors.ts'

export interface PathWithinOptions {
  /**
   * A constrained allow's `pathPrefix` (`io.constraints.pathPrefix`): a folder or a file, relative to
   * the root (`src`, `src/`, `./src` are one folder). The path must be it or lie under it.
   */
  prefix?: string
  /** Names at the top of the root kept for the caller (`.cordage`): refused, as given and through links. */
  reserved?: readonly string[]
}

export interface PathWithin {
  /** Relative to the root, with `/`, `.` and `..` folded: as the model should see it. */
  shown: string
  /** Absolute, under the real root, no link followed. */
  path: string
  /** Absolute, every symbolic link resolved: the file that reading or writing touches. */
  real: string
  /** The real root. */
  root: string
  exists: boolean
}

/**
 * `given` resolved inside `root` (and inside `options.prefix`), or CordageError `tool_failed` saying
 * why not: a sentence the model can act on, naming the path and the rule it broke.
 */
export async function resolvePathWithin(root: string, given: string, options: PathWithinOptions = {}): Promise<PathWithin> {
  if (typeof given !== 'string' || given.length === 0) refuse(String(given), 'is empty; give a path relative to the workspace root')
  if (given.includes('\0')) refuse(given, 'contains a NUL character')
  if (isAbsolute(given)) refuse(given, 'is absolute; give a path relative to the workspace root')
  const rootReal = await realpath(root)
  const prefix = options.prefix === undefined ? undefined : prefixPath(rootReal, options.prefix)
  const path = resolve(rootReal, given)
  if (!isPathWithin(rootReal, path)) refuse(given, 'is outside the workspace')
  const shown = show(rootReal, path)
  const hidden = reservedIn(rootReal, path, options.reserved)
  if (hidden) refuse(given, `is in ${hidden}/, which belongs to the harness`)
  if (prefix && !isPathWithin(prefix.path, path)) refuse(given, outsidePrefix(prefix.given, prefix.shown))
  const existing = await deepestExisting(path, given)
  let existingReal: string
  try {
    existingReal = await realpath(existing)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') refuse(given, 'is a symbolic link to nothing')
    if (code === 'ELOOP') refuse(given, 'is a loop of symbolic links')
    refuse(given, `cannot be resolved (${code ?? (error as Error).message})`)
  }
  const exists = existing === path
  const real = exists ? existingReal : join(existingReal, relative(existing, path))
  if (!isPathWithin(rootReal, real)) refuse(given, 'leads outside the workspace through a symbolic link')
  const hiddenReal = reservedIn(rootReal, real, options.reserved)
  if (hiddenReal) refuse(given, `leads into ${hiddenReal}/ through a symbolic link`)
  if (prefix && !isPathWithin(prefix.path, real)) refuse(given, outsidePrefix(prefix.given, prefix.shown, show(rootReal, real)))
  return { shown, path, real, root: rootReal, exists }
}

/**
 * Whether `child` is `parent` or lies under it, by whole path segments compared exactly (both are
 * resolved first, so `.` and `..` are folded; no link is followed: give real paths for real answers).
 */
export function isPathWithin(parent: string, child: string): boolean {
  const outer = segments(parent)
  const inner = segments(child)
  return outer.length <= inner.length && outer.every((segment, i) => segment === inner[i])
}

/**
 * The text of a file found by {@link resolvePathWithin}, or undefined when it does not exist. A final
 * symbolic link that appeared since the check is not followed (O_NOFOLLOW), and the folder is checked
 * again once the file is open: a folder swapped for a link in between is refused, not read through.
 */
export async function readFileWithin(target: PathWithin): Promise<string | undefined> {
  let handle: FileHandle
  try {
    handle = await open(target.real, constants.O_RDONLY | NoFollow)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') refuse(target.shown, 'became a symbolic link after it was checked; nothing was read')
    throw error
  }
  try {
    await sameFile(target.real, await handle.stat(), target.shown, 'read')
    await unchanged(dirname(target.real), target.shown, 'read')
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}

/**
 * Write `content` to a file found by {@link resolvePathWithin}, whole or not at all: through a new
 * temporary file beside it (created exclusively, never through a link) that is renamed over it. The
 * folders that are missing are created first; then the folder is checked again, so one swapped for a
 * link since the check is refused, and the rename replaces a final link itself, never its target. An
 * existing file keeps its permission bits.
 */
export async function writeFileWithin(target: PathWithin, content: string | Uint8Array): Promise<void> {
  if ((await lstat(target.real).catch(() => undefined))?.isDirectory()) refuse(target.shown, 'is a folder; give the path of a file')
  const folder = dirname(target.real)
  await mkdir(folder, { recursive: true })
  await unchanged(folder, target.shown, 'written')
  const temporary = join(folder, `.${basename(target.real)}.tmp-${randomBytes(6).toString('hex')}`)
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NoFollow, 0o666)
  let opened: Stats | undefined
  let closed = false
  try {
    opened = await handle.stat()
    await sameFile(temporary, opened, target.shown, 'written')
    await unchanged(folder, target.shown, 'written')
    const before = await lstat(target.real).catch(() => undefined)
    // Not the set-id bits: a file the model writes must not become a privileged program.
    if (before?.isFile()) await handle.chmod(before.mode & 0o777)
    await handle.writeFile(content)
    closed = true
    await handle.close()
    await rename(temporary, target.real)
  } catch (error) {
    if (!closed) await handle.close().catch(() => {})
    // Remove only the file this call made: after a swap the name may lead elsewhere.
    const now = await lstat(temporary).catch(() => undefined)
    if (opened && now && now.ino === opened.ino && now.dev === opened.dev) await unlink(temporary).catch(() => {})
    throw error
  }
}

/** O_NOFOLLOW where the platform has it (not on Windows, where the re-checks stand alone). */
const NoFollow = constants.O_NOFOLLOW ?? 0

function segments(path: string): string[] {
  return resolve(path).split(sep).filter(Boolean)
}

function show(root: string, path: string): string {
  return relative(root, path).split(sep).join('/') || '.'
}

function prefixPath(root: string, given: string): { given: string; path: string; shown: string } {
  // The kernel refuses such a prefix in the decision already (core/contracts/checks/constraints.ts); it
  // is refused here again for a tool called outside a run's loop (a test, an embedding's own loop).
  if (typeof given !== 'string' || given.length === 0 || given.includes('\0') || isAbsolute(given) || given.split(/[\\/]/).includes('..'))
    throw new CordageError(
      'tool_failed',
      `pathPrefix ${JSON.stringify(given)} is not a path relative to the workspace root without ".."; the policy rule must name a folder such as "src/"; nothing was touched`,
    )
  const path = resolve(root, given)
  return { given, path, shown: show(root, path) }
}

function outsidePrefix(given: string, shown: string, via?: string): string {
  const link = via === undefined ? '' : ` (it leads to ${via} through a symbolic link)`
  return `is outside pathPrefix ${JSON.stringify(given)}${link}: policy allows this call only within ${shown}, by whole path segments after symbolic links; nothing was touched`
}

/** The reserved name `path` is in, at the top of `root`; compared case-folded and NFC (a deny list). */
function reservedIn(root: string, path: string, reserved: readonly string[] | undefined): string | undefined {
  if (!reserved?.length) return undefined
  const [first] = segments(path).slice(segments(root).length)
  if (first === undefined) return undefined
  const fold = (name: string) => name.normalize('NFC').toLowerCase()
  return reserved.find((name) => fold(name) === fold(first))
}

/** The path itself when it exists (a link counts, even a dangling one), else its deepest existing ancestor. */
async function deepestExisting(path: string, given: string): Promise<string> {
  for (let current = path; ; current = dirname(current)) {
    try {
      await lstat(current)
      return current
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // Missing, or under a file: look further up. Anything else (no permission) is not guessed past.
      if (code === 'ELOOP') refuse(given, 'is a loop of symbolic links')
      if (code !== 'ENOENT' && code !== 'ENOTDIR') refuse(given, `cannot be checked (${code})`)
      if (dirname(current) === current) return current
    }
  }
}

/** The folder still is what was checked: its real path is itself (no link was swapped into it since). */
async function unchanged(folder: string, shown: string, done: 'read' | 'written'): Promise<void> {
  const now = await realpath(folder).catch(() => undefined)
  if (now !== folder) refuse(shown, `changed (a folder of it became a symbolic link) after it was checked; nothing was ${done}`)
}

/** The open file is the one at `path`, not a link that replaced it in between. */
async function sameFile(path: string, opened: Stats, shown: string, done: 'read' | 'written'): Promise<void> {
  const named = await lstat(path).catch(() => undefined)
  if (!named || named.ino !== opened.ino || named.dev !== opened.dev) refuse(shown, `changed after it was checked; nothing was ${done}`)
}

function refuse(given: string, why: string): never {
  throw new CordageError('tool_failed', `path ${JSON.stringify(given)} ${why}`)
}
